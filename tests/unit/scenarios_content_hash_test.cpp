// scenarios_content_hash_test.cpp — the SHA-256 a --model file is named by: FIPS 180-4's test
// vectors (one block, the two-block padding case, a million 'a's) and `sha256sum` on odd lengths.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "scenarios/content_hash.h"

namespace ddpbench::scenarios {
namespace {

TEST(ContentHash, Sha256TestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(ContentHash, AgreesWithSha256sumAroundTheBlockEdges) {
  for (const size_t length : {55, 56, 63, 64, 65, 119, 120, 128, 1001}) {
    std::string bytes(length, '\0');
    for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<char>(i * 7 + 3);
    const std::string file = ::testing::TempDir() + "/ddpbench-hash-" + std::to_string(length);
    FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    FILE* p = popen(("sha256sum " + file).c_str(), "r");
    ASSERT_NE(p, nullptr);
    char hex[65] = {};
    ASSERT_EQ(std::fread(hex, 1, 64, p), 64u);
    pclose(p);
    std::remove(file.c_str());
    EXPECT_EQ(sha256_hex(bytes), std::string(hex)) << length << " bytes";
  }
}

}  // namespace
}  // namespace ddpbench::scenarios

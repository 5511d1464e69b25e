// data_loaders_test.cpp — the CIFAR-10 binary and IDX (gz) loaders on small files written here,
// including corrupt ones: every failure must be an InputError that names the file and the problem.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "data/cifar10_binary.h"
#include "data/idx_images.h"
#include "errors.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"

namespace ddpbench::data {
namespace {
namespace fs = std::filesystem;

class LoaderTest : public testing::TempDirTest {
 protected:
  void write_file(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }

  void write_gz(const std::string& name, const std::vector<uint8_t>& bytes) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  }

  // CIFAR records: label, then pixel value (record * 7 + byte) % 256 so misplaced bytes show.
  static std::vector<uint8_t> cifar_records(int records, int first_label) {
    std::vector<uint8_t> b;
    for (int r = 0; r < records; ++r) {
      b.push_back(static_cast<uint8_t>((first_label + r) % 10));
      for (int p = 0; p < 3072; ++p) b.push_back(static_cast<uint8_t>((r * 7 + p) % 256));
    }
    return b;
  }

  static std::vector<uint8_t> idx_header(uint32_t magic, std::vector<uint32_t> dims) {
    std::vector<uint8_t> b;
    auto put = [&b](uint32_t v) {
      for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
    };
    put(magic);
    for (uint32_t d : dims) put(d);
    return b;
  }

  std::string error_of(const std::function<void()>& f) const {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(LoaderTest, Cifar10ReadsRecordsInFileOrder) {
  write_file("data_batch_1.bin", cifar_records(3, 0));
  write_file("data_batch_2.bin", cifar_records(2, 5));
  const InMemoryImages imgs = load_cifar10_binary(tmp_, Cifar10Split::kTrain);
  ASSERT_EQ(imgs.size(), 5);
  std::vector<uint8_t> px(3072);
  EXPECT_EQ(imgs.read(0, px.data()), 0);
  EXPECT_EQ(px[1], 1);
  EXPECT_EQ(imgs.read(3, px.data()), 5);  // first record of data_batch_2
  EXPECT_EQ(px[0], 0);
  EXPECT_EQ(imgs.read(4, px.data()), 6);
  EXPECT_EQ(px[0], 7);
}

TEST_F(LoaderTest, Cifar10TruncatedFileIsNamed) {
  auto bytes = cifar_records(2, 0);
  bytes.resize(bytes.size() - 10);
  write_file("data_batch_1.bin", bytes);
  const std::string msg = error_of([&] { load_cifar10_binary(tmp_, Cifar10Split::kTrain); });
  EXPECT_NE(msg.find("data_batch_1.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a whole number"), std::string::npos) << msg;
}

TEST_F(LoaderTest, Cifar10BadLabelIsNamed) {
  auto bytes = cifar_records(2, 0);
  bytes[3073] = 42;
  write_file("data_batch_1.bin", bytes);
  const std::string msg = error_of([&] { load_cifar10_binary(tmp_, Cifar10Split::kTrain); });
  EXPECT_NE(msg.find("record 1 has label 42"), std::string::npos) << msg;
}

TEST_F(LoaderTest, Cifar10MissingFilesAndDirectory) {
  EXPECT_NE(error_of([&] { load_cifar10_binary(tmp_, Cifar10Split::kTrain); }).find("data_batch"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              load_cifar10_binary(tmp_ + "/nope", Cifar10Split::kTrain);
            }).find("not a directory"),
            std::string::npos);
}

TEST_F(LoaderTest, IdxGzRoundTrip) {
  auto img = idx_header(0x803, {3, 2, 2});
  for (uint8_t v = 0; v < 12; ++v) img.push_back(v * 10);
  auto lab = idx_header(0x801, {3});
  lab.insert(lab.end(), {9, 0, 4});
  write_gz("img.gz", img);
  write_gz("lab.gz", lab);
  const InMemoryImages imgs = load_idx_images(path("img.gz"), path("lab.gz"));
  ASSERT_EQ(imgs.size(), 3);
  EXPECT_EQ(imgs.shape().height, 2);
  std::vector<uint8_t> px(4);
  EXPECT_EQ(imgs.read(2, px.data()), 4);
  EXPECT_EQ(px, (std::vector<uint8_t>{80, 90, 100, 110}));
  // Uncompressed IDX files load too.
  write_file("img.raw", img);
  write_file("lab.raw", lab);
  EXPECT_EQ(load_idx_images(path("img.raw"), path("lab.raw")).size(), 3);
}

TEST_F(LoaderTest, IdxCorruptFilesAreNamed) {
  auto img = idx_header(0x803, {2, 2, 2});
  img.insert(img.end(), 8, 1);
  auto lab = idx_header(0x801, {2});
  lab.insert(lab.end(), {1, 2});

  auto truncated = img;
  truncated.resize(truncated.size() - 3);
  write_gz("trunc.gz", truncated);
  write_gz("lab.gz", lab);
  std::string msg = error_of([&] { load_idx_images(path("trunc.gz"), path("lab.gz")); });
  EXPECT_NE(msg.find("trunc.gz"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;

  write_gz("img.gz", img);
  write_gz("magic.gz", idx_header(0x999, {2}));
  msg = error_of([&] { load_idx_images(path("img.gz"), path("magic.gz")); });
  EXPECT_NE(msg.find("magic"), std::string::npos) << msg;

  auto bad_label = lab;
  bad_label.back() = 10;
  write_gz("badlab.gz", bad_label);
  msg = error_of([&] { load_idx_images(path("img.gz"), path("badlab.gz")); });
  EXPECT_NE(msg.find("label 10"), std::string::npos) << msg;

  auto three = idx_header(0x801, {3});
  three.insert(three.end(), {1, 2, 3});
  write_gz("three.gz", three);
  msg = error_of([&] { load_idx_images(path("img.gz"), path("three.gz")); });
  EXPECT_NE(msg.find("3 labels"), std::string::npos) << msg;

  msg = error_of([&] { load_idx_images(path("missing.gz"), path("lab.gz")); });
  EXPECT_NE(msg.find("missing.gz: file not found"), std::string::npos) << msg;

  write_file("garbage.gz", {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef});
  EXPECT_NE(error_of([&] { load_idx_images(path("garbage.gz"), path("lab.gz")); }), "");
}

// Issue 21 item 10: a small .gz with a valid header and gigabytes of trailing zeros was inflated
// whole (2.2 GB peak for 1 GiB of zeros, bad_alloc for 4 GiB) before "trailing data". The loader
// must stop one byte past the payload the header promises: peak memory stays far below the zeros.
TEST_F(LoaderTest, IdxTrailingDataIsRefusedWithoutInflatingIt) {
  auto img = idx_header(0x803, {2, 2, 2});
  img.insert(img.end(), 8, 1);
  constexpr size_t kZeros = size_t{512} << 20;
  {
    gzFile f = gzopen(path("bomb.gz").c_str(), "wb9");
    gzwrite(f, img.data(), static_cast<unsigned>(img.size()));
    const std::vector<uint8_t> zeros(size_t{1} << 20, 0);
    for (size_t written = 0; written < kZeros; written += zeros.size()) {
      gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size()));
    }
    gzclose(f);
  }
  auto lab = idx_header(0x801, {2});
  lab.insert(lab.end(), {1, 2});
  write_gz("lab.gz", lab);
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const std::string msg = error_of([&] { load_idx_images(path("bomb.gz"), path("lab.gz")); });
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_NE(msg.find("trailing data"), std::string::npos) << msg;
  const long grew_kib = after.ru_maxrss - before.ru_maxrss;
  EXPECT_LT(grew_kib, 64 * 1024) << "peak memory grew by " << grew_kib << " KiB";
}

TEST(FashionMnistFiles, RealDatasetLoadsWhenInstalled) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  const InMemoryImages imgs =
      load_idx_images(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(imgs.size(), 10000);
  EXPECT_EQ(imgs.shape().numel(), 784);
}

}  // namespace
}  // namespace ddpbench::data

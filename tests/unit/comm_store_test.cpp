// comm_store_test.cpp — the store carries small messages only, on every libtorch: a value over
// PyTorch 2.x's 8 MiB TCPStore limit is refused here too (naming the key and the way out), so a
// run that would push bulk data through it fails on 1.13 the way it would on 2.x.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "comm/store.h"

namespace ddpbench::comm {
namespace {

TEST(Store, CarriesSmallValuesAndRefusesBulkData) {
  auto server = Store::serve("127.0.0.1", 0, std::chrono::seconds(10));
  auto client = Store::connect("127.0.0.1", server->port(), std::chrono::seconds(10));
  const std::string limit(Store::kMaxValueBytes, 'x');
  client->set("ok", limit);
  EXPECT_EQ(server->get("ok").size(), Store::kMaxValueBytes);
  try {
    client->set("ddpbench/result", limit + "y");
    ADD_FAILURE() << "a value over the limit was accepted";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("ddpbench/result"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("collective"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(server->check("ddpbench/result"));
}

// Issue 21 item 6: c10d's FileStore creates its file at the first write and a read before it waits
// the whole timeout for the file. A launcher whose workers all died before writing sat out
// --timeout in its first check(), then failed with "open(.../store): No such file or directory".
TEST(Store, AFreshFileStoreAnswersAtOnce) {
  const std::string path = ::testing::TempDir() + "/fresh_file_store";
  std::remove(path.c_str());
  auto store = Store::open_file(path, std::chrono::seconds(30));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(store->check("ddpbench/progress/0"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ddpbench::comm

// comm_store_test.cpp — the store carries small messages only, on every libtorch: a value over
// PyTorch 2.x's 8 MiB TCPStore limit is refused here too (naming the key and the way out), so a
// run that would push bulk data through it fails on 1.13 the way it would on 2.x.
#include <gtest/gtest.h>

#include <chrono>
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

}  // namespace
}  // namespace ddpbench::comm

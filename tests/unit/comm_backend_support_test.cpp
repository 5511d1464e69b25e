// comm_backend_support_test.cpp — the backend table (comm/backend_support.h) is what every check
// derives from: each row parses back from its name, and each refusal it drives can say no.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "comm/backend_support.h"
#include "errors.h"

namespace ddpbench::comm {
namespace {

std::string refusal(Backend backend, const BackendSituation& situation) {
  try {
    require_usable_backend(backend, situation);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BackendTable, EveryRowParsesBackFromItsNameAndNamesAreUnique) {
  std::set<std::string> names;
  for (const BackendTraits& t : backend_table()) {
    EXPECT_EQ(parse_backend(t.name), t.backend);
    EXPECT_STREQ(backend_name(t.backend), t.name);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_TRUE(t.host_memory || t.device_memory) << t.name << " sums nowhere";
  }
  EXPECT_EQ(backend_names(), "gloo, shm, mpi, nccl");
  EXPECT_EQ(require_known_backend(""), default_backend());
  EXPECT_FALSE(parse_backend("Gloo"));
  try {
    require_known_backend("ucc");
    ADD_FAILURE() << "ucc was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("known backends are gloo, shm, mpi, nccl"),
              std::string::npos);
  }
}

TEST(BackendTable, RefusesWhatASituationCannotRun) {
  EXPECT_NE(refusal(Backend::kMpi, {0, /*under_mpirun=*/false}).find("mpirun"), std::string::npos);
  EXPECT_EQ(refusal(Backend::kMpi, {0, /*under_mpirun=*/true}), "");
  EXPECT_NE(refusal(Backend::kNccl, {0, false}).find("needs a CUDA device"), std::string::npos);
  EXPECT_EQ(refusal(Backend::kNccl, {1, false}), "");
  EXPECT_EQ(refusal(Backend::kGloo, {0, false}), "");
}

TEST(BackendTable, SumsWhatEachBackendCanSum) {
  EXPECT_FALSE(supports_sum(Backend::kGloo, at::kBFloat16));
  EXPECT_TRUE(supports_sum(Backend::kMpi, at::kBFloat16));
  for (const BackendTraits& t : backend_table()) {
    EXPECT_TRUE(supports_sum(t.backend, at::kFloat)) << t.name;
    EXPECT_FALSE(supports_sum(t.backend, at::kBool)) << t.name;
  }
}

}  // namespace
}  // namespace ddpbench::comm

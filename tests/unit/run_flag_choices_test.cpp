// run_flag_choices_test.cpp — the flags whose choices come from an enum's table or array
// (requests/flag_choices.h: --backend, --ddp-impl, --comm-hook, --grad-check) are documented as the
// code takes them: every `[--flag a|b|c]` in docs/commands.md's command blocks lists exactly the
// choices, in the code's order (default first), and each choice parses back to itself.
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "comm/backend_support.h"
#include "modes/ddp/comm_hook.h"
#include "modes/ddp/distributed_model.h"
#include "requests/flag_choices.h"
#include "support/test_paths.h"

namespace ddpbench::run {
namespace {

std::string readme() {
  std::ifstream in(std::string(testing::kSourceDir) + "/docs/commands.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every "[--flag a|b|c]" of docs/commands.md, as written.
std::vector<std::string> listed(const std::string& text, const std::string& flag) {
  std::vector<std::string> out;
  const std::regex pattern("\\[" + flag + " ([a-z0-9_|]+)\\]");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

void expect_documented(const std::string& flag, const std::vector<std::string>& choices) {
  const std::vector<std::string> found = listed(readme(), flag);
  ASSERT_FALSE(found.empty()) << "docs/commands.md's command blocks do not show " << flag;
  for (const std::string& written : found) {
    EXPECT_EQ(written, fmt::format("{}", fmt::join(choices, "|"))) << flag;
  }
}

TEST(FlagChoices, TheCommandsPageListsWhatTheCodeTakes) {
  expect_documented("--backend", requests::backend_choices());
  expect_documented("--ddp-impl", requests::ddp_impl_choices());
  expect_documented("--comm-hook", requests::comm_hook_choices());
  expect_documented("--grad-check", requests::grad_check_choices());
}

TEST(FlagChoices, EveryChoiceParsesBackToItself) {
  for (const std::string& name : requests::backend_choices()) {
    const auto backend = comm::parse_backend(name);
    ASSERT_TRUE(backend.has_value()) << name;
    EXPECT_EQ(comm::backend_name(*backend), name);
  }
  for (const std::string& name : requests::ddp_impl_choices()) {
    EXPECT_EQ(modes::ddp::ddp_impl_name(modes::ddp::parse_ddp_impl(name)), name);
  }
  for (const std::string& name : requests::comm_hook_choices()) {
    EXPECT_EQ(modes::ddp::comm_hook_name(modes::ddp::parse_comm_hook(name)), name);
  }
  EXPECT_EQ(requests::backend_choices().front(), comm::backend_name(comm::default_backend()));
  EXPECT_EQ(requests::ddp_impl_choices().front(), "bucketed");
  EXPECT_EQ(requests::comm_hook_choices().front(), "allreduce");
  EXPECT_EQ(requests::grad_check_choices().front(), "auto");
  EXPECT_THROW(modes::ddp::parse_ddp_impl("warp"), std::exception);
  EXPECT_THROW(modes::ddp::parse_comm_hook("fp8"), std::exception);
}

}  // namespace
}  // namespace ddpbench::run

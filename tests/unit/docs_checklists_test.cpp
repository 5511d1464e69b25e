// docs_checklists_test.cpp — the rows of docs/ARCHITECTURE.md's "Adding things" checklists that a
// test can hold: whatever is added to a table in code must also be where a reader looks for it.
// Every check (Note [One row per check]) has a phase and its line in reports/SCHEMA.md; every
// backend is described in docs/launching.md; every mode is in docs/commands.md's `--modes` list,
// in the code's order; every built-in scenario has its row in docs/scenarios.md's table; every
// training fault the README or a page of docs/ shows parses; docs/faults.md's table is the fault
// rows; docs/ARCHITECTURE.md's Layout names every folder. (The flags whose choices come from an
// enum are held by run_flag_choices_test.cpp; links and the README's length by
// tests/docs/check_docs.py.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "comm/backend_support.h"
#include "errors.h"
#include "modes/common/fault_injection.h"
#include "modes/common/fault_table.h"
#include "modes/common/mode_kind.h"
#include "reports/run/record_enums.h"
#include "scenarios/registry.h"
#include "support/test_paths.h"
#include "training/rank_phases.h"

namespace ddpbench {
namespace {

std::string source_file(const std::string& path) {
  std::ifstream in(std::string(testing::kSourceDir) + "/" + path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DocsChecklists, EveryCheckHasItsRowAndItsSchemaLine) {
  const std::string schema = source_file("reports/SCHEMA.md");
  const auto names_at = schema.find("Check names:");
  ASSERT_NE(names_at, std::string::npos) << "reports/SCHEMA.md lost its 'Check names:' paragraph";
  const std::string check_names = schema.substr(names_at);
  for (const reports::StageSpec& spec : reports::kStageSpecs) {
    if (spec.stage == reports::Stage::kNone) continue;
    EXPECT_FALSE(spec.name.empty());
    EXPECT_FALSE(spec.phase.empty()) << spec.name;
    EXPECT_EQ(reports::parse_name<reports::Stage>(spec.name), spec.stage) << spec.name;
    EXPECT_NE(check_names.find("`" + std::string(spec.name) + "`"), std::string::npos)
        << "the check `" << spec.name << "` is not among reports/SCHEMA.md's check names";
  }
}

// The README and every page of docs/, one after the other.
std::string all_docs() {
  std::string text = source_file("README.md");
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(testing::kSourceDir) + "/docs")) {
    if (e.path().extension() == ".md") text += source_file("docs/" + e.path().filename().string());
  }
  return text;
}

TEST(DocsChecklists, EveryBackendIsDescribedInTheLaunchingPage) {
  const std::string page = source_file("docs/launching.md");
  for (const comm::BackendTraits& b : comm::backend_table()) {
    EXPECT_NE(std::string(b.help), "") << b.name;
    EXPECT_TRUE(std::regex_search(page, std::regex("`" + std::string(b.name) + "`\\s+\\(")))
        << "docs/launching.md's backend list does not describe `" << b.name << "` (...)";
  }
}

TEST(DocsChecklists, TheCommandsPageListsEveryModeInTheCodesOrder) {
  std::stringstream names(modes::known_mode_names());  // "single, dp, ddp, zero"
  std::string listed;
  for (std::string name; std::getline(names, name, ',');) {
    if (name.front() == ' ') name.erase(0, 1);
    EXPECT_TRUE(modes::parse_mode(name)) << name;
    listed += (listed.empty() ? "" : ",") + name;
  }
  EXPECT_NE(source_file("docs/commands.md").find("[--modes " + listed + "]"), std::string::npos)
      << "docs/commands.md's run command does not show [--modes " << listed << "]";
}

// Issue 52: a mode is its row (reports/run/record_enums.h), its folder and, when it runs one
// process per rank, its driver row (training/rank_phases.cpp); ARCHITECTURE.md's "A mode" names the
// files a new mode edits, at most five.
TEST(DocsChecklists, EveryPerRankModeHasItsDriverRowAndTheModeListHoldsFiveFiles) {
  for (const reports::ModeSpec& spec : reports::kModeSpecs) {
    EXPECT_EQ(training::has_rank_driver(spec.mode), spec.per_rank)
        << spec.name << ": a per-rank mode needs its row in kRankDrivers, and only such a mode";
  }
  const std::string doc = source_file("docs/ARCHITECTURE.md");
  const auto at = doc.find("- **A mode:**");
  ASSERT_NE(at, std::string::npos) << "ARCHITECTURE.md lost its \"A mode\" entry";
  const std::string entry = doc.substr(at, doc.find("\n- **", at + 1) - at);
  for (const char* file :
       {"reports/run/record_enums.h", "harness/CMakeLists.txt", "tests/layering/CMakeLists.txt",
        "training/rank_phases.cpp", "docs/commands.md"}) {
    EXPECT_NE(entry.find(file), std::string::npos) << "\"A mode\" does not name " << file;
  }
}

TEST(DocsChecklists, EveryBuiltinScenarioHasARowInTheScenariosPage) {
  const std::string page = source_file("docs/scenarios.md");
  for (const std::string& name : scenarios::builtin_registry().names()) {
    EXPECT_NE(page.find("\n| `" + name + "`"), std::string::npos)
        << "docs/scenarios.md's table has no row for `" << name << "`";
  }
}

// A user copies a fault from the docs: `syncbn:rank=1` was shown while the parser needed a step.
// Every backticked KIND:key=value,... with concrete values (not the syntax's R, S, E) is a
// training fault except `comm`'s corrupt.
TEST(DocsChecklists, EveryTrainingFaultTheDocsShowParses) {
  const std::string page = all_docs();
  const std::regex fault(
      "`(?:--inject-fault )?([a-z]+:[a-z]+=[a-z0-9_.+-]+(?:,[a-z]+=[a-z0-9_.+-]+)*)`");
  int shown = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), fault);
       it != std::sregex_iterator(); ++it) {
    const std::string text = (*it)[1];
    if (text.rfind("corrupt:", 0) == 0) continue;
    ++shown;
    EXPECT_NO_THROW(modes::parse_fault(text)) << "the docs show --inject-fault " << text;
  }
  EXPECT_GE(shown, 5) << "the docs' fault examples were not found";
}

// Issue 52: docs/faults.md's table is the fault rows (modes/common/fault_table.cpp), so a kind
// added, or a mode or need changed, is a page changed.
TEST(DocsChecklists, TheFaultPageTableIsTheFaultRows) {
  const std::string page = source_file("docs/faults.md");
  const std::string table = modes::fault_table_markdown();
  EXPECT_NE(page.find("\n" + table), std::string::npos)
      << "docs/faults.md should hold this table, as it is:\n"
      << table;
}

// Issue 52: the map's Layout names every folder of the product and its tests (`name` in
// backticks), so a folder added is a folder described.
TEST(DocsChecklists, TheMapsLayoutNamesEveryFolder) {
  const std::string page = source_file("docs/ARCHITECTURE.md");
  const auto at = page.find("## Layout");
  ASSERT_NE(at, std::string::npos) << "docs/ARCHITECTURE.md lost its Layout section";
  const std::string layout = page.substr(at, page.find("\n## ", at + 1) - at);
  namespace fs = std::filesystem;
  int folders = 0;
  for (const char* top : {"harness", "harness/modes", "harness/modes/ddp", "scenarios", "tests"}) {
    for (const auto& e : fs::directory_iterator(std::string(testing::kSourceDir) + "/" + top)) {
      if (!e.is_directory()) continue;
      const std::string name = e.path().filename().string();
      ++folders;
      EXPECT_NE(layout.find("`" + name + "`"), std::string::npos)
          << top << "/" << name << " is missing from docs/ARCHITECTURE.md's Layout section";
    }
  }
  EXPECT_GE(folders, 25);  // the walk found the folders at all
}

// Issue 75: the map left out 4 of 18 layers. Every folder of harness/ (a layer, one library each)
// and of harness/modes/ has its row in docs/ARCHITECTURE.md's layer table (`harness/X/`) and is
// named, as a word, in its include diagram.
TEST(DocsChecklists, TheMapDrawsEveryLayer) {
  const std::string doc = source_file("docs/ARCHITECTURE.md");
  const auto at = doc.find("## Who may include whom");
  ASSERT_NE(at, std::string::npos) << "docs/ARCHITECTURE.md lost its include diagram";
  const auto open = doc.find("```", at);
  const std::string diagram = doc.substr(open, doc.find("```", open + 3) - open);
  namespace fs = std::filesystem;
  int layers = 0;
  for (const char* top : {"harness", "harness/modes"}) {
    for (const auto& e : fs::directory_iterator(std::string(testing::kSourceDir) + "/" + top)) {
      const std::string name = e.path().filename().string();
      if (!e.is_directory() || name == "modes") continue;
      ++layers;
      const std::string folder = std::string(top) + "/" + name + "/";
      EXPECT_NE(doc.find("| `" + folder + "` |"), std::string::npos)
          << folder << " has no row in docs/ARCHITECTURE.md's layer table";
      EXPECT_TRUE(std::regex_search(diagram, std::regex("(^|[^a-z_])" + name + "([^a-z_]|$)")))
          << folder << " is not in docs/ARCHITECTURE.md's include diagram";
    }
  }
  EXPECT_GE(layers, 20);  // the walk found the layers at all
}

// The exit codes a user sees (errors.h) are each named where a user looks for them: the README's
// and docs/faults.md's "Exit codes" line, each code followed by what it means; 4, which only the
// ranks use among themselves, is not offered to users as a code of their own.
TEST(DocsChecklists, TheExitCodesAreTheCodes) {
  for (const char* path : {"README.md", "docs/faults.md"}) {
    const std::string page = source_file(path);
    const auto at = page.find("Exit codes:");
    ASSERT_NE(at, std::string::npos) << path << " lost its \"Exit codes:\" line";
    const std::string codes = page.substr(at, page.find("\n\n", at) - at);
    for (const int code : {kExitOk, kExitCheckFailed, kExitBadInput, kExitWorkerFailed}) {
      EXPECT_TRUE(
          std::regex_search(codes, std::regex("(:|·)\\s+" + std::to_string(code) + "\\s+[a-z]")))
          << path << "'s exit codes do not say what " << code << " means";
    }
    EXPECT_EQ(codes.find(" " + std::to_string(kExitPeerLost) + " "), std::string::npos)
        << path << " offers the ranks' internal exit code " << kExitPeerLost;
    EXPECT_NE(codes.find("128 + "), std::string::npos)
        << path << " does not say what a signal's stop exits with";
  }
}

}  // namespace
}  // namespace ddpbench

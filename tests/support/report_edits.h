// report_edits.h — an edited report.json must be refused, never rendered: each edit applied to a
// copy of a real run's report, `report` expected to exit 2 with one line naming what it names and
// to write nothing, and `gate` to refuse the first edit too (it reads through the same audited
// reader, output/report_file.h, so more gate processes, about 0.6 s each, would prove nothing
// more). Shared by the audit suites (report_audit_e2e_test, figures_audit_e2e_test).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_runner.h"

namespace ddpbench::testing {

struct ReportEdit {
  std::string what;
  std::function<void(nlohmann::json&)> apply;
  std::string named;  // what the refusal's line names
};

// `original`: a run's report.json; `scratch`: a folder the edited copies and renderings go to.
inline void expect_each_refused(const std::string& original, const std::vector<ReportEdit>& edits,
                                const std::string& scratch, bool gate_first = true) {
  const nlohmann::json doc = read_json(original);
  for (const ReportEdit& e : edits) {
    nlohmann::json edited = doc;
    e.apply(edited);
    const std::string file = scratch + "/edited.json";
    const std::string rendered = scratch + "/rendered";
    std::ofstream(file) << edited.dump();
    const auto r = ddpbench({"report", file, "--out", rendered});
    EXPECT_EQ(r.exit_code, 2) << e.what << "\n" << r.out << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << e.what << "\n" << r.err;
    EXPECT_NE(r.err.find(e.named), std::string::npos) << e.what << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(rendered)) << e.what;
    if (!gate_first) continue;
    gate_first = false;
    const auto g = ddpbench({"gate", "--baseline", original, "--current", file});
    EXPECT_EQ(g.exit_code, 2) << e.what << "\n" << g.out << g.err;
  }
}

}  // namespace ddpbench::testing

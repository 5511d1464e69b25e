// html_report_e2e_test.cpp — report.html as a person sees it: headless Chromium (Debian's
// `chromium`, installed by ci/install-deps.sh) renders the file offline, and the rendered DOM must
// hold the verdict, every chart with its axes and legend, the sampler partition with padding
// highlighted, and the environment.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {

class HtmlReport : public testing::TempDirTest {};

testing::ProcessResult render_dom(const std::string& html, const std::string& profile) {
  return testing::run_process(
      {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--no-first-run", "--disable-background-networking", "--disable-component-update",
       "--disable-sync", "--user-data-dir=" + profile, "--dump-dom", "file://" + html});
}

TEST_F(HtmlReport, RendersVerdictChartsPartitionAndEnvironmentInChromium) {
  if (!std::filesystem::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "chromium is not installed (ci/install-deps.sh installs it)";
  }
  // 3 ranks over 40 real-format records (6-sample global batch): padding shows in the partition.
  const std::string data = path("cifar");
  testing::write_cifar_batch(data, 40, 7);
  const auto run = testing::ddpbench({"run", "--scenario", "toy_cnn", "--data-dir", data, "--gpus",
                                      "3", "--batch-size", "6", "--steps", "3", "--modes",
                                      "single,dp,ddp", "--out", path("run")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto dom = render_dom(path("run") + "/report.html", path("profile"));
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& html = dom.out;
  EXPECT_NE(html.find("Verdict: PASS"), std::string::npos);
  for (const char* id : {"chart-throughput", "chart-efficiency", "chart-phases", "chart-loss"}) {
    const size_t at = html.find(std::string("id=\"") + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    const std::string chart = html.substr(at, html.find("</svg>", at) - at);
    EXPECT_NE(chart.find("class=\"axis\""), std::string::npos) << id << " has no axis title";
    EXPECT_NE(chart.find("class=\"legend\""), std::string::npos) << id << " has no legend";
  }
  EXPECT_NE(html.find("samples / s"), std::string::npos);
  EXPECT_NE(html.find("ideal (K x single)"), std::string::npos);
  EXPECT_NE(html.find("milliseconds per step"), std::string::npos);
  EXPECT_NE(html.find("id=\"sampler-partition\""), std::string::npos);
  EXPECT_NE(html.find("class=\"pad\" title=\"padding duplicate\""), std::string::npos)
      << "40 samples over 3 ranks pad 2: they must be highlighted";
  EXPECT_NE(html.find("id=\"environment\""), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"))
      << "the page must not load anything";
}

}  // namespace
}  // namespace ddpbench

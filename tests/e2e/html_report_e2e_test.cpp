// html_report_e2e_test.cpp — report.html as a person sees it: headless Chromium (Debian's
// `chromium`, installed by ci/install-deps.sh) renders the file offline, and the rendered DOM must
// hold the verdict, every chart with its axes and legend, the sampler partition with padding
// highlighted, and the environment.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {

class HtmlReport : public testing::TempDirTest {};

testing::ProcessResult render_dom(const std::string& html, const std::string& profile,
                                  const std::string& window = "1200,2400") {
  return testing::run_process({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-quic", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", "--window-size=" + window,
                               "--user-data-dir=" + profile, "--dump-dom", "file://" + html});
}

// How many pixels report.html is wider than a `width`-pixel window, as Chromium lays it out: a
// copy of the page with a measuring script (the report itself has none) writes it into the DOM.
int horizontal_overflow(const std::string& report, const std::string& dir, int width) {
  std::ifstream in(report);
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  page.insert(page.rfind("</body>"),
              "<script>document.body.setAttribute('data-overflow', "
              "document.documentElement.scrollWidth - window.innerWidth)</script>");
  const std::string probe = dir + "/probe" + std::to_string(width) + ".html";
  std::ofstream(probe) << page;
  const auto dom =
      render_dom(probe, dir + "/profile" + std::to_string(width), std::to_string(width) + ",2400");
  const size_t at = dom.out.find("data-overflow=\"");
  if (at == std::string::npos) return 100000;  // the script did not run: fail loudly
  return std::stoi(dom.out.substr(at + 15));
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

  // World-size axes are ticked at the measured K (1 and 3), not at 1.5, 2, 2.5.
  const size_t chart = html.find("id=\"chart-throughput\"");
  const std::string throughput = html.substr(chart, html.find("</svg>", chart) - chart);
  EXPECT_NE(throughput.find(">3</text>"), std::string::npos) << throughput;
  EXPECT_EQ(throughput.find(">1.5</text>"), std::string::npos) << throughput;
  EXPECT_EQ(throughput.find(">2.5</text>"), std::string::npos) << throughput;
  // Bar labels are split per word, so "single K=1" and "dp K=3" cannot run into each other.
  EXPECT_NE(html.find("<tspan"), std::string::npos);
}

// Read at 1200 and 800 pixels, nothing is wider than the window: 50000 synthetic samples give the
// partition table five-digit indices (24 columns of them were 1367 px wide) and a long --out puts a
// long command line in the environment table; wide tables scroll inside their own box.
TEST_F(HtmlReport, FitsA1200And800PixelWindow) {
  if (!std::filesystem::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "chromium is not installed (ci/install-deps.sh installs it)";
  }
  const std::string out = path("a-rather-long-output-folder-name-" + std::string(60, 'x'));
  const auto run = testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2",
                                      "--modes", "single,dp,ddp", "--quiet", "--out", out});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  for (int width : {1200, 800}) {
    EXPECT_LE(horizontal_overflow(out + "/report.html", tmp_, width), 0)
        << "report.html overflows a " << width << "-px window";
  }
}

}  // namespace
}  // namespace ddpbench

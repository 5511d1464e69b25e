// reports_formats_test.cpp — output tests for every format, in the manner of google/benchmark's
// reporter output tests: parse what each reporter wrote and check it against the records.
#include <gtest/gtest.h>

#include <sstream>

#include "reports/console_reporter.h"
#include "reports/csv_reporter.h"
#include "reports/html_reporter.h"
#include "reports/junit_reporter.h"
#include "reports/markdown_reporter.h"
#include "reports/reporter.h"

namespace ddpbench::reports {
namespace {

RunReport sample() {
  RunReport r;
  r.config.scenario = "toy_cnn";
  r.config.dtype = "float32";
  r.config.global_batch = 16;
  ModeResult single;
  single.mode = "single";
  single.losses = {2.3, 2.2};
  single.throughput.timed_steps = 5;
  single.throughput.samples_per_s = 1000;
  ModeResult ddp;
  ddp.mode = "ddp";
  ddp.world_size = 2;
  ddp.backend = "gloo";
  ddp.losses = {2.3, 2.2};
  ddp.throughput.timed_steps = 5;
  ddp.throughput.samples_per_s = 1500;
  ddp.scaling_efficiency = 0.75;
  ddp.checks = {{"loss", "pass", 1e-7, 1e-7, "loss", 0, "ok"},
                {"gradients", "fail", 4e-4, 4e-4, "conv1.weight", 3, "1 of 30 <items> & more"},
                {"buffers", "expected_divergence", 0.3, 0.2, "bn.running_var", -1, "BatchNorm"}};
  r.results = {single, ddp};
  r.passed = false;
  return r;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream l(line);
    for (std::string cell; std::getline(l, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(ReportFormats, CsvHasHeaderAndOneRowPerPoint) {
  const auto rows = parse_csv(CsvReporter().render(sample()));
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> required = {"scenario",
                                             "mode",
                                             "world_size",
                                             "backend",
                                             "dtype",
                                             "global_batch",
                                             "samples_per_s",
                                             "step_time_p50_s",
                                             "scaling_efficiency",
                                             "checks_passed",
                                             "checks_failed"};
  for (const auto& column : required) {
    EXPECT_NE(std::find(rows[0].begin(), rows[0].end(), column), rows[0].end()) << column;
  }
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  EXPECT_EQ(rows[2][col("mode")], "ddp");
  EXPECT_EQ(rows[2][col("world_size")], "2");
  EXPECT_EQ(rows[2][col("samples_per_s")], "1500");
  EXPECT_EQ(rows[2][col("scaling_efficiency")], "0.75");
  EXPECT_EQ(rows[2][col("checks_passed")], "1");
  EXPECT_EQ(rows[2][col("checks_failed")], "1");
  EXPECT_EQ(rows[1][col("scaling_efficiency")], "") << "no baseline for the baseline itself";
}

TEST(ReportFormats, JunitHasOneTestcasePerCheckAndPerMeasuredPointAndEscapes) {
  const std::string xml = JunitReporter().render(sample());
  EXPECT_EQ(xml.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(xml, "<testcase "), 5);  // 3 checks + 2 measured points
  EXPECT_EQ(count(xml, "name=\"throughput\""), 2);
  EXPECT_NE(xml.find("1500.0 samples/s"), std::string::npos) << xml;
  EXPECT_EQ(count(xml, "<failure "), 1);
  EXPECT_NE(xml.find("tests=\"5\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("conv1.weight (step 3)"), std::string::npos);
  EXPECT_NE(xml.find("&lt;items&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(xml.find("<items>"), std::string::npos);
  EXPECT_EQ(count(xml, "<testsuite "), count(xml, "</testsuite>"));
}

// A perf-only sweep (`ddpbench scale`): testcases for its points, and "-" in the console where
// there were no checked steps, not "steps 0, first loss 0".
TEST(ReportFormats, PerfOnlyPointsAreTestcasesAndShowDashes) {
  RunReport r = sample();
  for (auto& m : r.results) {
    m.losses.clear();
    m.checks.clear();
  }
  r.passed = true;
  const std::string xml = JunitReporter().render(r);
  EXPECT_EQ(count(xml, "<testcase "), 2) << xml;
  const std::string text = ConsoleReporter().render(r);
  EXPECT_EQ(text.find(" 0 "), std::string::npos) << text;
  EXPECT_NE(text.find("ddp        2      -            -            -"), std::string::npos) << text;
}

TEST(ReportFormats, MarkdownSummarisesVerdictAndFailures) {
  const std::string md = MarkdownReporter().render(sample());
  EXPECT_NE(md.find("## ddpbench: toy_cnn — FAIL"), std::string::npos);
  EXPECT_NE(md.find("| ddp | 2 | 1500.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("75.0%"), std::string::npos);
  EXPECT_NE(md.find("**ddp gradients** FAILED"), std::string::npos);
  EXPECT_NE(md.find("expected divergence"), std::string::npos);
}

TEST(ReportFormats, ConsoleEndsWithTheVerdict) {
  const std::string text = ConsoleReporter().render(sample());
  EXPECT_NE(text.find("FAIL: 1 check(s) failed"), std::string::npos) << text;
  EXPECT_NE(text.find("conv1.weight (step 3)"), std::string::npos);
}

// The environment block names each mode's peak device memory per rank (per replica device for
// dp), and says plainly when nothing ran on a GPU instead of printing zeros.
TEST(ReportFormats, HtmlEnvironmentNamesPeakDeviceMemoryPerRank) {
  RunReport r = sample();
  const std::string cpu = HtmlReporter().render(r);
  EXPECT_NE(cpu.find("<th>peak device memory</th><td>- (no mode ran on a CUDA device)</td>"),
            std::string::npos);
  r.results[0].peak_device_memory_bytes = {int64_t{3} << 20};
  r.results[1].peak_device_memory_bytes = {int64_t{5} << 20, (int64_t{11} << 19)};
  const std::string gpu = HtmlReporter().render(r);
  EXPECT_NE(gpu.find("<td>single 3.0 MiB; ddp 5.0 / 5.5 MiB (rank 0..1)</td>"), std::string::npos)
      << gpu.substr(gpu.find("peak device memory"), 120);
}

// A sweep's hosts row names the ranks of its widest DDP point, grouped per host, not its first.
TEST(ReportFormats, HtmlHostsRowShowsTheWidestDdpPointPerHost) {
  RunReport r = sample();
  r.context.host = "launcher";
  EXPECT_NE(HtmlReporter().render(r).find("<th>ranks ran on</th><td>launcher</td>"),
            std::string::npos)
      << "without rank hosts the row names the machine";
  r.results[1].hosts = {"hosta", "hosta"};
  ModeResult wide = r.results[1];
  wide.world_size = 4;
  wide.hosts = {"hosta", "hosta", "hostb", "hostb"};
  r.results.push_back(wide);
  const std::string html = HtmlReporter().render(r);
  EXPECT_NE(html.find("<th>ranks ran on</th><td>hosta (ranks 0-1), hostb (ranks 2-3)</td>"),
            std::string::npos)
      << html.substr(html.find("ranks ran on"), 120);
}

// A figure resting on too little is still shown, with a flag and its reasons in every format a
// person reads (metrics Note [Weak figures]); sound figures carry no flag.
TEST(ReportFormats, WeakFiguresAreFlaggedWithTheirReasons) {
  RunReport r = sample();
  const std::string why = "scaling efficiency 236.0% (> 105%): super-linear";
  r.results[1].scaling_efficiency = 2.36;
  r.results[1].throughput.step_time_mean_s = 0.0032;
  r.results[1].throughput.step_time_cv = 0.62;
  r.results[1].throughput.weak_reasons = {why};
  const std::string text = ConsoleReporter().render(r);
  EXPECT_NE(text.find("236.0% weak\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ddp (world 2): " + why), std::string::npos) << text;
  EXPECT_NE(text.find("0.0032s"), std::string::npos) << "the mean beside the median\n" << text;
  EXPECT_NE(text.find("  0.62 "), std::string::npos) << "the CV\n" << text;
  EXPECT_EQ(count(text, " weak\n"), 1) << "single is sound\n" << text;
  const std::string html = HtmlReporter().render(r);
  EXPECT_NE(html.find("<span class=\"badge weak\">weak</span> scaling efficiency 236.0% (&gt; "
                      "105%): super-linear"),
            std::string::npos);
  EXPECT_EQ(count(html, "badge weak\">"), 1);
  const std::string md = MarkdownReporter().render(r);
  EXPECT_NE(md.find("| ddp | 2 | 1500.0 ⚠️ weak |"), std::string::npos) << md;
  EXPECT_NE(md.find(why), std::string::npos) << md;
  const auto rows = parse_csv(CsvReporter().render(r));
  EXPECT_EQ(rows[0].back(), "weak_reasons");
  EXPECT_EQ(rows[1].back(), "");
  EXPECT_NE(rows[2].back().find("super-linear"), std::string::npos);
  const std::string sound = ConsoleReporter().render(sample());
  EXPECT_EQ(sound.find("weak"), std::string::npos) << sound;
}

TEST(ReportFormats, FactoryKnowsEveryFormat) {
  for (const char* name : {"json", "console", "csv", "junit", "markdown"}) {
    EXPECT_EQ(make_reporter(name)->name(), name);
  }
  EXPECT_EQ(file_reporters().front()->file_name(), "report.json");
}

}  // namespace
}  // namespace ddpbench::reports

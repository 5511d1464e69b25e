// reports_formats_test.cpp — output tests for every format, in the manner of google/benchmark's
// reporter output tests: parse what each reporter wrote and check it against the records.
#include <gtest/gtest.h>

#include <sstream>

#include "reports/format/escape.h"
#include "reports/gate/gate_table.h"
#include "reports/run/console_reporter.h"
#include "reports/run/csv_reporter.h"
#include "reports/run/html_reporter.h"
#include "reports/run/junit_reporter.h"
#include "reports/run/markdown_reporter.h"
#include "reports/run/reporter.h"
#include "support/judged_checks.h"
#include "support/subprocess.h"

namespace ddpbench::reports {
namespace {

RunReport sample() {
  RunReport r;
  r.config.scenario = "toy_cnn";
  r.config.dtype = "float32";
  r.config.global_batch = 16;
  ModeResult single;
  single.mode = Mode::kSingle;
  single.losses = {2.3, 2.2};
  single.throughput.timed_steps = 5;
  single.throughput.samples_per_s = 1000;
  ModeResult ddp;
  ddp.mode = Mode::kDdp;
  ddp.world_size = 2;
  ddp.backend = "gloo";
  ddp.losses = {2.3, 2.2};
  ddp.throughput.timed_steps = 5;
  ddp.throughput.samples_per_s = 1500;
  ddp.scaling_efficiency = 0.75;
  ddp.checks = {test::judged_check(Stage::kLoss, CheckStatus::kPass),
                test::judged_check(Stage::kGradients, CheckStatus::kFail, 30),
                test::judged_check(Stage::kBuffers, CheckStatus::kExpectedDivergence)};
  ddp.checks[1].tensor = "conv1.weight";
  ddp.checks[1].step = 3;
  ddp.checks[1].detail = "<items> & more";
  r.results = {single, ddp};
  return test::with_verdict(r);
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
  EXPECT_EQ(testing::count_occurrences(xml, "<testcase "), 5);  // 3 checks + 2 measured points
  EXPECT_EQ(testing::count_occurrences(xml, "name=\"throughput\""), 2);
  EXPECT_NE(xml.find("1500.0 samples/s"), std::string::npos) << xml;
  EXPECT_EQ(testing::count_occurrences(xml, "<failure "), 1);
  EXPECT_NE(xml.find("tests=\"5\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("conv1.weight (step 3)"), std::string::npos);
  EXPECT_NE(xml.find("&lt;items&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(xml.find("<items>"), std::string::npos);
  EXPECT_EQ(testing::count_occurrences(xml, "<testsuite "),
            testing::count_occurrences(xml, "</testsuite>"));
}

// A perf-only sweep (`ddpbench scale`): testcases for its points, and "-" in the console where
// there were no checked steps, not "steps 0, first loss 0".
TEST(ReportFormats, PerfOnlyPointsAreTestcasesAndShowDashes) {
  RunReport r = sample();
  for (auto& m : r.results) {
    m.losses.clear();
    m.checks.clear();
  }
  r = test::with_verdict(r);
  const std::string xml = JunitReporter().render(r);
  EXPECT_EQ(testing::count_occurrences(xml, "<testcase "), 2) << xml;
  const std::string text = ConsoleReporter().render(r);
  EXPECT_EQ(text.find(" 0 "), std::string::npos) << text;
  EXPECT_NE(text.find("ddp        2      -            -            -"), std::string::npos) << text;
}

TEST(ReportFormats, HtmlOfACheckOnlyRunSaysThereIsNothingTimedInsteadOfEmptyCharts) {
  RunReport r = sample();
  const std::string timed = HtmlReporter().render(r);
  EXPECT_NE(timed.find("id=\"chart-throughput\""), std::string::npos);
  EXPECT_EQ(timed.find("No timed steps"), std::string::npos);
  for (auto& m : r.results) m.throughput = {};
  const std::string html = HtmlReporter().render(test::with_verdict(r));
  for (const char* id : {"chart-throughput", "chart-efficiency", "chart-phases"}) {
    EXPECT_EQ(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(testing::count_occurrences(html, "No timed steps: this run only checked correctness"),
            2)
      << html;
  EXPECT_NE(html.find("id=\"chart-loss\""), std::string::npos);  // the checked steps still chart
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

// Per-rank memory: a table in HTML and the console, and zero's optimizer state held against ddp's
// divided by the world size; nothing without memory records.
TEST(ReportFormats, MemoryPerRankSetsZeroBesideDdp) {
  RunReport r = sample();
  EXPECT_EQ(HtmlReporter().render(r).find("Memory per rank"), std::string::npos);
  EXPECT_EQ(ConsoleReporter().render(r).find("memory per rank"), std::string::npos);
  constexpr int64_t kMiB = int64_t{1} << 20;
  r.results[1].memory = {{0, 4 * kMiB, 4 * kMiB, 8 * kMiB, 300 * kMiB},
                         {1, 4 * kMiB, 4 * kMiB, 8 * kMiB, 290 * kMiB}};
  ModeResult zero = r.results[1];
  zero.mode = Mode::kZero;
  zero.checks.clear();
  zero.memory = {{0, 4 * kMiB, 2 * kMiB, 5 * kMiB, 280 * kMiB},
                 {1, 4 * kMiB, 2 * kMiB, 3 * kMiB, 270 * kMiB}};
  r.results.push_back(zero);
  const std::string html = HtmlReporter().render(r);
  EXPECT_EQ(testing::count_occurrences(html, "<tr><td>ddp</td>"), 2) << html;
  // 5 MiB against 8 / 2: 1.25; 3 MiB: 0.75.
  EXPECT_NE(html.find("<tr><td>zero</td><td class=\"num\">0</td><td class=\"num\">4.000</td><td "
                      "class=\"num\">2.000</td><td class=\"num\">5.000</td><td "
                      "class=\"num\">1.250</td>"),
            std::string::npos)
      << html.substr(html.find("Memory per rank"), 900);
  const std::string console = ConsoleReporter().render(r);
  EXPECT_NE(console.find("(0.750 x ddp's / 2)"), std::string::npos) << console;
  EXPECT_NE(html.find("<th>zero mode</th><td>-</td>"), std::string::npos);
  r.config.zero_stage = 2;
  r.config.ddp.backend = "gloo";
  EXPECT_NE(HtmlReporter().render(r).find(
                "<th>zero mode</th><td>ZeRO stage 2 (optimizer state and gradients sharded) "
                "over gloo</td>"),
            std::string::npos);
  // One world size: no K column and no chart; a sweep (scale) gets both.
  EXPECT_EQ(html.find("chart-memory"), std::string::npos);
  ModeResult wide = zero;
  wide.world_size = 4;
  r.results.push_back(wide);
  const std::string sweep = HtmlReporter().render(r);
  EXPECT_NE(sweep.find("id=\"chart-memory\""), std::string::npos);
  EXPECT_NE(sweep.find("<tr><td>zero</td><td class=\"num\">4</td><td class=\"num\">1</td>"),
            std::string::npos);
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

TEST(ReportFormats, MarkdownEscapeKeepsAValueInlineText) {
  EXPECT_EQ(markdown_escape("linear_mse conv1.weight 1.2e-03 (K=2)"),
            "linear_mse conv1.weight 1.2e-03 (K=2)");
  EXPECT_EQ(markdown_escape("_x_ *y* `z` [a](b) #1 c|d ~~e~~ $f$ \\"),
            "\\_x\\_ \\*y\\* \\`z\\` \\[a\\](b) \\#1 c\\|d \\~\\~e\\~\\~ \\$f\\$ \\\\");
  EXPECT_EQ(markdown_escape("<b>&amp;</b>"), "&lt;b&gt;&amp;amp;&lt;/b&gt;");
  EXPECT_EQ(markdown_escape("a\n# b\r\n```\tc"), "a \\# b  \\`\\`\\` c");
}

// Issue: report.md (a CI job summary) copied host, model, scenario, tensor names and details raw:
// a <script>, a newline and "# Heading", or a code fence in a report.json broke the page.
TEST(ReportFormats, MarkdownEscapesEveryStringTakenFromTheReport) {
  RunReport r = sample();
  r.config.scenario = "evil|cell\n# Injected heading";
  r.config.model = "<script>alert(1)</script>";
  r.config.dtype = "*bold*";
  r.context.host = "host\r\n```\ncode";
  r.context.git_revision = "`rev`";
  // Modes and check names are enums (record_enums.h): no text of the file reaches them.
  r.results[1].reference.name = "[link](http://e)";
  r.results[1].checks[1].tensor = "```";
  r.results[1].checks[1].detail = "one\n# Heading <img src=x onerror=alert(1)>";
  r.results[1].reference.summary = "~~struck~~ | cell";
  const std::string md = MarkdownReporter().render(r);
  EXPECT_EQ(md.find("<script"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img"), std::string::npos) << md;
  EXPECT_EQ(md.find("```"), std::string::npos) << md;
  EXPECT_EQ(md.find("[link](http"), std::string::npos) << md;
  std::stringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    bool known = false;
    for (const char* start : {"## ddpbench: ", "&lt;script&gt;", "| ", "|---", "- **"}) {
      known = known || line.rfind(start, 0) == 0;
    }
    EXPECT_TRUE(known) << "a value started a line of its own: " << line << "\n" << md;
    if (line.rfind("| ", 0) == 0) {
      int cells = 0;  // unescaped pipes: a table row of 6 cells has 7
      for (size_t i = 0; i < line.size(); ++i)
        cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      EXPECT_EQ(cells, 7) << line;
    }
  }
  GateResult gate;
  gate.points.push_back({"evil|key\n# h", 1, 1, 0, "ok", "<b>"});
  const std::string table = render_gate_table(gate, true);
  EXPECT_NE(table.find("| evil\\|key \\# h | 1.0 | 1.0 | +0.0% | ok: &lt;b&gt; |"),
            std::string::npos)
      << table;
}

// XML 1.0 cannot carry most C0 controls, even as references: one in a tensor name made
// report.junit.xml unparseable. CSV quotes a bare CR as it does LF.
TEST(ReportFormats, JunitReplacesControlBytesAndCsvQuotesCarriageReturns) {
  EXPECT_EQ(xml_escape(std::string("a\x01"
                                   "b\x1f"
                                   "\tc\n")),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "\tc\n");
  RunReport r = sample();
  r.config.scenario = "a\rb";
  const auto csv = CsvReporter().render(r);
  EXPECT_NE(csv.find("\"a\rb\",single"), std::string::npos) << csv;
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
  EXPECT_EQ(testing::count_occurrences(text, " weak\n"), 1) << "single is sound\n" << text;
  const std::string html = HtmlReporter().render(r);
  EXPECT_NE(html.find("<span class=\"badge weak\">weak</span> scaling efficiency 236.0% (&gt; "
                      "105%): super-linear"),
            std::string::npos);
  EXPECT_EQ(testing::count_occurrences(html, "badge weak\">"), 1);
  const std::string md = MarkdownReporter().render(r);
  EXPECT_NE(md.find("| ddp | 2 | 1500.0 ⚠️ weak |"), std::string::npos) << md;
  EXPECT_NE(md.find(markdown_escape(why)), std::string::npos) << md;
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

// reports_svg_chart_test.cpp — the charts of report.html and projection.html draw any finite value
// (and survive inf and NaN from a caller's unit scaling): huge ranges, zero ranges, denormals and
// ranges below the values' precision give a bounded number of ticks and finite coordinates inside
// the picture, never a crash, a hang or "inf"/"nan" in an attribute (Note [Finite charts]).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "reports/format/svg_chart.h"
#include "support/subprocess.h"

namespace ddpbench::reports {
namespace {

constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();

// Every geometric attribute of `svg` is a finite number within a few picture sizes of it.
void expect_finite_geometry(const std::string& svg, const std::string& what) {
  const std::regex attribute(R"re(\b(x|y|x1|x2|y1|y2|cx|cy|width|height|points)="([^"]*)")re");
  int seen = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), attribute);
       it != std::sregex_iterator(); ++it) {
    std::stringstream values((*it)[2].str());
    for (std::string v; std::getline(values, v, ' ');) {
      std::stringstream pair(v);
      for (std::string number; std::getline(pair, number, ',');) {
        if (number.empty()) continue;
        ++seen;
        char* end = nullptr;
        const double d = std::strtod(number.c_str(), &end);
        ASSERT_EQ(*end, '\0') << what << ": " << (*it)[0] << " is not a number";
        EXPECT_TRUE(std::isfinite(d) && std::abs(d) <= 1e4) << what << ": " << (*it)[0];
      }
    }
  }
  EXPECT_GT(seen, 0) << what;
}

TEST(SvgChart, LineChartsOfExtremeFiniteValuesHaveFiniteCoordinatesAndFewTicks) {
  const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> cases = {
      {"huge y", {{1, 1.7e308}, {2, 1.0}}},
      {"largest y", {{1, kMax}, {4, kMax}}},
      {"huge x range", {{std::numeric_limits<double>::lowest(), 1}, {kMax, 2}}},
      {"all zero", {{0, 0}, {0, 0}}},
      {"one point", {{3, 5}}},
      {"denormal y", {{1, kDenormMin}, {2, 1e-320}}},
      {"denormal x", {{kDenormMin, 1}, {2 * kDenormMin, 2}}},
      {"x range below precision", {{1e17, 1}, {1e17 + 16, 2}}},
      {"huge one point", {{kMax, kMax}}},
      {"non-finite", {{1, kInf}, {2, kNan}, {kNan, 3}, {-kInf, 1}}},
  };
  for (const auto& [name, points] : cases) {
    for (const bool log2_x : {false, true}) {
      const std::string svg =
          line_chart({"c", name, "x", "y", {}, log2_x}, {{"s", "#000", points, false}});
      expect_finite_geometry(svg, name);
      EXPECT_GE(testing::count_occurrences(svg, "ytick"), 2) << name;
      EXPECT_LE(testing::count_occurrences(svg, "ytick"), 13) << name;
      EXPECT_LE(testing::count_occurrences(svg, "xtick"), 13) << name;
    }
  }
}

TEST(SvgChart, StackedBarsOfExtremeFiniteValuesStayInsideThePlot) {
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"phases of 1.7e308 ms", {1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308}},
      {"inf after scaling", {1e3 * 1.7e308, 1.0}},
      {"all zero", {0, 0, 0}},
      {"denormals", {kDenormMin, kDenormMin, 1e-320}},
      {"negative and nan", {-1, kNan, 2}},
  };
  for (const auto& [name, segments] : cases) {
    const std::string svg = stacked_bar_chart({"c", name, "x", "ms"}, {"a", "b", "c", "d", "e"},
                                              {"#111", "#222"}, {{"ddp K=2", segments}});
    expect_finite_geometry(svg, name);
    EXPECT_LE(testing::count_occurrences(svg, "ytick"), 13) << name;
  }
  // More segments than names, and no colours at all, are drawn too.
  expect_finite_geometry(stacked_bar_chart({"c", "t", "x", "y"}, {}, {}, {{"b", {1, 2, 3}}}),
                         "unnamed");
}

TEST(SvgChart, OrdinaryRangesStillGetRoundTicks) {
  const std::string svg =
      line_chart({"c", "t", "x", "y", {}, false}, {{"s", "#000", {{0, 0}, {10, 4120}}, false}});
  for (const char* tick : {">0<", ">1000<", ">2000<", ">3000<", ">4000<", ">5000<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick << "\n" << svg;
  }
  EXPECT_EQ(testing::count_occurrences(svg, "ytick"), 6);
}

}  // namespace
}  // namespace ddpbench::reports

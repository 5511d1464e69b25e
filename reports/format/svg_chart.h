// svg_chart.h — minimal inline-SVG charts for the self-contained HTML report: line charts with
// axes, ticks at round values (1, 2, 5 x 10^k) or at given values, axis titles (with units) and a
// legend, and stacked bar charts whose labels wrap instead of overlapping. No scripts, no
// external resources, so the report opens offline anywhere.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddpbench::reports {

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool dashed = false;                            // e.g. the "ideal" line
  bool markers_only = false;                      // points without a line between them
};

struct ChartText {
  std::string id;  // element id, so tests can find the chart in the rendered DOM
  std::string title;
  std::string x_label;
  std::string y_label;
  // Line charts: ticks at exactly these x values (e.g. the measured world sizes) instead of evenly
  // spaced "nice" values, and a log2 x axis (1, 2, 4, 8 ranks equally apart).
  std::vector<double> x_ticks;
  bool log2_x = false;
};

std::string line_chart(const ChartText& text, const std::vector<Series>& series);

struct Bar {
  std::string label;
  std::vector<double> segments;  // stacked bottom to top, in the order of segment_names
};

std::string stacked_bar_chart(const ChartText& text, const std::vector<std::string>& segment_names,
                              const std::vector<std::string>& colors, const std::vector<Bar>& bars);

}  // namespace ddpbench::reports

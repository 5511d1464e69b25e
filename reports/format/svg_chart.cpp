// svg_chart.cpp — see svg_chart.h.
#include "reports/format/svg_chart.h"
#include "reports/format/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/run/junit_reporter.h"  // xml_escape

namespace ddpbench::reports {
namespace {

constexpr int kWidth = 540, kHeight = 320;
constexpr int kLeft = 70, kRight = 150, kTop = 36, kBottom = 60;

std::string num(double v) {
  if (v == 0) return "0";
  // 4350, not 4.35e+03; but 1.7e+308, not 309 digits.
  if (std::abs(v) >= 1000 && std::abs(v) < 1e9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

// Note [Finite charts]: a report is data from a file anyone can edit, so every value may be any
// double (1.7e308, 5e-324, inf after a caller's unit scaling). The charts clamp non-finite values
// to the largest finite ones, compute spans as differences of halves (hi/2 - lo/2 cannot
// overflow), bound every tick loop by a count rather than by an accumulated sum (t += step never
// moves once step is below t's precision), and clamp every coordinate they print, so no value
// can crash the renderer, hang it, or write "inf"/"nan" into the SVG.
double finite(double v) {
  if (std::isnan(v)) return 0;
  return std::clamp(v, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
}

// Where v lies between lo and hi, as a fraction (0 at lo, 1 at hi), never inf or NaN; a value far
// outside the range is held just outside the plot area.
double fraction(double v, double lo, double hi) {
  const double span = hi / 2 - lo / 2;
  if (!(span > 0) || !std::isfinite(span)) return 0.5;
  const double f = (v / 2 - lo / 2) / span;
  if (std::isnan(f)) return 0.5;
  return std::clamp(f, -0.1, 1.1);
}

constexpr int kMaxTicks = 12;  // a 1-2-5 step gives at most 8 over a span; the bound is a guard

// Round tick values from lo up to at least `hi`: a step of 1, 2 or 5 x 10^k giving at most 6
// intervals, so labels read 0, 2000, 4000 rather than 0, 2164, 4327. At least two ticks, all
// finite and increasing; when no round step fits (a span below the values' precision, or one
// whose next round tick would overflow), the bare ends lo and hi.
std::vector<double> nice_ticks(double lo, double hi) {
  lo = finite(lo);
  hi = finite(hi);
  if (hi <= lo) {
    const double pad = std::max(1.0, std::abs(lo) / 4);
    if (std::isfinite(lo + pad)) {
      hi = lo + pad;
    } else {
      hi = lo;
      lo = lo - pad;
    }
  }
  const std::vector<double> ends = {lo, hi};
  const double half = hi / 2 - lo / 2;  // (hi - lo) / 2, which cannot overflow
  const double raw = half / 2.5;        // (hi - lo) / 5
  if (!(raw > 0) || !std::isfinite(raw)) return ends;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  if (!(magnitude > 0) || !std::isfinite(magnitude)) return ends;
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (half / step <= 3) break;
  }
  if (!(step > 0) || !std::isfinite(step)) return ends;
  const double first = std::floor(lo / step) * step;
  if (!std::isfinite(first)) return ends;
  std::vector<double> ticks;
  for (int i = 0; i <= kMaxTicks; ++i) {
    const double t = first + static_cast<double>(i) * step;
    if (!std::isfinite(t)) break;
    if (!ticks.empty() && t <= ticks.back()) return ends;  // step below t's precision
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
    if (t >= hi) break;
  }
  if (ticks.size() < 2) return ends;
  if (ticks.back() < hi) ticks.push_back(hi);  // the next round tick overflows: end at hi
  return ticks;
}

// A pixel coordinate as printed: finite whatever the arithmetic before it gave.
double px_clamped(double v) { return std::isfinite(v) ? std::clamp(v, -1e4, 1e4) : 0; }

// Maps data to the plot area; x may be log2.
struct Axes {
  double x0, x1, y0, y1;
  bool log2_x;
  double fx(double x) const { return log2_x ? std::log2(x) : x; }
  double px(double x) const {
    const int w = kWidth - kLeft - kRight;
    return px_clamped(kLeft + fraction(fx(x), fx(x0), fx(x1)) * w);
  }
  double py(double y) const {
    const int h = kHeight - kTop - kBottom;
    return px_clamped(kTop + h - fraction(y, y0, y1) * h);
  }
};

std::string frame(const ChartText& t, const Axes& a, const std::vector<double>& x_ticks,
                  const std::vector<double>& y_ticks) {
  const int w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string s = fmt::format(
      "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n",
      xml_escape(t.id), kWidth, kHeight, kWidth, kHeight, xml_escape(t.title), xml_escape(t.title));
  s += fmt::format("<text x=\"{}\" y=\"20\" class=\"ctitle\">{}</text>\n", kLeft,
                   xml_escape(t.title));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"plot\"/>\n", kLeft,
                   kTop, w, h);
  for (double yv : y_ticks) {
    const double y = a.py(yv);
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"tick ytick\" text-anchor=\"end\">{}</text>\n",
        kLeft, kLeft + w, y, y, kLeft - 6, y + 4, num(yv));
  }
  for (double xv : x_ticks) {
    const double x = a.px(xv);
    s += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"tick xtick\" text-anchor=\"middle\">{}</text>\n",
        x, x, kTop, kTop + h, x, kTop + h + 16, num(xv));
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n",
                   kLeft + w / 2, kHeight - 12, xml_escape(t.x_label));
  s += fmt::format(
      "<text x=\"16\" y=\"{}\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "{})\">{}</text>\n",
      kTop + h / 2, kTop + h / 2, xml_escape(t.y_label));
  return s;
}

// A legend entry: a square (bars) or a line, dashed like its series.
struct LegendItem {
  std::string name;
  std::string color;
  bool dashed = false;
};

std::string legend(const std::vector<LegendItem>& items, bool squares) {
  std::string s;
  int y = kTop + 8;
  for (const auto& [name, color, dashed] : items) {
    const int x = kWidth - kRight + 12;
    s += squares ? fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
                               x, y - 10, color)
                 : fmt::format(
                       "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"3\"{}/>",
                       x, x + 16, y - 4, y - 4, color, dashed ? " stroke-dasharray=\"4 3\"" : "");
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"legend\">{}</text>\n", x + 20, y,
                     xml_escape(name));
    y += 18;
  }
  return s;
}

// A bar's label under it: one word per line ("single" over "K=1") so neighbours never overlap;
// rotated when even one word is wider than the bar's slot.
std::string bar_label(const std::string& label, double x, int y, double slot) {
  std::vector<std::string> words;
  for (size_t at = 0; at < label.size();) {
    const size_t space = label.find(' ', at);
    const size_t end = space == std::string::npos ? label.size() : space;
    if (end > at) words.push_back(label.substr(at, end - at));
    at = end + 1;
  }
  size_t longest = 0;
  for (const auto& w : words) longest = std::max(longest, w.size());
  constexpr double kCharWidth = 6.5;  // 11px sans-serif, generously
  if (static_cast<double>(longest) * kCharWidth > slot) {
    return fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" class=\"tick xtick\" text-anchor=\"end\" "
        "transform=\"rotate(-30 {:.1f} {})\">{}</text>\n",
        x, y, x, y, xml_escape(label));
  }
  std::string out = fmt::format("<text y=\"{}\" class=\"tick xtick\" text-anchor=\"middle\">", y);
  for (size_t i = 0; i < words.size(); ++i) {
    out += fmt::format("<tspan x=\"{:.1f}\" dy=\"{}\">{}</tspan>", x, i == 0 ? 0 : 13,
                       xml_escape(words[i]));
  }
  return out + "</text>\n";
}

// The top of a y axis holding `top`: 5% headroom, unless that overflows.
double padded(double top) {
  if (!(top > 0)) return 1;
  const double p = top * 1.05;
  return std::isfinite(p) ? p : top;
}

}  // namespace

std::string line_chart(const ChartText& text, const std::vector<Series>& series) {
  bool any = false;
  double x0 = 0, x1 = 0, y1 = 0;
  const auto take_x = [&](double x) {
    x0 = any ? std::min(x0, x) : x;
    x1 = any ? std::max(x1, x) : x;
    any = true;
  };
  // A NaN point (a loss that diverged) is left out: it has no place on either axis.
  const auto plotted = [](double x, double y) { return !std::isnan(x) && !std::isnan(y); };
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!plotted(x, y)) continue;
      take_x(finite(x));
      y1 = std::max(y1, finite(y));
    }
  }
  for (double t : text.x_ticks) take_x(finite(t));
  const bool log2_x = text.log2_x && any && x0 > 0;
  if (!any) x0 = 0, x1 = 1;
  if (x0 == x1) {  // one point: centre it (fraction() copes where the halving or the +-1 is lost)
    x0 = log2_x ? x0 / 2 : x0 - 1;
    x1 = log2_x ? finite(x1 * 2) : x1 + 1;
  }
  const std::vector<double> y_ticks = nice_ticks(0, padded(y1));
  const Axes axes{x0, x1, 0, y_ticks.back(), log2_x};
  std::vector<double> x_ticks;
  for (double t : text.x_ticks) x_ticks.push_back(finite(t));
  if (x_ticks.empty()) {
    for (double t : nice_ticks(x0, x1)) {
      if (t >= x0 && t <= x1) x_ticks.push_back(t);
    }
  }
  std::string out = frame(text, axes, x_ticks, y_ticks);
  std::vector<LegendItem> items;
  for (const auto& s : series) {
    std::string pts;
    for (const auto& [x, y] : s.points) {
      if (!plotted(x, y)) continue;
      const double px = axes.px(finite(x));
      const double py = axes.py(finite(y));
      pts += fmt::format("{:.1f},{:.1f} ", px, py);
      out +=
          fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", px, py, s.color);
    }
    if (!s.markers_only) {
      out += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", pts,
          s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    }
    items.push_back({s.name, s.color, s.dashed});
  }
  return out + legend(items, false) + "</svg>\n";
}

std::string stacked_bar_chart(const ChartText& text, const std::vector<std::string>& names,
                              const std::vector<std::string>& colors,
                              const std::vector<Bar>& bars) {
  const auto name_of = [&names](size_t k) { return k < names.size() ? names[k] : std::string(); };
  const auto color_of = [&colors](size_t k) {
    return colors.empty() ? std::string("#888888") : colors[k % colors.size()];
  };
  // Segments are stacked from 0 up: negative ones are drawn as 0, and a sum that overflows is
  // held at the largest double (Note [Finite charts]).
  const auto segment = [](double v) { return std::max(0.0, finite(v)); };
  double top = 0;
  for (const auto& b : bars) {
    double sum = 0;
    for (double v : b.segments) sum = finite(sum + segment(v));
    top = std::max(top, sum);
  }
  const std::vector<double> y_ticks = nice_ticks(0, padded(top));
  top = y_ticks.back();
  const int w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = frame(text, Axes{0, 1, 0, top, false}, {}, y_ticks);
  const double slot = bars.empty() ? w : static_cast<double>(w) / static_cast<double>(bars.size());
  for (size_t i = 0; i < bars.size(); ++i) {
    double base = 0;  // the fraction of the axis below this segment
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.2;
    for (size_t k = 0; k < bars[i].segments.size(); ++k) {
      const double v = segment(bars[i].segments[k]);
      const double height = std::clamp(v / top, 0.0, 1.0 - std::min(base, 1.0));
      base += height;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{} {}: {}</title></rect>",
          x, px_clamped(kTop + h - base * h), slot * 0.6, px_clamped(height * h), color_of(k),
          xml_escape(bars[i].label), xml_escape(name_of(k)), num(bars[i].segments[k]));
    }
    out += bar_label(bars[i].label, x + slot * 0.3, kTop + h + 14, slot);
  }
  std::vector<LegendItem> items;
  for (size_t k = 0; k < names.size(); ++k) items.push_back({names[k], color_of(k)});
  return out + legend(items, true) + "</svg>\n";
}

}  // namespace ddpbench::reports

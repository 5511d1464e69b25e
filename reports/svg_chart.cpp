// svg_chart.cpp — see svg_chart.h.
#include "reports/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/junit_reporter.h"  // xml_escape

namespace ddpbench::reports {
namespace {

constexpr int kWidth = 540, kHeight = 320;
constexpr int kLeft = 70, kRight = 150, kTop = 36, kBottom = 52;

std::string num(double v) {
  if (v == 0) return "0";
  if (std::abs(v) >= 1000) return fmt::format("{:.0f}", v);  // 4350, not 4.35e+03
  return fmt::format("{:.3g}", v);
}

std::string frame(const ChartText& t, double x0, double x1, double y0, double y1) {
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
  for (int i = 0; i <= 4; ++i) {
    const double yv = y0 + (y1 - y0) * i / 4.0;
    const double y = kTop + h - h * i / 4.0;
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
        kLeft, kLeft + w, y, y, kLeft - 6, y + 4, num(yv));
  }
  if (x1 > x0) {
    for (int i = 0; i <= 4; ++i) {
      const double xv = x0 + (x1 - x0) * i / 4.0;
      const double x = kLeft + w * i / 4.0;
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", x,
          kTop + h + 16, num(xv));
    }
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n",
                   kLeft + w / 2, kHeight - 12, xml_escape(t.x_label));
  s += fmt::format(
      "<text x=\"16\" y=\"{}\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "{})\">{}</text>\n",
      kTop + h / 2, kTop + h / 2, xml_escape(t.y_label));
  return s;
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items, bool squares) {
  std::string s;
  int y = kTop + 8;
  for (const auto& [name, color] : items) {
    const int x = kWidth - kRight + 12;
    s += squares ? fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
                               x, y - 10, color)
                 : fmt::format(
                       "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"3\"/>",
                       x, x + 16, y - 4, y - 4, color);
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"legend\">{}</text>\n", x + 20, y,
                     xml_escape(name));
    y += 18;
  }
  return s;
}

}  // namespace

std::string line_chart(const ChartText& text, const std::vector<Series>& series) {
  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y1 = std::max(y1, y);
    }
  }
  if (x0 > x1) x0 = 0, x1 = 1;
  if (x0 == x1) x0 -= 1, x1 += 1;
  if (y1 <= 0) y1 = 1;
  y1 *= 1.1;
  const int w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = frame(text, x0, x1, 0, y1);
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& s : series) {
    std::string pts;
    for (const auto& [x, y] : s.points) {
      const double px = kLeft + (x - x0) / (x1 - x0) * w;
      const double py = kTop + h - y / y1 * h;
      pts += fmt::format("{:.1f},{:.1f} ", px, py);
      out +=
          fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", px, py, s.color);
    }
    out +=
        fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                    pts, s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    items.emplace_back(s.name, s.color);
  }
  return out + legend(items, false) + "</svg>\n";
}

std::string stacked_bar_chart(const ChartText& text, const std::vector<std::string>& names,
                              const std::vector<std::string>& colors,
                              const std::vector<Bar>& bars) {
  double top = 0;
  for (const auto& b : bars) {
    double sum = 0;
    for (double v : b.segments) sum += v;
    top = std::max(top, sum);
  }
  if (top <= 0) top = 1;
  top *= 1.1;
  const int w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = frame(text, 0, 0, 0, top);
  const double slot = bars.empty() ? w : static_cast<double>(w) / static_cast<double>(bars.size());
  for (size_t i = 0; i < bars.size(); ++i) {
    double base = 0;
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.2;
    for (size_t k = 0; k < bars[i].segments.size(); ++k) {
      const double v = bars[i].segments[k];
      const double y = kTop + h - (base + v) / top * h;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{} {}: {}</title></rect>",
          x, y, slot * 0.6, v / top * h, colors[k % colors.size()], xml_escape(bars[i].label),
          xml_escape(names[k]), num(v));
      base += v;
    }
    out +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                    x + slot * 0.3, kTop + h + 16, xml_escape(bars[i].label));
  }
  std::vector<std::pair<std::string, std::string>> items;
  for (size_t k = 0; k < names.size(); ++k) items.emplace_back(names[k], colors[k % colors.size()]);
  return out + legend(items, true) + "</svg>\n";
}

}  // namespace ddpbench::reports

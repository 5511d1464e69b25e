// html_style.h — the stylesheet of ddpbench's HTML pages (report.html, diff.html), so that every
// page a user opens reads alike; each page is self-contained, so it is inlined.
#pragma once

namespace ddpbench::reports::html {

inline constexpr const char* kReportStyle = R"(
body{font-family:system-ui,sans-serif;margin:0 auto;padding:24px;box-sizing:border-box;color:#222;max-width:1200px}
.wide{max-width:100%;overflow-x:auto} td{overflow-wrap:anywhere} th{white-space:nowrap} svg.chart{max-width:100%;height:auto}
.charts{display:flex;flex-wrap:wrap}
h1{margin-bottom:4px} section{margin:18px 0}
#verdict{padding:8px 16px;border-radius:6px} #verdict li{margin:6px 0} .ref{color:#555;font-size:13px} #verdict.pass{background:#e6f4ea} #verdict.fail{background:#fce8e6}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:3px 6px;text-align:left}
td.num{white-space:nowrap;overflow-wrap:normal}
tr.fail td{background:#fce8e6} tr.expected_divergence td{background:#fff4e5} tr.not_comparable td{background:#eeeeee} tr.rounding td{background:#eef6ff} tr.weak td{background:#fff4e5}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-weight:600;font-size:12px} .badge.weak{background:#e8a33d;color:#fff}
.partition td{width:28px;text-align:center;white-space:nowrap;overflow-wrap:normal} .pad{background:#ffbb78}
.none{color:#555}
.chart{margin:6px 12px 6px 0;border:1px solid #eee} .plot{fill:#fafafa;stroke:#999}
.grid{stroke:#e0e0e0} .tick{font-size:11px;fill:#444} .axis{font-size:12px;fill:#222}
.ctitle{font-size:14px;font-weight:600} .legend{font-size:12px}
)";

}  // namespace ddpbench::reports::html

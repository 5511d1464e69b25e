// html_figures.h — report.html's sections of measured figures: throughput and scaling (a table
// and charts), the spread of the repeats, who the ranks wait for, where a step's time goes, the
// loss curves, and the memory each rank held. Each is
// one <section>, escaped through xml_escape, its charts from svg_chart.h; a run without the
// figure says so in words rather than drawing empty axes.
#pragma once

#include <string>

#include "reports/run/run_record.h"

namespace ddpbench::reports::html {

std::string scaling_section(const RunReport& r);
std::string phases_section(const RunReport& r);
std::string loss_section(const RunReport& r);
std::string memory_section(const RunReport& r);
// The spread of each timed point's repeats (html_repeats.cpp); "" when nothing was timed.
std::string repeats_section(const RunReport& r);
// Every rank's compute per timed step and the straggler (html_ranks.cpp); "" without ranks.
std::string ranks_section(const RunReport& r);
// Per ddp or zero point, rank 0's collectives per checked step (html_collectives.cpp).
std::string collectives_section(const RunReport& r);

}  // namespace ddpbench::reports::html

// html_collectives.cpp — report.html's "Collectives" section (html_figures.h): per ddp or zero
// point, what rank 0 put on the wire at each checked step (Note [Collective accounting]): the
// gradient reduction's all-reduces, reduce-scatters and MiB, and the whole step's by kind, so a
// reader sees HSDP's reduce-scatter and replica all-reduce, or DDP's buckets, step by step.
// Escaped through xml_escape.
#include <fmt/format.h>

#include "reports/run/html_figures.h"
#include "reports/format/escape.h"
#include "reports/run/junit_reporter.h"  // xml_escape
#include "reports/run/memory_rows.h"     // mib

namespace ddpbench::reports::html {

std::string collectives_section(const RunReport& r) {
  std::string rows;
  for (const ModeResult& m : r.results) {
    for (const StepCollectivesRecord& s : m.collectives) {
      rows += fmt::format(
          "<tr><td>{} (K={})</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{} / {} / {:.3f}</td><td class=\"num\">{} / {} / {} / {} / {:.3f}</td>"
          "</tr>\n",
          xml_escape(std::string(name_of(m.mode))), m.world_size, s.step, s.micro_steps,
          s.reduction_allreduce, s.reduction_reduce_scatter, mib(s.reduction_bytes), s.allreduce,
          s.reduce_scatter, s.allgather, s.broadcast, mib(s.bytes));
    }
  }
  if (rows.empty()) return "";
  return "<section id=\"collectives\"><h2>Collectives per checked step</h2><p>What rank 0 "
         "issued, counted at its communicator: the gradient reduction (backward and the "
         "reduction, every micro-step) and the whole step (the checked step's own records "
         "included). AR all-reduce, RS reduce-scatter, AG all-gather, BC broadcast. Each "
         "reduction is judged by the <code>collectives</code> check. c10d's Reducer sends past "
         "the communicator: its collectives are the process group's own count (its broadcasts' "
         "bytes unknown).</p><table><tr><th>mode</th><th>step</th>"
         "<th>micro-steps</th><th>reduction<br>AR / RS / MiB</th><th>whole step<br>AR / RS / AG "
         "/ BC / MiB</th></tr>\n" +
         rows + "</table></section>\n";
}

}  // namespace ddpbench::reports::html

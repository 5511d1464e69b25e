// progress_line.cpp — see progress_line.h.
#include "training/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace ddpbench::training {

bool progress_wanted(bool quiet) { return !quiet && isatty(STDOUT_FILENO) == 1; }

ProgressLine::ProgressLine(bool enabled, std::string label, int64_t total_steps)
    : enabled_(enabled && total_steps > 0),
      label_(std::move(label)),
      total_(total_steps),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressLine::~ProgressLine() {
  if (drawn_) {
    std::fputs("\r\033[K", stdout);  // clear the line: the final table follows
    std::fflush(stdout);
  }
}

void ProgressLine::update(int64_t done, double loss) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta =
      done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0.0;
  std::string line = fmt::format("\r\033[K{}: step {}/{}, ETA {:.0f} s", label_, done, total_, eta);
  if (!std::isnan(loss)) line += fmt::format(", loss {:.5g}", loss);
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
  drawn_ = true;
}

}  // namespace ddpbench::training

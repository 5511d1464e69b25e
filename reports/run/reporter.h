// reporter.h — the reporter interface: turn a RunReport into one output format. Reporters only
// format (no I/O, no training); output/write_reports.h decides where the text goes and writes
// it into the report folder atomically.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Short format name ("json", "console", ...).
  virtual std::string name() const = 0;
  // The file this format is written to inside --out ("" for console-only formats).
  virtual std::string file_name() const = 0;
  virtual std::string render(const RunReport& report) const = 0;
};

// Name-based factory, like google/benchmark's CreateReporter. Throws InputError for an unknown
// name.
std::unique_ptr<Reporter> make_reporter(const std::string& name);

// The formats written next to every report.json (json first: it is canonical).
std::vector<std::unique_ptr<Reporter>> file_reporters();

}  // namespace ddpbench::reports

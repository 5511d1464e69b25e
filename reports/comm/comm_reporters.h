// comm_reporters.h — a CommReport in the formats of ddpbench's reporters: the console table
// (nccl-tests' layout) ending with the OK/FAILED footer, comm.json and comm.csv. They only format.
#pragma once

#include <string>

#include "reports/comm/comm_record.h"

namespace ddpbench::reports {

inline constexpr const char* kCommJsonFile = "comm.json";
inline constexpr const char* kCommCsvFile = "comm.csv";

std::string render_comm_table(const CommReport& report);
std::string render_comm_json(const CommReport& report);
std::string render_comm_csv(const CommReport& report);
// "OK: ..." or "FAILED: ..." — the footer's verdict line, also the table's last line.
std::string comm_verdict_line(const CommReport& report);

}  // namespace ddpbench::reports

// json_report_reader.h — reads a report.json back into the records (`report` and `gate`). Every
// field is checked for its type and range as it is read (json_fields.h), and the report as a
// whole for what the formats and the gate rely on: at least one result, and no two results for
// the same mode and world size.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

// Throws InputError, naming the field, when the document is not a ddpbench report of a known
// schema version, a field has the wrong type or an impossible value, there are no results, or two
// results share a mode and world size.
RunReport report_from_json(const nlohmann::json& doc);

}  // namespace ddpbench::reports

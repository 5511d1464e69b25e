// record_lookup.h — a field of report.json's config (or context) found by its dotted path, as
// the run options table names where each option is recorded ("steps", "ddp.impl",
// "context.device"): whether it exists and whether the gate compares it (record_fields.h).
#pragma once

#include <optional>
#include <string>

#include "reports/run/record_fields.h"

namespace ddpbench::reports {

// The field's FieldSpec::affects, or none when report.json has no such field.
std::optional<Affects> config_field_affects(const std::string& path);

}  // namespace ddpbench::reports

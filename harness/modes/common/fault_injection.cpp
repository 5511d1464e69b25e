// fault_injection.cpp — see fault_injection.h. The kinds, their fields and names are the rows of
// fault_table.cpp; this file reads the text a user typed against them.
#include "modes/common/fault_injection.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

#include "errors.h"
#include "modes/common/fault_table.h"
#include "quoted_input.h"

namespace ddpbench::modes {
namespace {

// "grad, shard and state": the kinds whose row takes `field`, for the error line of a kind that
// does not.
std::string kinds_taking(unsigned field) {
  std::vector<std::string> names;
  for (const FaultRow& row : fault_rows()) {
    if (row.fields & field) names.push_back(row.name);
  }
  if (names.size() < 2) return names.empty() ? "" : names[0];
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} and {}", fmt::join(names, ", "), last);
}

// Reads one key=value field into `f`; throws the parse error for a key or value it cannot take.
void read_field(const std::string& text, const std::string& key, const std::string& value,
                FaultSpec& f) {
  try {
    size_t used = 0;
    if (key == "rank") {
      f.rank = std::stoll(value, &used);
    } else if (key == "step") {
      f.step = std::stoll(value, &used);
    } else if (key == "eps") {
      f.eps = std::stod(value, &used);
      // A non-finite perturbation is the nan fault under another name, and 0 is no fault.
      if (!std::isfinite(f.eps) || f.eps == 0) throw std::invalid_argument(value);
    } else if (key == "ms") {
      f.ms = std::stod(value, &used);
      // A slowdown is a positive, finite time.
      if (!std::isfinite(f.ms) || f.ms <= 0 || f.ms > 1e6) throw std::invalid_argument(value);
    } else if (key == "tensor") {
      f.tensor = value;
      used = value.size();
    } else {
      throw InputError(fmt::format("--inject-fault {}: unknown field {}; expected {}",
                                   quoted_input(text), quoted_input(key), fault_usage()));
    }
    if (used != value.size() || value.empty()) throw std::invalid_argument(value);
  } catch (const std::logic_error&) {
    throw InputError(fmt::format("--inject-fault {}: bad value {} for {}; expected {}",
                                 quoted_input(text), quoted_input(value), key, fault_usage()));
  }
}

// The fields `row` takes are given as it needs them: rank and step present when it takes them
// (a fault at a made-up place proves nothing), absent when it does not (dpbuffers and noscale are
// no one rank's fault; eval happens once, after training), eps and tensor only where they apply.
void check_fields(const std::string& text, const FaultRow& row, const std::set<std::string>& seen) {
  struct Field {
    const char* key;
    FaultField bit;
  };
  for (const Field& field :
       {Field{"rank", kFaultRank}, Field{"step", kFaultStep}, Field{"eps", kFaultEps},
        Field{"tensor", kFaultTensor}, Field{"ms", kFaultMs}}) {
    const bool takes = (row.fields & field.bit) != 0;
    const bool required =
        field.bit == kFaultRank || field.bit == kFaultStep || field.bit == kFaultMs;
    if (takes && required && !seen.count(field.key)) {
      throw InputError(fmt::format("--inject-fault {}: {} is missing; expected {}",
                                   quoted_input(text), field.key, fault_usage()));
    }
    if (!takes && seen.count(field.key)) {
      throw InputError(
          fmt::format("--inject-fault {}: {} has no {} ({}= applies to {}): drop {}=, as in {}",
                      quoted_input(text), row.name, field.key, field.key, kinds_taking(field.bit),
                      field.key, fault_syntax(row)));
    }
  }
}

}  // namespace

const char* fault_name(FaultKind kind) { return fault_row(kind).name; }

FaultSpec parse_fault(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const FaultRow* row = find_fault_row(kind);
  if (row == nullptr) {
    throw InputError(
        fmt::format("--inject-fault {}: unknown kind {}; expected KIND:rank=R,step=S, KIND one of "
                    "{} (`ddpbench run --help` gives "
                    "each one's fields, modes and needs)",
                    quoted_input(text), quoted_input(kind), fault_kind_names()));
  }
  FaultSpec f;
  f.kind = row->kind;
  std::set<std::string> seen;
  std::stringstream fields(colon == std::string::npos ? "" : text.substr(colon + 1));
  std::string field;
  while (std::getline(fields, field, ',')) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) {
      throw InputError(fmt::format("--inject-fault {}: field {} has no '='; expected {}",
                                   quoted_input(text), quoted_input(field), fault_usage()));
    }
    const std::string key = field.substr(0, eq);
    if (!seen.insert(key).second) {
      throw InputError(fmt::format("--inject-fault {}: {} is given twice; give each field once",
                                   quoted_input(text), quoted_input(key)));
    }
    read_field(text, key, field.substr(eq + 1), f);
  }
  check_fields(text, *row, seen);
  if (f.rank < 0 || f.step < 0) {
    throw InputError(fmt::format("--inject-fault {}: rank and step must be >= 0; expected {}",
                                 quoted_input(text), fault_usage()));
  }
  return f;
}

}  // namespace ddpbench::modes

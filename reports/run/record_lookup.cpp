// record_lookup.cpp — see record_lookup.h.
#include "reports/run/record_lookup.h"

namespace ddpbench::reports {
namespace {

// Walks a record's fields, descending into sub-records, and keeps the one at `path`.
struct PathFinder {
  const std::string& path;
  std::string prefix;
  std::optional<Affects>& found;

  template <typename T>
  void operator()(const char* key, const T& field, const FieldSpec& spec) {
    const std::string here = prefix + key;
    if (here == path) found = spec.affects;
    if constexpr (kIsRecord<T>) {
      PathFinder inner{path, here + ".", found};
      fields(inner, field);
    }
  }
};

}  // namespace

std::optional<Affects> config_field_affects(const std::string& path) {
  std::optional<Affects> found;
  const RunConfig config;
  PathFinder in_config{path, "", found};
  fields(in_config, config);
  const RunContext context;
  PathFinder in_context{path, "context.", found};
  fields(in_context, context);
  return found;
}

}  // namespace ddpbench::reports

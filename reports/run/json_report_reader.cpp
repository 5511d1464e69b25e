// json_report_reader.cpp — see json_report_reader.h. The fields, their names and bounds are
// record_fields.h's lists (the writer walks the same ones); meanings: reports/SCHEMA.md.
#include "reports/run/json_report_reader.h"

#include <fmt/format.h>

#include <set>

#include "errors.h"
#include "reports/format/json_fields.h"
#include "reports/run/record_fields.h"
#include "reports/run/verdict.h"

namespace ddpbench::reports {
namespace {

// Reads each visited field from `in`, checking its type and bounds (json_fields.h).
struct JsonReader {
  const JsonFields& in;
  int64_t version;  // the report's schema version

  template <typename T>
  void operator()(const char* key, T& field, const FieldSpec& s) {
    if (version < s.since && !in.has(key)) return;  // added after this report's schema
    if (s.omit_empty && !in.has(key)) return;       // written only when not empty
    if constexpr (std::is_same_v<T, std::string>) {
      field = in.text(key);
    } else if constexpr (std::is_same_v<T, bool>) {
      field = in.flag(key);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      field = in.integer(key, s.int_lo, s.int_hi);
    } else if constexpr (std::is_same_v<T, double>) {
      field = s.null_is_nan ? in.number_or_nan(key, s.lo, s.hi) : in.number(key, s.lo, s.hi);
    } else if constexpr (std::is_enum_v<T>) {
      const std::string text = in.text(key);
      const std::optional<T> e = parse_name<T>(text);
      if (!e) {
        in.refuse(in.field(key), nlohmann::json(text),
                  fmt::format("a {}: {}", EnumNames<T>::kWhat, known_names<T>()));
      }
      field = *e;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      field = in.texts(key);
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      field = in.integers(key, s.int_lo, s.int_hi);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      field = s.null_is_nan ? in.numbers_or_nan(key, s.lo, s.hi) : in.numbers(key, s.lo, s.hi);
    } else if constexpr (std::is_same_v<T, std::vector<std::vector<int64_t>>>) {
      field = in.integer_rows(key, s.int_lo, s.int_hi);
    } else if constexpr (std::is_same_v<T, std::vector<std::vector<bool>>>) {
      field = in.flag_rows(key);
    } else if constexpr (kIsRecord<T>) {
      const JsonFields sub = in.object(key);
      JsonReader r{sub, version};
      fields(r, field);
    } else {
      // A vector of records.
      field.clear();
      for (const JsonFields& sub : in.objects(key)) {
        JsonReader r{sub, version};
        fields(r, field.emplace_back());
      }
    }
  }
};

// The HTML report draws each preview index with its padding flag: the shapes must agree.
void require_preview_shape(const SamplerRecord& s) {
  bool same_shape = s.preview_padding.size() == s.preview.size();
  for (size_t r = 0; same_shape && r < s.preview.size(); ++r) {
    same_shape = s.preview_padding[r].size() == s.preview[r].size();
  }
  if (!same_shape) {
    throw InputError(
        "field config.sampler.preview_padding does not match preview row for row (was the file "
        "edited?)");
  }
}

// The formats and the gate key results by mode and world size: two results with one key would
// be rendered twice and matched once.
void require_unique_points(const std::vector<ModeResult>& results) {
  std::set<std::string> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string key = fmt::format("{}/{}", name_of(results[i].mode), results[i].world_size);
    if (!seen.insert(key).second) {
      throw InputError(fmt::format(
          "results[{}] repeats the point {} (mode/world size): a report holds each point once "
          "(was the file edited, or two reports merged?)",
          i, key));
    }
  }
}

}  // namespace

RunReport report_from_json(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("schema_version")) {
    throw InputError(
        "not a ddpbench report: no schema_version field (was it written by ddpbench?)");
  }
  const JsonFields top(doc, "");
  const int64_t version = top.integer("schema_version", 0, kAnyInt64);
  if (version < kOldestReadableSchema || version > kSchemaVersion) {
    throw InputError(fmt::format(
        "report schema_version {} is not supported (this ddpbench reads {} to {}): re-run the "
        "report's command with this ddpbench",
        version, kOldestReadableSchema, kSchemaVersion));
  }
  RunReport r;
  r.schema_version = static_cast<int>(version);
  JsonReader reader{top, version};
  reader("context", r.context, plain());
  reader("config", r.config, plain());
  reader("results", r.results, plain());
  reader("verdict", r.verdict, plain());
  require_preview_shape(r.config.sampler);
  if (r.results.empty()) {
    throw InputError(
        "holds no results (\"results\": []): there is nothing to judge; pass the report.json of "
        "a run that checked or timed something");
  }
  require_unique_points(r.results);
  if (top.flag("passed") != (r.verdict == Verdict::kPass)) {
    throw InputError(fmt::format(
        "\"passed\" is {} but \"verdict\" is {}: the two contradict each other (was the file "
        "edited?)",
        top.flag("passed"), name_of(r.verdict)));
  }
  require_recomputed(r);
  return r;
}

}  // namespace ddpbench::reports

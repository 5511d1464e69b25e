// json_reporter.cpp — see json_reporter.h. The fields and their names are record_fields.h's lists;
// reading a report back is json_report_reader.cpp, over the same lists.
#include "reports/run/json_reporter.h"

#include "reports/run/record_fields.h"
#include "reports/run/verdict.h"

namespace ddpbench::reports {
using nlohmann::json;

namespace {

template <typename T>
inline constexpr bool is_list = false;
template <typename T>
inline constexpr bool is_list<std::vector<T>> = true;

// Writes each visited field into `out` under its key.
struct JsonWriter {
  json& out;

  template <typename T>
  static json value(const T& v) {
    if constexpr (kIsRecord<T>) {
      json o = json::object();
      JsonWriter w{o};
      fields(w, v);
      return o;
    } else if constexpr (std::is_enum_v<T>) {
      return std::string(name_of(v));
    } else {
      return json(v);
    }
  }

  template <typename T>
  static json value(const std::vector<T>& v) {
    json a = json::array();
    for (const T& e : v) a.push_back(value(e));
    return a;
  }

  template <typename T>
  void operator()(const char* key, const T& field, const FieldSpec& s) {
    if constexpr (is_list<T>) {
      if (s.omit_empty && field.empty()) return;
    }
    out[key] = value(field);
  }
};

}  // namespace

json to_json(const RunReport& report) {
  return json{{"schema_version", report.schema_version},
              {"context", JsonWriter::value(report.context)},
              {"config", JsonWriter::value(report.config)},
              {"results", JsonWriter::value(report.results)},
              {"verdict", name_of(report.verdict)},
              // The verdict as every format prints it, with what it rests on (Note [What a mode
              // was judged against]); derived from the checks, and not read back.
              {"verdict_text", verdict_text(report)},
              // Kept beside the verdict for scripts that read a boolean; a reader checks both.
              {"passed", report.verdict == Verdict::kPass}};
}

std::string JsonReporter::render(const RunReport& report) const {
  return to_json(report).dump(2) + "\n";
}

}  // namespace ddpbench::reports

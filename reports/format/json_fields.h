// json_fields.h — reads the fields of one JSON object of a report.json, checking each field's type
// and range as it is read, so that a damaged or hand-edited report is refused with the field's
// path ("results[1].world_size is 1e+30: expected an integer from 1 to 1048576") instead of a
// number that wraps (nlohmann converts 1e30 to int64 by a plain cast) or a type error that names
// no field.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/run/record_fields.h"  // the bounds: kMaxCount, kMaxWorldSize, ...

namespace ddpbench::reports {

class JsonFields {
 public:
  // `path` names the object in messages ("config.sampler"); "" for the document itself.
  JsonFields(const nlohmann::json& object, std::string path);

  // Whether the object has field `key` (for fields an older schema lacks).
  bool has(const char* key) const;
  // Required fields: a missing one is an error naming it.
  std::string text(const char* key) const;
  bool flag(const char* key) const;
  int64_t integer(const char* key, int64_t lo, int64_t hi) const;
  // A finite number in [lo, hi].
  double number(const char* key, double lo, double hi) const;
  // A number in [lo, hi], or null, which JSON writes for NaN and infinities (a diverged loss, a
  // difference that overflowed): read as NaN.
  double number_or_nan(const char* key, double lo, double hi) const;
  std::vector<std::string> texts(const char* key) const;
  std::vector<int64_t> integers(const char* key, int64_t lo, int64_t hi) const;
  std::vector<double> numbers(const char* key, double lo, double hi) const;
  std::vector<double> numbers_or_nan(const char* key, double lo, double hi) const;
  // Arrays of arrays (the sampler's per-rank preview rows).
  std::vector<std::vector<int64_t>> integer_rows(const char* key, int64_t lo, int64_t hi) const;
  std::vector<std::vector<bool>> flag_rows(const char* key) const;
  JsonFields object(const char* key) const;
  // The elements of an array field, each an object, with its index in the path.
  std::vector<JsonFields> objects(const char* key) const;

  const std::string& path() const { return path_; }
  // The path of field `key` in messages ("results[1].world_size").
  std::string field(const char* key) const;
  // Throws the error every refusal of a field reads as.
  [[noreturn]] void refuse(const std::string& field, const nlohmann::json& value,
                           const std::string& expected) const;

 private:
  const nlohmann::json& at(const char* key) const;
  int64_t integer_value(const std::string& field, const nlohmann::json& v, int64_t lo,
                        int64_t hi) const;
  double number_value(const std::string& field, const nlohmann::json& v, double lo, double hi,
                      bool null_is_nan) const;

  const nlohmann::json& object_;
  std::string path_;
};

}  // namespace ddpbench::reports

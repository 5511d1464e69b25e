// json_fields.cpp — see json_fields.h.
#include "reports/format/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "errors.h"

namespace ddpbench::reports {
using nlohmann::json;

namespace {

// The offending value as the file has it, cut short (a field can hold a whole document).
std::string shown(const json& value) {
  std::string s = value.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string range_text(double lo, double hi) {
  if (hi >= 1e300) return fmt::format(">= {}", lo);
  return fmt::format("from {} to {}", lo, hi);
}

}  // namespace

JsonFields::JsonFields(const json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) refuse(path_.empty() ? "the document" : path_, object_, "an object");
}

std::string JsonFields::field(const char* key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonFields::refuse(const std::string& field, const json& value,
                        const std::string& expected) const {
  throw InputError(fmt::format("field {} is {}: expected {} (was the file edited?)", field,
                               shown(value), expected));
}

bool JsonFields::has(const char* key) const { return object_.contains(key); }

const json& JsonFields::at(const char* key) const {
  const auto it = object_.find(key);
  if (it == object_.end()) {
    throw InputError(
        fmt::format("field {} is missing (was the file written by ddpbench?)", field(key)));
  }
  return *it;
}

std::string JsonFields::text(const char* key) const {
  const json& v = at(key);
  if (!v.is_string()) refuse(field(key), v, "a string");
  return v.get<std::string>();
}

bool JsonFields::flag(const char* key) const {
  const json& v = at(key);
  if (!v.is_boolean()) refuse(field(key), v, "true or false");
  return v.get<bool>();
}

int64_t JsonFields::integer_value(const std::string& name, const json& v, int64_t lo,
                                  int64_t hi) const {
  const std::string expected = hi == kAnyInt64 ? fmt::format("an integer >= {}", lo)
                                               : fmt::format("an integer from {} to {}", lo, hi);
  // 1e30 or 2.5 are floats to nlohmann; an integer above int64 is unsigned and checked as such.
  // nlohmann reads every non-negative integer as unsigned: both bounds apply to it too.
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || (lo > 0 && u < static_cast<uint64_t>(lo))) {
      refuse(name, v, expected);
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (!v.is_number_integer()) refuse(name, v, expected);
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) refuse(name, v, expected);
  return x;
}

int64_t JsonFields::integer(const char* key, int64_t lo, int64_t hi) const {
  return integer_value(field(key), at(key), lo, hi);
}

double JsonFields::number_value(const std::string& name, const json& v, double lo, double hi,
                                bool null_is_nan) const {
  if (null_is_nan && v.is_null()) return std::nan("");
  const std::string expected =
      fmt::format("a number {}{}", range_text(lo, hi), null_is_nan ? " (or null)" : "");
  if (!v.is_number()) refuse(name, v, expected);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) refuse(name, v, expected);
  return x;
}

double JsonFields::number(const char* key, double lo, double hi) const {
  return number_value(field(key), at(key), lo, hi, false);
}

double JsonFields::number_or_nan(const char* key, double lo, double hi) const {
  return number_value(field(key), at(key), lo, hi, true);
}

namespace {

template <typename Read>
auto read_array(const json& v, const std::string& name, Read read) {
  std::vector<decltype(read(v, name))> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(read(v[i], fmt::format("{}[{}]", name, i)));
  return out;
}

}  // namespace

std::vector<std::string> JsonFields::texts(const char* key) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of strings");
  return read_array(v, field(key), [this](const json& e, const std::string& name) {
    if (!e.is_string()) refuse(name, e, "a string");
    return e.get<std::string>();
  });
}

std::vector<int64_t> JsonFields::integers(const char* key, int64_t lo, int64_t hi) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of integers");
  return read_array(v, field(key), [&](const json& e, const std::string& name) {
    return integer_value(name, e, lo, hi);
  });
}

std::vector<double> JsonFields::numbers(const char* key, double lo, double hi) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of numbers");
  return read_array(v, field(key), [&](const json& e, const std::string& name) {
    return number_value(name, e, lo, hi, false);
  });
}

std::vector<double> JsonFields::numbers_or_nan(const char* key, double lo, double hi) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of numbers");
  return read_array(v, field(key), [&](const json& e, const std::string& name) {
    return number_value(name, e, lo, hi, true);
  });
}

std::vector<std::vector<int64_t>> JsonFields::integer_rows(const char* key, int64_t lo,
                                                           int64_t hi) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of arrays of integers");
  return read_array(v, field(key), [&](const json& row, const std::string& name) {
    if (!row.is_array()) refuse(name, row, "an array of integers");
    return read_array(row, name, [&](const json& e, const std::string& element) {
      return integer_value(element, e, lo, hi);
    });
  });
}

std::vector<std::vector<bool>> JsonFields::flag_rows(const char* key) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of arrays of true/false");
  return read_array(v, field(key), [this](const json& row, const std::string& name) {
    if (!row.is_array()) refuse(name, row, "an array of true/false");
    return read_array(row, name, [this](const json& e, const std::string& element) {
      if (!e.is_boolean()) refuse(element, e, "true or false");
      return e.get<bool>();
    });
  });
}

JsonFields JsonFields::object(const char* key) const { return JsonFields(at(key), field(key)); }

std::vector<JsonFields> JsonFields::objects(const char* key) const {
  const json& v = at(key);
  if (!v.is_array()) refuse(field(key), v, "an array of objects");
  std::vector<JsonFields> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.emplace_back(v[i], fmt::format("{}[{}]", field(key), i));
  return out;
}

}  // namespace ddpbench::reports

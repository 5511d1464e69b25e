// validators.h — CLI11 validators whose messages name the flag's rule in plain words (CLI11's
// built-in PositiveNumber prints a 300-digit upper bound).
#pragma once

#include <CLI/Validators.hpp>
#include <string>

namespace ddpbench::cli {

// Accepts integers >= minimum; the message says "must be an integer >= minimum".
inline CLI::Validator integer_at_least(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const long long v = std::stoll(value, &used);
          if (used == value.size() && v >= minimum) return {};
        } catch (const std::exception&) {
        }
        return "'" + value + "' must be an integer >= " + std::to_string(minimum);
      },
      "INT>=" + std::to_string(minimum));
}

}  // namespace ddpbench::cli

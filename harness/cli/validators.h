// validators.h — CLI11 validators whose messages name the flag's rule in plain words (CLI11's
// built-in PositiveNumber prints a 300-digit upper bound).
#pragma once

#include <CLI/Validators.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpbench::cli {

// Accepts integers from minimum to maximum. The message says "must be an integer >= minimum", or
// "is too large: at most maximum" for a number past the bound or past what int64 holds (which
// std::stoll reports as out of range, not as a number).
inline CLI::Validator integer_in(long long minimum, long long maximum) {
  const bool bounded = maximum != std::numeric_limits<long long>::max();
  return CLI::Validator(
      [minimum, maximum](std::string& value) -> std::string {
        const auto too_large = [&] {
          return "'" + value + "' is too large: at most " + std::to_string(maximum);
        };
        try {
          size_t used = 0;
          const long long v = std::stoll(value, &used);
          if (used == value.size() && v >= minimum && v <= maximum) return {};
          if (used == value.size() && v > maximum) return too_large();
        } catch (const std::out_of_range&) {
          if (value.find_first_not_of(" +0123456789") == std::string::npos) return too_large();
        } catch (const std::exception&) {
        }
        return "'" + value + "' must be an integer >= " + std::to_string(minimum);
      },
      bounded ? "INT in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]"
              : "INT>=" + std::to_string(minimum));
}

// Accepts integers >= minimum (up to what int64 holds).
inline CLI::Validator integer_at_least(long long minimum) {
  return integer_in(minimum, std::numeric_limits<long long>::max());
}

// Accepts one of a few integers; the message lists them ("must be 1, 2 or 3"). CLI11's IsMember
// echoes a refused value with no reason ("--zero-stage: 1.5").
inline CLI::Validator integer_one_of(std::vector<long long> allowed, const std::string& meaning) {
  std::string listed;
  for (size_t i = 0; i < allowed.size(); ++i) {
    listed += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::to_string(allowed[i]);
  }
  return CLI::Validator(
      [allowed, listed, meaning](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const long long v = std::stoll(value, &used);
          if (used == value.size() && std::find(allowed.begin(), allowed.end(), v) != allowed.end())
            return {};
        } catch (const std::exception&) {
        }
        return "'" + value + "' must be " + listed + " (" + meaning + ")";
      },
      "{" + listed + "}");
}

// Accepts finite numbers from 0 to 1 (CLI11's Range lets nan through: every comparison with it
// is false); the message says what the fraction means.
inline CLI::Validator fraction_0_to_1(const std::string& meaning) {
  return CLI::Validator(
      [meaning](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(value, &used);
          // -0 too is refused: "-0.0% allowed" is no fraction a user means.
          if (used == value.size() && std::isfinite(v) && !std::signbit(v) && v <= 1) return {};
        } catch (const std::exception&) {
        }
        const bool minus = value.find('-') != std::string::npos;
        return "'" + value + "' must be a fraction from 0 to 1" +
               (minus ? ", with no minus sign" : "") + " (" + meaning + ")";
      },
      "FRACTION");
}

// Accepts numbers from `minimum` to `maximum`; the message says what the number is, e.g. "link
// speed in Gbit/s, e.g. 100". The bounds keep what follows printable: a latency of 1.7e308 us
// made `project` print numbers hundreds of digits long.
inline CLI::Validator number_in(double minimum, double maximum, const std::string& meaning) {
  return CLI::Validator(
      [minimum, maximum, meaning](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(value, &used);
          if (used == value.size() && v >= minimum && v <= maximum) return {};
        } catch (const std::exception&) {
        }
        return "'" + value + "' must be a number from " + CLI::detail::to_string(minimum) + " to " +
               CLI::detail::to_string(maximum) + " (" + meaning + ")";
      },
      "NUMBER");
}

}  // namespace ddpbench::cli

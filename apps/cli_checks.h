// CLI11 validators whose messages read well ("--m: expected a positive integer, got '0'") instead of CLI11's
// numeric-range text that prints the double maximum.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ct::app {

inline CLI::Validator integer_at_least(long long min, const std::string& what) {
  return CLI::Validator(
      [min, what](std::string& value) -> std::string {
        try {
          size_t used = 0;
          long long v = std::stoll(value, &used);
          if (used == value.size() && v >= min) return "";
        } catch (const std::exception&) {
        }
        return "expected " + what + ", got '" + value + "'";
      },
      what);
}

inline const CLI::Validator kPositive = integer_at_least(1, "a positive integer");
inline const CLI::Validator kNonNegative = integer_at_least(0, "a non-negative integer");

}  // namespace ct::app

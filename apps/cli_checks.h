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

// nccl-tests' size syntax: an integer with an optional K, M or G suffix, binary as there (1K = 1024, 64M =
// 67108864). Used with ->transform(): the option then receives the plain number.
inline CLI::Validator size_at_least(long long min, const std::string& what) {
  return CLI::Validator(
      [min, what](std::string& value) -> std::string {
        try {
          size_t used = 0;
          long long v = std::stoll(value, &used);
          long long scale = 1;
          if (used + 1 == value.size()) {
            switch (value[used]) {
              case 'K':
              case 'k':
                scale = 1LL << 10;
                break;
              case 'M':
              case 'm':
                scale = 1LL << 20;
                break;
              case 'G':
              case 'g':
                scale = 1LL << 30;
                break;
              default:
                scale = 0;
            }
          } else if (used != value.size()) {
            scale = 0;
          }
          if (scale > 0 && v >= 0 && v <= (1LL << 62) / scale && v * scale >= min) {
            value = std::to_string(v * scale);
            return "";
          }
        } catch (const std::exception&) {
        }
        return "expected " + what + " (an integer, optionally with K, M or G: 64M), got '" + value + "'";
      },
      what);
}

inline const CLI::Validator kPositive = integer_at_least(1, "a positive integer");
inline const CLI::Validator kPositiveSize = size_at_least(1, "a positive size");
inline const CLI::Validator kNonNegative = integer_at_least(0, "a non-negative integer");

}  // namespace ct::app

// Leveled logging to stderr, one line per call, prefixed with the rank once distribution sets it.
// CORETRAIN_LOG_LEVEL=debug|info|warning|error (default info).
#pragma once

#include <string>

#include "core/error.h"

namespace ct::log {

enum class Level { debug = 0, info = 1, warning = 2, error = 3 };

Level level();
void set_level(Level level);
// Prefix every line with "[rank r]" when world > 1.
void set_rank(int rank, int world);
void write(Level level, const std::string& line);

template <class... Args>
void debug(const Args&... args) {
  if (level() <= Level::debug) write(Level::debug, str(args...));
}
template <class... Args>
void info(const Args&... args) {
  if (level() <= Level::info) write(Level::info, str(args...));
}
template <class... Args>
void warn(const Args&... args) {
  if (level() <= Level::warning) write(Level::warning, str(args...));
}
template <class... Args>
void error(const Args&... args) {
  write(Level::error, str(args...));
}

}  // namespace ct::log

#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ct::log {
namespace {

Level level_from_env() {
  const char* v = std::getenv("CORETRAIN_LOG_LEVEL");
  if (!v) return Level::info;
  if (!std::strcmp(v, "debug")) return Level::debug;
  if (!std::strcmp(v, "warning") || !std::strcmp(v, "warn")) return Level::warning;
  if (!std::strcmp(v, "error")) return Level::error;
  return Level::info;
}

std::atomic<int> g_level{static_cast<int>(level_from_env())};
std::atomic<int> g_rank{0};
std::atomic<int> g_world{1};
std::mutex g_mu;

}  // namespace

Level level() {
  return static_cast<Level>(g_level.load(std::memory_order_relaxed));
}
void set_level(Level l) {
  g_level.store(static_cast<int>(l));
}
void set_rank(int rank, int world) {
  g_rank.store(rank);
  g_world.store(world);
}

void write(Level l, const std::string& line) {
  static const char* names[] = {"debug", "info", "warning", "error"};
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_world.load() > 1)
    std::fprintf(stderr, "[rank %d] %s: %s\n", g_rank.load(), names[static_cast<int>(l)], line.c_str());
  else
    std::fprintf(stderr, "%s: %s\n", names[static_cast<int>(l)], line.c_str());
  std::fflush(stderr);
}

}  // namespace ct::log

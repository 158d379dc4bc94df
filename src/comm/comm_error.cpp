// The process-wide failure mark (see comm_error.h).
#include "comm/comm_error.h"

#include <atomic>

namespace ct::comm {
namespace {
std::atomic<bool> g_failed{false};
}

void mark_comm_failed() {
  g_failed.store(true);
}
bool comm_failed() {
  return g_failed.load();
}

}  // namespace ct::comm

// `coretrain version`: what was built and what this CPU offers the engine.
#include <cstdio>

#include "apps/command.h"
#include "core/parallel.h"

namespace {

int run_version(int, char**) {
  std::printf("coretrain 0.1 (C++20), %d OpenMP threads\n", ct::num_threads());
  return 0;
}

}  // namespace

CT_COMMAND("version", "print the version and thread count", run_version);

// Thread count for compute: OpenMP's, which honours OMP_NUM_THREADS as the HF guide's launch lines set it.
#pragma once

#include <omp.h>

namespace ct {

inline int num_threads() {
  return omp_get_max_threads();
}

}  // namespace ct

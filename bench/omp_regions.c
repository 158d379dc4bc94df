// Counts OpenMP parallel regions (libgomp's GOMP_parallel* entry points) by call site, for a whole process:
// a deterministic measure of how many fork/join barriers a training step pays, whatever the machine's load.
//
//   gcc -O2 -shared -fPIC -o /tmp/omp_regions.so bench/omp_regions.c -ldl
//   OMP_REGIONS_OUT=/tmp/r1.txt LD_PRELOAD=/tmp/omp_regions.so coretrain bench step --layers 2 --steps 1
//   OMP_REGIONS_OUT=/tmp/r2.txt LD_PRELOAD=/tmp/omp_regions.so coretrain bench step --layers 2 --steps 2
//
// The difference of the two totals is one step's regions. Each later line is "count library offset"; for
// coretrain's own sites `addr2line -f -C -e coretrain offset` names the function.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define kSites 4096
static void* sites[kSites];
static unsigned long counts[kSites];
static unsigned long total;

// Called from the thread that opens a region (regions nest rarely here; the table is not locked).
static void note(void* site) {
  __atomic_add_fetch(&total, 1, __ATOMIC_RELAXED);
  const uintptr_t h = ((uintptr_t)site >> 2) % kSites;
  for (int i = 0; i < kSites; ++i) {
    const int j = (int)((h + (uintptr_t)i) % kSites);
    if (sites[j] == site || !sites[j]) {
      sites[j] = site;
      counts[j]++;
      return;
    }
  }
}

typedef void (*parallel_fn)(void (*)(void*), void*, unsigned, unsigned);
void GOMP_parallel(void (*fn)(void*), void* data, unsigned n, unsigned flags) {
  static parallel_fn real;
  if (!real) real = (parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
  note(__builtin_return_address(0));
  real(fn, data, n, flags);
}

typedef void (*loop_fn)(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);
#define LOOP_ENTRY(name)                                                                                 \
  void name(void (*fn)(void*), void* data, unsigned n, long a, long b, long c, long d, unsigned flags) { \
    static loop_fn real;                                                                                 \
    if (!real) real = (loop_fn)dlsym(RTLD_NEXT, #name);                                                  \
    note(__builtin_return_address(0));                                                                   \
    real(fn, data, n, a, b, c, d, flags);                                                                \
  }
LOOP_ENTRY(GOMP_parallel_loop_static)
LOOP_ENTRY(GOMP_parallel_loop_dynamic)
LOOP_ENTRY(GOMP_parallel_loop_guided)
LOOP_ENTRY(GOMP_parallel_loop_runtime)

__attribute__((destructor)) static void dump(void) {
  const char* path = getenv("OMP_REGIONS_OUT");
  FILE* out = path ? fopen(path, "w") : stderr;
  if (!out) return;
  fprintf(out, "total %lu\n", total);
  for (int j = 0; j < kSites; ++j) {
    if (!sites[j]) continue;
    Dl_info info;
    if (dladdr(sites[j], &info) && info.dli_fname)
      fprintf(out, "%lu %s 0x%lx\n", counts[j], info.dli_fname,
              (unsigned long)((char*)sites[j] - (char*)info.dli_fbase));
    else
      fprintf(out, "%lu ? %p\n", counts[j], sites[j]);
  }
  if (path) fclose(out);
}

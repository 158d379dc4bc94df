#!/usr/bin/env bash
# Runs the whole test suite once per oneDNN ISA level this CPU allows (DNNL_MAX_CPU_ISA=AVX2, AVX512_CORE,
# AVX512_CORE_VNNI, AVX512_CORE_BF16, AVX512_CORE_AMX, as far as the CPU goes), so a test that holds only on
# the developer's ISA (a bit-for-bit comparison across kernels that sum in another order) fails here and not
# on a user's machine. Not part of `make test` (it multiplies its time); run it before resolving a change to
# kernels or to a test that compares numbers.
#   scripts/test-each-isa.sh                 every level, every test
#   scripts/test-each-isa.sh -R 'QaBinary'   extra arguments go to ctest (e.g. a subset)
#   ISA_LEVELS="AVX2 AVX512_CORE" scripts/test-each-isa.sh   chosen levels only
#   PRESET=debug scripts/test-each-isa.sh    another CMake preset's build (default release)
# Builds the preset first. Exits non-zero if any level fails; prints one line per level.
# DNNL_MAX_CPU_ISA limits oneDNN's kernels (the matmuls) only; coretrain's own kernels keep the ISA they were
# compiled for (-march=native in release), so an AVX-512 host still runs its 512-bit loops at every level.
set -uo pipefail
cd "$(dirname "$0")/.."
PRESET=${PRESET:-release}
BUILD=build/$PRESET
JOBS=${JOBS:-$(nproc)}

flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { for f in "$@"; do [[ " $flags " == *" $f "* ]] || return 1; done; }

levels=()
if [ -n "${ISA_LEVELS:-}" ]; then
  read -r -a levels <<<"$ISA_LEVELS"
else
  has avx2 fma && levels+=(AVX2)
  has avx512f avx512bw avx512vl avx512dq && levels+=(AVX512_CORE)
  has avx512f avx512bw avx512vl avx512dq avx512_vnni && levels+=(AVX512_CORE_VNNI)
  has avx512f avx512bw avx512vl avx512dq avx512_bf16 && levels+=(AVX512_CORE_BF16)
  has avx512_bf16 amx_tile amx_bf16 && levels+=(AVX512_CORE_AMX)
fi
if [ ${#levels[@]} -eq 0 ]; then
  echo "test-each-isa: this CPU has no AVX2; coretrain needs x86-64 with AVX2 and FMA" >&2
  exit 2
fi

scripts/install-deps.sh >/dev/null &&
  cmake --preset "$PRESET" >/dev/null &&
  cmake --build "$BUILD" -j "$JOBS" >/dev/null || { echo "test-each-isa: building $BUILD failed" >&2; exit 2; }
bin=$BUILD/apps/coretrain

summary=()
status=0
for level in "${levels[@]}"; do
  isa=$(DNNL_MAX_CPU_ISA=$level "$bin" version | sed -n 's/^oneDNN ISA \([^,]*\),.*/\1/p')
  log=$BUILD/test-isa-$level.log
  echo "== DNNL_MAX_CPU_ISA=$level (oneDNN runs $isa): ctest, log in $log"
  start=$(date +%s)
  DNNL_MAX_CPU_ISA=$level ctest --test-dir "$BUILD" -j "$JOBS" --output-on-failure "$@" >"$log" 2>&1
  rc=$?
  result=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1)
  [ -n "$result" ] || result="ctest exited $rc (see $log)"
  line="$level ($isa): $result, $(($(date +%s) - start)) s"
  echo "$line"
  grep -E '^\s+[0-9]+ - .* \((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)' "$log" | sed 's/^/    /'
  summary+=("$line")
  [ $rc -eq 0 ] || status=1
done

echo "== test-each-isa summary ($(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'))"
printf '%s\n' "${summary[@]}"
exit $status

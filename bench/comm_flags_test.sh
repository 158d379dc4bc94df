#!/bin/sh
# comm_flags_test.sh CORETRAIN: `coretrain bench comm` / `bench triad` reject bad flags with one line naming the flag,
# and a single-process run (no launcher) works and checks clean. Run by ctest (comm.bench_flags).
set -u
bin=$1
fails=0
expect_error() {  # expect_error "text in the error" args...
  want=$1
  shift
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] || ! printf '%s' "$out" | grep -qF -- "$want"; then
    echo "FAIL: coretrain $* -> rc $rc, wanted an error containing '$want', got: $out"
    fails=$((fails + 1))
  fi
}
expect_error "--op: expected allreduce|reduce_scatter|allgather|alltoall|broadcast, got 'sum'" bench comm --op sum
expect_error "--dtype: expected f32|bf16, got 'f16'" bench comm --dtype f16
expect_error "--min-bytes 64 must be in [1, --max-bytes 8]" bench comm --min-bytes 64 --max-bytes 8
expect_error "--max-bytes 536870912 exceeds 256 MiB" bench comm --max-bytes 536870912
expect_error "--max-bytes: expected a positive size (an integer, optionally with K, M or G: 64M), got '64X'" bench comm --max-bytes 64X
expect_error "--max-bytes 536870912 exceeds 256 MiB" bench comm --max-bytes 512M
expect_error "--iters must be >= 1" bench comm --iters 0
expect_error "--impl: expected a comma list of coretrain,mpi,gloo, got 'nccl'" bench comm --impl coretrain,nccl
expect_error "--shared applies to the coretrain side" bench comm --shared --impl mpi
expect_error "--mib must be in [1, 4096], got 0" bench triad --mib 0

out=$("$bin" bench comm --check --op allreduce --max-bytes 4096 --iters 2 --warmup 1 --impl coretrain,gloo 2>&1) \
  || { echo "FAIL: single-process run: $out"; fails=$((fails + 1)); }
printf '%s\n' "$out" | grep -q "# total errors: 0" || { echo "FAIL: no clean check line: $out"; fails=$((fails + 1)); }
json=$("$bin" bench comm --json --op broadcast --min-bytes 1024 --max-bytes 1024 --iters 1 --impl coretrain 2>&1)
printf '%s\n' "$json" | grep -q '^{"impl":"coretrain","op":"broadcast","dtype":"f32","bytes":1024,"ranks":1,' \
  || { echo "FAIL: json line: $json"; fails=$((fails + 1)); }
# nccl-tests' size suffixes: 1K..4K is 1024, 2048, 4096 bytes.
sizes=$("$bin" bench comm --json --op allreduce --min-bytes 1K --max-bytes 4K --iters 1 --impl coretrain 2>&1 \
  | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' | tr '\n' ' ')
[ "$sizes" = "1024 2048 4096 " ] || { echo "FAIL: --min-bytes 1K --max-bytes 4K gave sizes '$sizes'"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo PASS
exit "$fails"

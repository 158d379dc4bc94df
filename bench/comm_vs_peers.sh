#!/bin/sh
# comm_vs_peers.sh [CORETRAIN] [RANKS]: the "Collectives" table of docs/benchmarks.md. coretrain's collectives against
# plain MPICH (MPI_Allreduce, ...) and plain Gloo in the same runs, on one node, plus the STREAM-style triad that
# bounds them (one process per rank, all at once). Defaults: build/release/apps/coretrain, 2 ranks.
# Set QUICK=1 for a short pass (fewer sizes and iterations).
set -eu
bin=${1:-build/release/apps/coretrain}
ranks=${2:-2}
[ -x "$bin" ] || { echo "comm_vs_peers.sh: no coretrain binary at '$bin' (build it, or pass its path)" >&2; exit 2; }
if [ "${QUICK:-0}" = 1 ]; then iters=5 warmup=2 max=67108864; else iters=20 warmup=5 max=268435456; fi

echo "## triad (memory-bandwidth bound)"
"$bin" bench triad --mib 128 --iters 10
mpiexec -n "$ranks" "$bin" bench triad --mib 128 --iters 10

for shared in "" "--shared"; do
  echo "## allreduce f32 $shared"
  mpiexec -n "$ranks" "$bin" bench comm --op allreduce --dtype f32 --min-bytes 8 --max-bytes "$max" \
    --iters "$iters" --warmup "$warmup" $shared
done
echo "## allreduce bf16"
mpiexec -n "$ranks" "$bin" bench comm --op allreduce --dtype bf16 --min-bytes 8 --max-bytes 67108864 \
  --iters "$iters" --warmup "$warmup"
for op in reduce_scatter allgather alltoall broadcast; do
  echo "## $op f32"
  mpiexec -n "$ranks" "$bin" bench comm --op "$op" --dtype f32 --min-bytes 1024 --max-bytes 67108864 \
    --iters "$iters" --warmup "$warmup"
done

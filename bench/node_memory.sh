#!/bin/bash
# Peak memory of a job on this node: runs the command and samples every 0.3 s, until it exits, the private
# (anonymous) resident memory of every process named coretrain plus the growth of the node's shared memory
# (/proc/meminfo Shmem: the shared-memory segments of the ranks' collectives, gradients and optimizer state);
# prints the peaks. Per-process RSS counts a page of shared memory once per process that touches it, so it
# cannot show what a node saves by sharing; this sum can.
#   bench/node_memory.sh /usr/bin/python3 bench/ddp_vs_torch.py --only a --steps 6
set -u
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
shmem() { awk '/^Shmem:/{print $2}' /proc/meminfo; }
base=$(shmem)
"$@" &
job=$!
anon_max=0 shm_max=0 total_max=0
while kill -0 "$job" 2>/dev/null; do
  anon=0
  for p in $(pgrep -x coretrain); do
    v=$(awk '/^RssAnon:/{print $2}' "/proc/$p/status" 2>/dev/null)
    anon=$((anon + ${v:-0}))
  done
  shm=$(($(shmem) - base))
  ((anon > anon_max)) && anon_max=$anon
  ((shm > shm_max)) && shm_max=$shm
  ((anon + shm > total_max)) && total_max=$((anon + shm))
  sleep 0.3
done
wait "$job"
rc=$?
echo "node_memory: peak private (coretrain processes) $((anon_max / 1024)) MB, peak shared $((shm_max / 1024)) MB, peak sum $((total_max / 1024)) MB"
exit $rc

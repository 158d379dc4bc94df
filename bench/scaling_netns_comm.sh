#!/bin/sh
# scaling_netns_comm.sh CORETRAIN [RATE] [MAX_BYTES]: the inter-node input of bench/scaling_model.py. Two "nodes"
# (network namespaces joined by veth through a bridge, tests/comm/netns_lib.sh), one rank on each, env-var launch
# (so coretrain's inter-node leg is its Gloo transport over TCP, as under `coretrain run` / torchrun), and
# `coretrain bench comm --op allreduce --json --impl coretrain` from 8 B to MAX_BYTES (default 16M). Prints the JSON
# lines of rank 0 on stdout. RATE (default none) shapes both veths with tc tbf (e.g. 10gbit), as bench/ddp_netns.sh.
# Needs root (network namespaces); exits 77 when namespaces are not allowed. Not part of ctest.
set -u
coretrain=$1
RATE=${2:-none}
MAX=${3:-16M}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/comm/netns_lib.sh"
# Away from the subnets/ports the ctest netns tests use (10.100-249.x, 20000-31999), like bench/ddp_netns.sh.
NETNS_SUBNET="10.$((250 + NETNS_ID % 5)).$(((NETNS_ID / 5) % 250))"
port=$((12000 + NETNS_ID % 8000))
export NETNS_RUN_TIMEOUT=${NETNS_RUN_TIMEOUT:-300} CORETRAIN_COMM_TIMEOUT=120 OMP_NUM_THREADS=1
netns_setup 2 || { echo "scaling_netns_comm.sh: namespace setup failed" >&2; exit 1; }
if [ "$RATE" != none ]; then
  for k in 0 1; do
    ip netns exec "${NETNS_PREFIX}$k" tc qdisc add dev "v${NETNS_ID}n$k" root tbf rate "$RATE" burst 1mb \
      latency 10ms || { echo "scaling_netns_comm.sh: tc tbf failed" >&2; exit 1; }
  done
fi
# Small sizes need many iterations to average out scheduling; large ones few (each moves MBs over TCP).
netns_envlaunch 2 1 "$port" "$coretrain" bench comm --op allreduce --impl coretrain --json \
  --min-bytes 8 --max-bytes 4K --iters 500 --warmup 50 || exit 1
netns_envlaunch 2 1 "$((port + 1))" "$coretrain" bench comm --op allreduce --impl coretrain --json \
  --min-bytes 64K --max-bytes "$MAX" --iters 10 --warmup 2 || exit 1

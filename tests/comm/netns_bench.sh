#!/bin/sh
# netns_bench.sh MODE NODES PPN CORETRAIN: the Communicator's hierarchical path across "nodes" that are network
# namespaces: `coretrain bench comm --check` for every collective (f32, and bf16 allreduce), launched by mpiexec
# through deploy/netns-launch (MODE mpi: inter-node traffic over MPI/TCP) or per-namespace env vars (MODE env: Gloo
# over TCP). Fails on any wrong element, any failed rank, or when node 0's veth carried less than the largest
# allreduce (i.e. the inter-node leg did not cross the link).
# Known limit: under mpiexec, MPICH 4.0 over UCX/TCP intermittently deadlocks inside MPI_Finalize across
# namespaces after every rank has finished and verified its results (one rank spins in ucp_worker_progress closing
# endpoints while the others wait in the PMI barrier; seen with 1 and 2 ranks per namespace, in roughly a third to a
# half of runs). `coretrain bench comm` therefore leaves without MPI_Finalize when its job spans nodes, after a
# timed barrier (6 of 6 `mpi 3 1` runs passed by hand with that). ctest still runs MODE env only; MODE mpi is for running by hand (`netns_bench.sh mpi 3 1 coretrain`),
# limited to the allreduce runs, every run bounded by NETNS_RUN_TIMEOUT. MpiTransport itself is covered across
# namespaces by netns_transport.sh, which leaves without MPI_Finalize once all ranks have met.
set -u
mode=$1 nodes=$2 ppn=$3 coretrain=$4
here=$(cd "$(dirname "$0")" && pwd)
NETNS_LAUNCH="$here/../../deploy/netns-launch"
. "$here/netns_lib.sh"
netns_setup "$nodes" || { echo "FAIL: namespace setup"; exit 1; }
# Bounded runs (each takes seconds) that all fit in ctest's TIMEOUT, so ctest never has to kill the script.
export CORETRAIN_COMM_TIMEOUT=20 NETNS_RUN_TIMEOUT=25

max=1048576
port=$((20000 + NETNS_ID % 12000))
run() {
  case "$mode" in
    mpi) netns_mpiexec "$nodes" "$ppn" "$coretrain" bench comm --check --iters 2 --warmup 1 --max-bytes $max "$@" ;;
    env) port=$((port + 1))
         netns_envlaunch "$nodes" "$ppn" "$port" "$coretrain" bench comm --check --iters 2 --warmup 1 --max-bytes $max "$@" ;;
  esac
}
before=$(netns_tx_bytes 0)
fails=0
run --op allreduce --impl coretrain,mpi,gloo || fails=$((fails + 1))
after=$(netns_tx_bytes 0)
# Under mpiexec each extra run is another chance of the finalize deadlock described above: the other ops run
# under MODE env only (the transport-level ops under mpiexec are covered by netns_transport.sh).
ops="reduce_scatter allgather alltoall broadcast"
[ "$mode" = mpi ] && ops=""
for op in $ops; do
  run --op "$op" --impl coretrain --min-bytes 4 || fails=$((fails + 1))
done
run --op allreduce --dtype bf16 --impl coretrain --min-bytes 2 || fails=$((fails + 1))
run --op allreduce --shared --impl coretrain --min-bytes 4096 || fails=$((fails + 1))
sent=$((after - before))
echo "node 0 veth sent $sent bytes during the allreduce run"
if [ "$fails" -ne 0 ]; then echo "FAIL: $fails bench run(s) failed"; exit 1; fi
if [ "$sent" -lt "$max" ]; then echo "FAIL: too little crossed the veth link"; exit 1; fi
echo "PASS"

#!/bin/sh
# netns_transport.sh MODE NODES PPN PROGRAM: the transports across "nodes" that are network namespaces. MODE mpi:
# mpiexec with a hostfile and -ppn through deploy/netns-launch (MpiTransport); MODE env: env-var launch per namespace
# (GlooTransport over the TCP store at node 0). PROGRAM is ct_transport_check; its group is "my local rank on every
# node", so every byte it checks crossed the veth links. Also checks node 0's veth TX counter grew by at least the
# big allreduce's size, i.e. the data did not take a shared-memory shortcut.
set -u
mode=$1 nodes=$2 ppn=$3 prog=$4
here=$(cd "$(dirname "$0")" && pwd)
NETNS_LAUNCH="$here/../../deploy/netns-launch"
. "$here/netns_lib.sh"
netns_setup "$nodes" || { echo "FAIL: namespace setup"; exit 1; }

floats=2000000  # 8 MB per allreduce
before=$(netns_tx_bytes 0)
case "$mode" in
  mpi) netns_mpiexec "$nodes" "$ppn" "$prog" "$floats"; rc=$? ;;
  env) CORETRAIN_COMM_TIMEOUT=60 netns_envlaunch "$nodes" "$ppn" $((20000 + NETNS_ID % 12000)) "$prog" "$floats"; rc=$? ;;
  *) echo "FAIL: mode must be mpi or env, got '$mode'"; exit 2 ;;
esac
after=$(netns_tx_bytes 0)
sent=$((after - before))
echo "node 0 veth sent $sent bytes (big allreduce alone: $((floats * 4)) bytes)"
if [ "$rc" -ne 0 ]; then echo "FAIL: a rank failed (rc $rc)"; exit 1; fi
if [ "$sent" -lt $((floats * 4)) ]; then echo "FAIL: too little crossed the veth link; traffic did not use TCP"; exit 1; fi
echo "PASS"

# netns_lib.sh: sourced by tests/comm/netns_*.sh. Builds N "nodes" as network namespaces on a private bridge (the
# bridge lives in its own hub namespace, so the host's network is untouched), with names and a subnet unique to
# this run, and removes everything on exit, failure or signal. Skips (exit 77) only when namespaces are not allowed.

NETNS_ID=$(( ($$ * 7 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % 9000000 + 1000000 ))
NETNS_PREFIX="ctn${NETNS_ID}"
NETNS_SUBNET="10.$(( 100 + NETNS_ID % 150 )).$(( (NETNS_ID / 150) % 250 ))"
NETNS_NODES=""
NETNS_MAP=""

netns_cleanup() {
  [ -n "${NETNS_HOSTFILE:-}" ] && rm -f "$NETNS_HOSTFILE"
  for ns in $NETNS_NODES "${NETNS_PREFIX}h"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  return 0
}

# Namespaces of earlier runs that were killed outright (SIGKILL leaves no chance to trap): ours by name, empty of
# processes, and older than any run lasts.
netns_sweep_stale() {
  for f in $(find /run/netns -maxdepth 1 -name 'ctn*' -mmin +15 2>/dev/null); do
    ns=${f##*/}
    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && ip netns del "$ns" 2>/dev/null
  done
  return 0
}

# netns_setup N: namespaces ${NETNS_PREFIX}0..N-1 with addresses $NETNS_SUBNET.1..N on veth v${NETNS_ID}nI.
netns_setup() {
  trap netns_cleanup EXIT
  trap 'exit 130' INT TERM
  netns_sweep_stale
  if ! ip netns add "${NETNS_PREFIX}h" 2>/dev/null; then
    echo "SKIP: cannot create network namespaces here (ip netns add needs root / CAP_SYS_ADMIN)"
    trap - EXIT
    exit 77
  fi
  ip netns exec "${NETNS_PREFIX}h" ip link add br0 type bridge || return 1
  ip netns exec "${NETNS_PREFIX}h" ip link set br0 up || return 1
  i=0
  while [ "$i" -lt "$1" ]; do
    ns="${NETNS_PREFIX}$i"
    ip netns add "$ns" || return 1
    NETNS_NODES="$NETNS_NODES $ns"
    ip link add "v${NETNS_ID}n$i" type veth peer name "p${NETNS_ID}n$i" || return 1
    ip link set "v${NETNS_ID}n$i" netns "$ns" || return 1
    ip link set "p${NETNS_ID}n$i" netns "${NETNS_PREFIX}h" || return 1
    ip netns exec "${NETNS_PREFIX}h" ip link set "p${NETNS_ID}n$i" master br0 up || return 1
    ip netns exec "$ns" ip addr add "$NETNS_SUBNET.$((i + 1))/24" dev "v${NETNS_ID}n$i" || return 1
    ip netns exec "$ns" ip link set lo up || return 1
    ip netns exec "$ns" ip link set "v${NETNS_ID}n$i" up || return 1
    NETNS_MAP="$NETNS_MAP $NETNS_SUBNET.$((i + 1))=$ns"
    i=$((i + 1))
  done
  export CT_NETNS_MAP="$NETNS_MAP"
}

# Bytes sent so far by node I's veth.
netns_tx_bytes() {
  ip netns exec "${NETNS_PREFIX}$1" cat "/sys/class/net/v${NETNS_ID}n$1/statistics/tx_bytes"
}

# netns_mpiexec NODES PPN PROGRAM ARGS...: mpiexec with a hostfile over the namespaces, proxies started through
# deploy/netns-launch; UCX restricted to TCP (otherwise it sees one machine and uses shared memory).
netns_mpiexec() {
  nodes=$1 ppn=$2
  shift 2
  hostfile=$(mktemp /tmp/ct-netns-hosts.XXXXXX)
  NETNS_HOSTFILE=$hostfile
  i=0
  while [ "$i" -lt "$nodes" ]; do
    echo "$NETNS_SUBNET.$((i + 1)):$ppn" >> "$hostfile"
    i=$((i + 1))
  done
  # A bounded run: a hang (e.g. MPICH/UCX's finalize deadlock, see netns_bench.sh) fails instead of blocking ctest.
  timeout -k 5 "${NETNS_RUN_TIMEOUT:-60}" ip netns exec "${NETNS_PREFIX}0" mpiexec -genv UCX_TLS tcp,self -f "$hostfile" -n $((nodes * ppn)) -ppn "$ppn" \
    -launcher ssh -launcher-exec "$NETNS_LAUNCH" "$@"
  rc=$?
  rm -f "$hostfile"
  return $rc
}

# netns_envlaunch NODES PPN PORT PROGRAM ARGS...: torchrun-style env per rank, each in its node's namespace,
# MASTER_ADDR = node 0's address. Fails if any rank fails.
netns_envlaunch() {
  nodes=$1 ppn=$2 port=$3
  shift 3
  pids=""
  n=0
  while [ "$n" -lt "$nodes" ]; do
    l=0
    while [ "$l" -lt "$ppn" ]; do
      timeout -k 5 "${NETNS_RUN_TIMEOUT:-60}" ip netns exec "${NETNS_PREFIX}$n" env RANK=$((n * ppn + l)) WORLD_SIZE=$((nodes * ppn)) LOCAL_RANK=$l \
        LOCAL_WORLD_SIZE="$ppn" MASTER_ADDR="$NETNS_SUBNET.1" MASTER_PORT="$port" "$@" &
      pids="$pids $!"
      l=$((l + 1))
    done
    n=$((n + 1))
  done
  rc=0
  for p in $pids; do wait "$p" || rc=1; done
  return $rc
}

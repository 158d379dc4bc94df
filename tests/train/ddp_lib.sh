# Helpers for the process-level DDP tests of `coretrain qa` (ddp_launch_test.sh, ddp_faults_test.sh); sourced,
# not run. Every process a test starts is bounded by `timeout`, recorded, and killed by pid on exit; the
# scratch folder (outputs, logs, feature cache) is removed on exit.
#
#   ct_setup NAME BIN       scratch folder $TMP, exports for a quick demo job, cleanup trap
#   fail MSG [LOG...]       print "FAIL: MSG" and the logs' tails, exit 1
#   pick_port               a free TCP port in 20000-29999 in $PORT
#   start_rank R W LR LWS LOG [VAR=VALUE...] -- ARGS...
#                           one rank of a torchrun-style launch (RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE,
#                           MASTER_ADDR/MASTER_PORT=$PORT unless given), `timeout`-wrapped; pid in $LAST_PID
#   wait_rc PID             the pid's exit status in $RC (never trips set -e)
#   launch TAG W [VAR=VALUE...] -- ARGS...
#                           ranks 0..W-1 of a torchrun-style env launch, logs $TMP/TAG.r.log, pids in P0, P1, ...;
#                           retried on another port when one was taken meanwhile
#   wait_all W              exit statuses of P0..P(W-1) in RC0, RC1, ...
#   json FILE PYEXPR        python expression over the parsed file `j`, printed
#   now                     seconds since the epoch, with fractions
#   elapsed_since T0        seconds since T0, one decimal
set -eu

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
LIMIT=${CT_TEST_PROCESS_LIMIT:-100}  # seconds any one coretrain process may run
PIDS=""
TMP=""

ct_cleanup() {
  for p in $PIDS; do
    kill -0 "$p" 2>/dev/null || continue
    # The timeout wrapper and the coretrain process under it.
    for c in $(pgrep -P "$p" 2>/dev/null || true); do kill -9 "$c" 2>/dev/null || true; done
    kill -9 "$p" 2>/dev/null || true
  done
  [ -n "$TMP" ] && rm -rf "$TMP"
  return 0
}

ct_setup() {
  NAME=$1
  BIN=$2
  [ -x "$BIN" ] || { echo "FAIL: $BIN is not an executable"; exit 1; }
  TMP=$(mktemp -d "/tmp/ct_${NAME}.XXXXXX")
  trap ct_cleanup EXIT
  trap 'exit 1' INT TERM
  export HF_DATASETS_CACHE="$TMP/cache"  # the feature cache stays inside the scratch folder
  export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive CCL_WORKER_COUNT=1
  export CORETRAIN_COMM_TIMEOUT=${CORETRAIN_COMM_TIMEOUT:-60}
  unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT PMI_RANK PMI_SIZE 2>/dev/null || true
}

fail() {
  local msg=$1
  shift
  echo "FAIL: $msg" >&2
  for f in "$@"; do
    [ -f "$f" ] || continue
    echo "---- last lines of $f" >&2
    grep -v '^train: step' "$f" | tail -n 25 >&2 || true
  done
  exit 1
}

now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

pick_port() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    PORT=$((20000 + RANDOM % 10000))
    # Nothing may be listening there (a connect that succeeds means taken).
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
  done
  echo "FAIL: no free port found" >&2
  exit 1
}

start_rank() {
  local r=$1 w=$2 lr=$3 lws=$4 log=$5
  shift 5
  local envs=("RANK=$r" "WORLD_SIZE=$w" "LOCAL_RANK=$lr" "LOCAL_WORLD_SIZE=$lws" "MASTER_ADDR=127.0.0.1"
              "MASTER_PORT=$PORT")
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  env "${envs[@]}" timeout -k 5 "$LIMIT" "$BIN" "$@" > "$log" 2>&1 &
  LAST_PID=$!
  PIDS="$PIDS $LAST_PID"
}

wait_rc() {
  RC=0
  wait "$1" || RC=$?
}

launch() {
  local tag=$1 w=$2
  shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local attempt r
  for attempt in 1 2 3; do
    pick_port
    for ((r = 0; r < w; r++)); do
      start_rank $r $w $r $w "$TMP/$tag.$r.log" ${envs[@]+"${envs[@]}"} -- "$@"
      eval "P$r=$LAST_PID"
    done
    sleep 0.5
    if grep -q "already in use" "$TMP/$tag.0.log" 2>/dev/null; then
      for ((r = 0; r < w; r++)); do eval "kill \$P$r 2>/dev/null; wait_rc \$P$r" || true; done
      continue
    fi
    return 0
  done
}

wait_all() {
  local r
  for ((r = 0; r < $1; r++)); do eval "wait_rc \$P$r; RC$r=\$RC"; done
}

json() {
  "$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

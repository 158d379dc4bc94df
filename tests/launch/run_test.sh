#!/usr/bin/env bash
# `coretrain run` with real processes on this machine: agents as torchrun would be started on each node, workers
# `coretrain qa --demo` (tiny), every process bounded by `timeout` and killed on exit. Usage: run_test.sh BIN CASE
#
#   standalone     --standalone --nproc-per-node 2 --tee 3 --log-dir: exit 0, one output folder, world size 2,
#                  console lines prefixed [default0]:, each worker's stdout.log/stderr.log in the log dir.
#   two_agents     two agents, c10d rendezvous at 127.0.0.1:PORT, --nnodes 2: both exit 0, world size 2.
#   worker_killed  elastic 1:2, --max-restarts 2: a worker is SIGKILLed after checkpoint-20; both agents restart
#                  their workers (restart 1 of 2), the workers resume from the last checkpoint and finish
#                  (global_step == max_steps), both agents exit 0.
#   no_restarts    the same with --max-restarts 0: both agents exit 137 (the root cause's SIGKILL) within
#                  seconds, printing torchrun's summary with the killed rank as root cause.
#   worker_error   a worker command that fails (a bad flag): the agent exits with the worker's code, the summary
#                  shows the worker's own error message (its TORCHELASTIC_ERROR_FILE).
#   agent_killed   elastic 1:2, the second agent gets SIGKILL: its worker dies with it, the first agent's
#                  worker fails, the round ends, the first agent continues alone (world size 2 -> 1) and
#                  finishes; exit 0.
#   scale_up       elastic 1:2: one agent trains alone, a second arrives: the group restarts with both (not
#                  counted as a failure: restart 0 of 0) and finishes.
#   uneven_nproc   two agents with --nproc-per-node 1 and 2: both exit non-zero saying every node must run the same
#                  number, and no worker starts.
#   join_timeout   --nnodes 2 with one agent, join_timeout=2: exit non-zero within seconds saying 1 of min 2
#                  nodes joined and from where.
#   no_endpoint    an endpoint nobody serves, and a host name that never resolves: one-line errors, bounded.
#   sigterm        SIGTERM to the agent mid-training: forwarded, the workers write a checkpoint and stop, the agent
#                  exits 143, no worker left behind; the same command resumes from that checkpoint and finishes.
#   node_leaving   elastic 1:2, --max-restarts 0, SIGTERM to one agent (a pod being evicted): the workers of both
#                  nodes stop together with a checkpoint, that agent exits 143, the other restarts alone (a
#                  membership change, not a failure), resumes from that checkpoint and finishes.
#   store_lost     the agent hosting the store gets SIGKILL: the other agent stops its worker and exits non-zero
#                  saying the rendezvous store is lost, bounded.
source "$(dirname "$0")/../train/ddp_lib.sh"
BIN=$1 CASE=$2
ct_setup "run_$CASE" "$BIN"
export CORETRAIN_COMM_TIMEOUT=20
DEMO=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --disable_tqdm --no_cuda --do_train
      --ddp_backend gloo --logging_steps 10)
FAST="join_timeout=60,read_timeout=5,last_call_timeout=1,keep_alive_interval=0.5,keep_alive_max_attempt=10,close_timeout=20"

# start_agent LOG ARGS...: one `coretrain run` in the background, pid in $LAST_PID.
start_agent() {
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" run "$@" > "$log" 2>&1 &
  LAST_PID=$!
  PIDS="$PIDS $LAST_PID"
}
# start_two ARGS...: two agents with the same flags (logs a0.log, a1.log; pids A0, A1), as on two nodes.
# pick_port's port can be taken by another test's process before the agents bind it (ctest runs tests in
# parallel); then both agents report it taken and join that stranger's store. Seen once (launch.run_no_restarts
# at 4da1563: both waited 60 s on a foreign store). So: when both say so, kill them and retry on a new port.
start_two() {
  local n attempt tries a old
  for attempt in 1 2 3; do
    for n in 0 1; do
      start_agent "$TMP/a$n.log" "$@"
      eval "A$n=\$LAST_PID"
    done
    for tries in $(seq 100); do  # up to ~10 s for one of them to host the store, or both to find it taken
      grep -q "(hosted here)" "$TMP/a0.log" "$TMP/a1.log" 2>/dev/null && return 0
      grep -q "is taken; joining" "$TMP/a0.log" 2>/dev/null && grep -q "is taken; joining" "$TMP/a1.log" 2>/dev/null &&
        break
      sleep 0.1
    done
    grep -q "is taken; joining" "$TMP/a0.log" 2>/dev/null && grep -q "is taken; joining" "$TMP/a1.log" 2>/dev/null ||
      return 0
    echo "port $PORT taken by another process: retrying on a new port"
    kill "$A0" "$A1" 2>/dev/null || true
    wait "$A0" "$A1" 2>/dev/null || true
    old=$PORT
    pick_port
    local args=()
    for a in "$@"; do args+=("${a//127.0.0.1:$old/127.0.0.1:$PORT}"); done
    set -- "${args[@]}"
  done
}
# host_and_other: H = the agent hosting the store (whichever bound the port first), V = the other; pids hpid, vpid.
host_and_other() {
  H=0 V=1
  grep -q "(hosted here)" "$TMP/a0.log" || { H=1 V=0; }
  eval "hpid=\$A$H vpid=\$A$V"
}
agent_of() { pgrep -P "$1" | head -n 1; }     # the coretrain run process under a timeout wrapper
workers_of() { pgrep -P "$(agent_of "$1")" || true; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
  local secs=$1 what=$2
  shift 2
  local deadline=$(($(date +%s) + secs))
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "no $what after $secs s" "$TMP"/*.log
    sleep 0.1
  done
}
RID="ct$$"  # the job's rendezvous id: names its shared-memory segments, so leftovers are told from other tests
SHM_BEFORE=$(ls /dev/shm | grep '^ct-' | sort || true)
no_leftovers() {  # no coretrain process of this test left (workers die with their agents), no new shm segment
  sleep 0.5
  if pgrep -f -- "--output_dir $TMP/" > /dev/null; then
    pgrep -af -- "--output_dir $TMP/" >&2
    fail "worker processes left behind"
  fi
  local new
  new=$(comm -13 <(echo "$SHM_BEFORE") <(ls /dev/shm | grep '^ct-' | sort || true))
  # Another test running at the same time may own a segment: only ours (named with this job's run id) count.
  new=$(echo "$new" | grep -e "$RID" -e standalone || true)
  [ -z "$new" ] || fail "shared-memory segments left in /dev/shm: $new"
}
step_of() { json "$1/trainer_state.json" 'j["global_step"]'; }

case "$CASE" in
standalone)
  start_agent "$TMP/a.log" --standalone --nproc-per-node 2 --tee 3 --log-dir "$TMP/logs" \
    "${DEMO[@]}" --max_steps 20 --output_dir "$TMP/out"
  wait_rc "$LAST_PID"
  [ "$RC" -eq 0 ] || fail "agent exited $RC" "$TMP/a.log"
  grep -q "world size 2" "$TMP/a.log" || fail "no world size 2 in the agent's log" "$TMP/a.log"
  [ -f "$TMP/out/model.safetensors" ] || fail "no model in the output folder" "$TMP/a.log"
  # Rank 1 logs at warning level only (HF's replica log level), so rank 0 is the one seen on the console.
  grep -q '^\[default0\]:.*train metrics' "$TMP/a.log" || fail "console lines are not prefixed [default0]:" "$TMP/a.log"
  logs=$(ls -d "$TMP"/logs/standalone_*/attempt_0)
  grep -q "train metrics" "$logs/0/stdout.log" || fail "rank 0's stdout.log lacks its lines" "$logs/0/stdout.log"
  grep -q "Running training" "$logs/0/stderr.log" || fail "rank 0's stderr.log lacks its lines" "$logs/0/stderr.log"
  [ -f "$logs/1/stdout.log" ] && [ -f "$logs/1/stderr.log" ] || fail "rank 1 has no log files in $logs/1"
  no_leftovers
  ;;
two_agents)
  pick_port
  start_two --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --rdzv-conf "$FAST" \
    "${DEMO[@]}" --max_steps 20 --output_dir "$TMP/out"
  wait_rc "$A0"; rc0=$RC
  wait_rc "$A1"; rc1=$RC
  [ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ] || fail "agents exited $rc0 / $rc1" "$TMP/a0.log" "$TMP/a1.log"
  grep -q "world size 2" "$TMP/a0.log" || fail "no world size 2" "$TMP/a0.log"
  [ "$(step_of "$TMP/out")" -eq 20 ] || fail "global_step is not 20" "$TMP/a0.log"
  no_leftovers
  ;;
worker_killed | no_restarts)
  restarts=2
  [ "$CASE" = no_restarts ] && restarts=0
  pick_port
  start_two --nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --max-restarts $restarts --rdzv-conf "$FAST" \
    "${DEMO[@]}" --max_steps 60 --save_strategy steps --save_steps 10 --output_dir "$TMP/out"
  wait_for 60 "checkpoint-20" test -d "$TMP/out/checkpoint-20"
  victim=$(workers_of "$A1")
  [ -n "$victim" ] || fail "no worker under the second agent" "$TMP/a1.log"
  kill -9 $victim
  t0=$(now)
  wait_rc "$A0"; rc0=$RC
  wait_rc "$A1"; rc1=$RC
  echo "worker $victim killed: agents exited $rc0 / $rc1 after $(elapsed_since "$t0") s"
  if [ "$CASE" = worker_killed ]; then
    [ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ] || fail "agents exited $rc0 / $rc1" "$TMP/a0.log" "$TMP/a1.log"
    grep -q "restarting the workers (restart 1 of 2)" "$TMP/a0.log" || fail "no restart logged" "$TMP/a0.log"
    grep -q "round 1: 2 node(s), world size 2" "$TMP/a0.log" || fail "no second round of 2" "$TMP/a0.log"
    grep -qi "from checkpoint" "$TMP/a0.log" "$TMP/a1.log" || fail "the workers did not resume" "$TMP/a0.log"
    [ "$(step_of "$TMP/out")" -eq 60 ] || fail "global_step is not 60" "$TMP/a0.log"
  else
    for n in 0 1; do
      eval "rc=\$rc$n"
      [ "$rc" -eq 137 ] || fail "agent $n exited $rc, expected 137 (the root cause's SIGKILL)" "$TMP/a$n.log"
      grep -A8 "Root Cause (first observed failure)" "$TMP/a$n.log" | grep -q "Signal 9 (SIGKILL) received by PID $victim" \
        || fail "agent $n's summary does not name the killed worker as root cause" "$TMP/a$n.log"
    done
  fi
  no_leftovers
  ;;
worker_error)
  start_agent "$TMP/a.log" --standalone --nproc-per-node 2 qa --demo --no_such_flag 1 --output_dir "$TMP/out"
  wait_rc "$LAST_PID"
  [ "$RC" -ne 0 ] || fail "agent exited 0 for a failing worker" "$TMP/a.log"
  grep -q "coretrain qa FAILED" "$TMP/a.log" || fail "no failure summary" "$TMP/a.log"
  grep -A8 "Root Cause" "$TMP/a.log" | grep -q "no_such_flag" || fail "the summary lacks the worker's error" "$TMP/a.log"
  code=$(grep -A8 "Root Cause" "$TMP/a.log" | sed -n 's/.*exitcode  : \([0-9]*\).*/\1/p')
  [ "$RC" -eq "$code" ] || fail "agent exited $RC, the worker $code" "$TMP/a.log"
  no_leftovers
  ;;
agent_killed)
  pick_port
  start_two --nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --max-restarts 3 --rdzv-conf "$FAST" \
    "${DEMO[@]}" --max_steps 60 --save_strategy steps --save_steps 10 --output_dir "$TMP/out"
  wait_for 60 "checkpoint-20" test -d "$TMP/out/checkpoint-20"
  host_and_other  # kill the agent that does not host the store
  kill -9 "$(agent_of "$vpid")"
  wait_rc "$hpid"
  [ "$RC" -eq 0 ] || fail "the surviving agent exited $RC" "$TMP/a$H.log"
  grep -q "world size 2 -> 1" "$TMP/a$H.log" || fail "the shrink is not logged" "$TMP/a$H.log"
  [ "$(step_of "$TMP/out")" -eq 60 ] || fail "global_step is not 60" "$TMP/a$H.log"
  wait_rc "$vpid"
  no_leftovers
  ;;
scale_up)
  pick_port
  args=(--nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID"
        --rdzv-conf "$FAST" "${DEMO[@]}" --max_steps 80 --save_strategy steps --save_steps 10
        --output_dir "$TMP/out")
  start_agent "$TMP/a0.log" "${args[@]}"
  A0=$LAST_PID
  wait_for 60 "checkpoint-10" test -d "$TMP/out/checkpoint-10"
  start_agent "$TMP/a1.log" "${args[@]}"
  A1=$LAST_PID
  wait_rc "$A0"; rc0=$RC
  wait_rc "$A1"; rc1=$RC
  [ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ] || fail "agents exited $rc0 / $rc1" "$TMP/a0.log" "$TMP/a1.log"
  grep -q "membership change" "$TMP/a0.log" || fail "no scale-up restart" "$TMP/a0.log"
  grep -q "round 1: 2 node(s), world size 2 .*restart 0 of 0" "$TMP/a0.log" || fail "round 1 is not 2 nodes" "$TMP/a0.log"
  [ "$(step_of "$TMP/out")" -eq 80 ] || fail "global_step is not 80" "$TMP/a0.log"
  no_leftovers
  ;;
uneven_nproc)
  pick_port
  for n in 0 1; do
    start_agent "$TMP/a$n.log" --nnodes 2 --nproc-per-node $((n + 1)) --rdzv-backend c10d \
      --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --rdzv-conf "$FAST" "${DEMO[@]}" --output_dir "$TMP/out"
    eval "A$n=\$LAST_PID"
  done
  for n in 0 1; do
    eval "wait_rc \$A$n"
    [ "$RC" -ne 0 ] || fail "agent $n exited 0 with uneven --nproc-per-node" "$TMP/a$n.log"
    grep -q "every node must run the same --nproc-per-node" "$TMP/a$n.log" || fail "agent $n: no clear error" "$TMP/a$n.log"
    ! grep -q "Running training" "$TMP/a$n.log" || fail "agent $n started workers" "$TMP/a$n.log"
  done
  no_leftovers
  ;;
join_timeout)
  pick_port
  t0=$(now)
  start_agent "$TMP/a.log" --nnodes 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$PORT" \
    --rdzv-conf join_timeout=2 "${DEMO[@]}" --output_dir "$TMP/out"
  wait_rc "$LAST_PID"
  took=$(elapsed_since "$t0")
  [ "$RC" -ne 0 ] || fail "agent exited 0 alone" "$TMP/a.log"
  grep -q "1 of min 2 node(s) joined ($(hostname)" "$TMP/a.log" || fail "the error does not say who joined" "$TMP/a.log"
  awk -v t="$took" 'BEGIN { exit !(t < 15) }' || fail "took $took s" "$TMP/a.log"
  ;;
no_endpoint)
  pick_port
  start_agent "$TMP/a.log" --nnodes 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$PORT" \
    --rdzv-conf join_timeout=2,is_host=0 "${DEMO[@]}" --output_dir "$TMP/out"
  wait_rc "$LAST_PID"
  [ "$RC" -ne 0 ] || fail "agent exited 0" "$TMP/a.log"
  grep -q "never answered within join_timeout" "$TMP/a.log" || fail "no clear error" "$TMP/a.log"
  start_agent "$TMP/b.log" --nnodes 2 --rdzv-backend c10d --rdzv-endpoint "no-such-host.invalid:$PORT" \
    --rdzv-conf join_timeout=2 "${DEMO[@]}" --output_dir "$TMP/out"
  wait_rc "$LAST_PID"
  [ "$RC" -ne 0 ] || fail "agent exited 0" "$TMP/b.log"
  grep -q "no-such-host.invalid' did not resolve" "$TMP/b.log" || fail "no clear error" "$TMP/b.log"
  ;;
sigterm)
  args=(--standalone --nproc-per-node 2 "${DEMO[@]}" --max_steps 200 --save_strategy steps --save_steps 1000
        --output_dir "$TMP/out")
  start_agent "$TMP/a.log" "${args[@]}"
  A=$LAST_PID
  wait_for 60 "training steps" grep -q "\"step\":10}" "$TMP/a.log"
  kill -TERM "$(agent_of "$A")"
  wait_rc "$A"
  [ "$RC" -eq 143 ] || fail "agent exited $RC, expected 143" "$TMP/a.log"
  grep -q "received SIGTERM: forwarding" "$TMP/a.log" || fail "the signal was not forwarded" "$TMP/a.log"
  no_leftovers
  # The workers wrote a checkpoint on the way out (save_steps 1000 would have written none); the same command
  # resumes from it and finishes.
  ckpt=$(ls -d "$TMP"/out/checkpoint-* 2>/dev/null | tail -n 1)
  [ -n "$ckpt" ] || fail "no checkpoint written on SIGTERM" "$TMP/a.log"
  echo "SIGTERM: the workers wrote ${ckpt##*/}"
  start_agent "$TMP/b.log" "${args[@]}"
  wait_rc "$LAST_PID"
  [ "$RC" -eq 0 ] || fail "the rerun exited $RC" "$TMP/b.log"
  grep -q "Continuing training from checkpoint.*${ckpt##*/}" "$TMP/b.log" || fail "the rerun did not resume" "$TMP/b.log"
  [ "$(step_of "$TMP/out")" -eq 200 ] || fail "global_step is not 200" "$TMP/b.log"
  ;;
node_leaving)
  pick_port
  start_two --nnodes 1:2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --max-restarts 0 --rdzv-conf "$FAST" \
    "${DEMO[@]}" --max_steps 150 --save_strategy steps --save_steps 1000 --output_dir "$TMP/out"
  wait_for 60 "training steps" grep -q "\"step\":10}" "$TMP/a0.log" "$TMP/a1.log"
  host_and_other
  kill -TERM "$(agent_of "$vpid")"
  wait_rc "$vpid"
  [ "$RC" -eq 143 ] || fail "the stopped agent exited $RC, expected 143" "$TMP/a$V.log"
  wait_rc "$hpid"
  [ "$RC" -eq 0 ] || fail "the remaining agent exited $RC (max-restarts 0: leaving must not count)" "$TMP/a$H.log"
  grep -q "membership change (not counted as a failure)" "$TMP/a$H.log" || fail "no membership restart" "$TMP/a$H.log"
  grep -q "world size 2 -> 1" "$TMP/a$H.log" || fail "no shrink to 1" "$TMP/a$H.log"
  grep -q "Continuing training from checkpoint" "$TMP/a$H.log" || fail "did not resume from the stop's checkpoint" "$TMP/a$H.log"
  [ "$(step_of "$TMP/out")" -eq 150 ] || fail "global_step is not 150" "$TMP/a$H.log"
  no_leftovers
  ;;
store_lost)
  pick_port
  start_two --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id "$RID" --rdzv-conf "$FAST" \
    "${DEMO[@]}" --max_steps 400 --output_dir "$TMP/out"
  wait_for 60 "training steps" grep -q "\"step\":10}" "$TMP/a0.log" "$TMP/a1.log"
  host_and_other
  kill -9 "$(agent_of "$hpid")"
  t0=$(now)
  wait_rc "$vpid"
  took=$(elapsed_since "$t0")
  [ "$RC" -ne 0 ] || fail "the other agent exited 0" "$TMP/a$V.log"
  echo "the other agent exited $RC after $took s"
  grep -q "lost the rendezvous store" "$TMP/a$V.log" || fail "no 'lost the rendezvous store' error" "$TMP/a$V.log"
  awk -v t="$took" 'BEGIN { exit !(t < 40) }' || fail "took $took s" "$TMP/a$V.log"
  wait_rc "$hpid"
  no_leftovers
  ;;
*)
  fail "unknown case $CASE"
  ;;
esac
echo "PASS: run $CASE"

#!/bin/bash
# ddp_faults_test.sh CORETRAIN CASE: data-parallel `coretrain qa` (the built-in demo, 2 processes) when the job
# goes wrong. Every process runs under `timeout`; the checks bound the elapsed time, so a hang fails the test.
#
#   kill_resume     torchrun-style env launch (ccl), checkpoints every 20 steps; rank 1 gets SIGKILL once
#                   checkpoint-40 exists. Rank 0 exits non-zero within CORETRAIN_COMM_TIMEOUT (20 s) with an
#                   error line naming rank 1; every checkpoint-N folder left is complete (weights, optimizer
#                   state, scheduler, trainer_state.json at step N); the same command again resumes from the
#                   last one ("Continuing training from checkpoint"), exits 0 on both ranks with global_step ==
#                   max_steps, and leaves no temporary checkpoint folder behind.
#   kill_rank0_resume  the same with rank 0 killed (the store's host and the writer of every file): rank 1
#                   exits non-zero naming rank 0, the rerun resumes.
#   flag_mismatch   rank 1 gets another --learning_rate (env launch, then mpiexec MPMD): every rank exits
#                   non-zero within seconds, each error line naming rank 1 and --learning_rate (under mpiexec,
#                   Hydra may kill the second rank before it prints: at least one line, every one naming them).
#   no_master_addr  WORLD_SIZE=2 without MASTER_ADDR: each rank prints one line naming MASTER_ADDR, exits
#                   non-zero, at once.
#   local_world     ranks disagree on LOCAL_WORLD_SIZE (rank 0: 2, rank 1: 1), and LOCAL_WORLD_SIZE=2 with
#                   WORLD_SIZE=3: every rank exits non-zero well before the comm timeout with an error naming
#                   LOCAL_WORLD_SIZE.
#   nccl            --ddp_backend nccl (1 process, and mpiexec -n 2): exit non-zero, one line per process that
#                   printed (Hydra may kill the second first) saying it is an accelerator (GPU) backend and naming
#                   the CPU ones; no output folder is created.
source "$(dirname "$0")/ddp_lib.sh"
BIN=$1 CASE=$2
ct_setup "ddp_faults_$CASE" "$BIN"
DEMO=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --disable_tqdm --no_cuda --do_train)
QUICK=$((10))  # seconds: "at once" on this loaded machine (a normal start takes well under 1 s)

# An error line of `coretrain qa` (what apps/coretrain.cpp prints for a ct::Error), naming rank N.
names_rank() { grep -E "^coretrain qa: error: .*rank(\(s\))? $2([^0-9]|$)" "$1"; }

# Starts ranks 0..W-1 of an env launch (LOCAL_WORLD_SIZE=W unless LWS_OF_<r> is set) with ARGS; rank r's log
# in $TMP/$tag.$r.log, pids in P0, P1, ...; retries on a port some other process took.
launch_env() {
  local tag=$1 w=$2
  shift 2
  local attempt r
  for attempt in 1 2 3; do
    pick_port
    for ((r = 0; r < w; r++)); do
      local lws=$w extra=()
      eval "[ -n \"\${LWS_OF_$r:-}\" ] && lws=\$LWS_OF_$r" || true
      eval "[ -n \"\${ARGS_OF_$r:-}\" ] && extra=(\$ARGS_OF_$r)" || true
      start_rank $r $w $((r % lws)) $lws "$TMP/$tag.$r.log" -- "$@" ${extra[@]+"${extra[@]}"}
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

case "$CASE" in
kill_resume | kill_rank0_resume)
  VICTIM=1 SURVIVOR=0
  [ "$CASE" = kill_rank0_resume ] && VICTIM=0 SURVIVOR=1
  export CORETRAIN_COMM_TIMEOUT=20
  OUT=$TMP/out
  STEPS=100
  ARGS=("${DEMO[@]}" --do_eval --max_steps $STEPS --logging_steps 10 --save_strategy steps --save_steps 20
        --output_dir "$OUT")
  launch_env run1 2 "${ARGS[@]}"
  deadline=$(($(date +%s) + 80))
  until [ -d "$OUT/checkpoint-40" ]; do
    kill -0 "$P0" 2>/dev/null && kill -0 "$P1" 2>/dev/null \
      || fail "a rank exited before checkpoint-40 appeared" "$TMP/run1.0.log" "$TMP/run1.1.log"
    [ "$(date +%s)" -lt "$deadline" ] || fail "no checkpoint-40 after 80 s" "$TMP/run1.0.log"
    sleep 0.1
  done
  eval "vpid=\$P$VICTIM spid=\$P$SURVIVOR"
  victim=$(pgrep -P "$vpid")  # coretrain under the victim's timeout wrapper
  [ -n "$victim" ] || fail "rank $VICTIM's coretrain process not found under pid $vpid"
  kill -9 "$victim"
  t0=$(now)
  wait_rc "$spid"
  rc=$RC took=$(elapsed_since "$t0")
  wait_rc "$vpid"
  SLOG=$TMP/run1.$SURVIVOR.log
  echo "rank $VICTIM (pid $victim) killed at checkpoint-40: rank $SURVIVOR exited $rc after $took s"
  [ "$rc" -ne 0 ] || fail "rank $SURVIVOR exited 0 although rank $VICTIM was killed" "$SLOG"
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "rank $SURVIVOR had to be stopped by timeout (exit $rc)" "$SLOG"
  awk -v t="$took" 'BEGIN { exit !(t < 20 + 5) }' \
    || fail "rank $SURVIVOR needed $took s to notice (CORETRAIN_COMM_TIMEOUT=20)" "$SLOG"
  names_rank "$SLOG" $VICTIM || fail "rank $SURVIVOR's error does not name rank $VICTIM" "$SLOG"
  grep -q "global_step" "$OUT/trainer_state.json" 2>/dev/null && fail "a killed run wrote the final trainer_state.json"
  # Every checkpoint-N left is complete and at step N.
  last=0
  for d in "$OUT"/checkpoint-*; do
    n=${d##*/checkpoint-}
    [[ "$n" =~ ^[0-9]+$ ]] || continue  # temporary folders have another name; the rerun removes them
    for f in model.safetensors optimizer.safetensors scheduler.json trainer_state.json config.json; do
      [ -s "$d/$f" ] || fail "$d lacks $f: a half-written checkpoint under its final name"
    done
    s=$(json "$d/trainer_state.json" 'j["global_step"]')
    [ "$s" = "$n" ] || fail "$d/trainer_state.json says global_step $s"
    [ "$n" -gt "$last" ] && last=$n
  done
  [ "$last" -ge 40 ] || fail "no complete checkpoint at or after step 40 (last: $last)"
  echo "checkpoints after the kill: $(cd "$OUT" && ls -d checkpoint-* | tr '\n' ' ')"
  # The same command again resumes from checkpoint-$last.
  launch_env run2 2 "${ARGS[@]}"
  t0=$(now)
  wait_rc "$P0"
  rc0=$RC
  wait_rc "$P1"
  rc1=$RC
  echo "rerun: $(elapsed_since "$t0") s, exits $rc0 $rc1"
  [ "$rc0" -eq 0 ] || fail "the rerun's rank 0 exited $rc0" "$TMP/run2.0.log"
  [ "$rc1" -eq 0 ] || fail "the rerun's rank 1 exited $rc1" "$TMP/run2.1.log"
  grep -q "Continuing training from checkpoint $OUT/checkpoint-$last: global step $last" "$TMP/run2.0.log" \
    || fail "the rerun did not continue from checkpoint-$last" "$TMP/run2.0.log"
  step=$(json "$OUT/trainer_state.json" 'j["global_step"]')
  [ "$step" = "$STEPS" ] || fail "after the rerun global_step is $step, expected $STEPS"
  [ -s "$OUT/eval_results.json" ] || fail "the rerun wrote no eval_results.json"
  left=$(cd "$OUT" && ls -d checkpoint-*.tmp* 2>/dev/null || true)
  [ -z "$left" ] || fail "temporary checkpoint folders left: $left"
  ;;

flag_mismatch)
  export CORETRAIN_COMM_TIMEOUT=60  # a mismatch must be found by the check, not by a timeout
  ARGS=("${DEMO[@]}" --max_steps 4 --output_dir "$TMP/out")
  check_lines() {  # LOG...: each holds an error naming rank 1 and the flag
    for f in "$@"; do
      names_rank "$f" 1 | grep -q -- "--learning_rate" \
        || fail "no error line naming rank 1 and --learning_rate in $f" "$f"
    done
  }
  t0=$(now)
  ARGS_OF_1="--learning_rate 1e-3" launch_env env 2 "${ARGS[@]}"
  wait_rc "$P0"; rc0=$RC
  wait_rc "$P1"; rc1=$RC
  took=$(elapsed_since "$t0")
  echo "env launch: exits $rc0 $rc1 after $took s"
  grep -h "error" "$TMP"/env.*.log
  [ "$rc0" -ne 0 ] && [ "$rc1" -ne 0 ] || fail "exit codes $rc0 $rc1, expected both non-zero" "$TMP"/env.*.log
  awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' || fail "took $took s" "$TMP"/env.*.log
  check_lines "$TMP/env.0.log" "$TMP/env.1.log"
  rm -rf "$TMP/out"
  t0=$(now)
  RC=0
  timeout -k 5 "$LIMIT" mpiexec -prepend-rank -n 1 "$BIN" "${ARGS[@]}" : -n 1 "$BIN" "${ARGS[@]}" \
    --learning_rate 1e-3 > "$TMP/mpi.log" 2>&1 || RC=$?
  took=$(elapsed_since "$t0")
  echo "mpiexec MPMD: exit $RC after $took s"
  grep "error" "$TMP/mpi.log"
  [ "$RC" -ne 0 ] || fail "mpiexec exited 0" "$TMP/mpi.log"
  awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' || fail "took $took s" "$TMP/mpi.log"
  # Hydra tears the job down as soon as the first rank exits non-zero, so the other rank may be killed before it
  # prints: every rank that printed must name rank 1 and the flag, and at least one must have.
  printed=""
  for r in 0 1; do
    sed -n "s/^\[$r\] //p" "$TMP/mpi.log" > "$TMP/mpi.$r.log"
    grep -q "error" "$TMP/mpi.$r.log" && printed="$printed $TMP/mpi.$r.log"
  done
  [ -n "$printed" ] || fail "no rank printed an error under mpiexec" "$TMP/mpi.log"
  check_lines $printed
  ;;

no_master_addr)
  for r in 0 1; do
    t0=$(now)
    RC=0
    env -u MASTER_ADDR RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_PORT=29999 \
      timeout -k 5 "$LIMIT" "$BIN" "${DEMO[@]}" --max_steps 2 --output_dir "$TMP/out" > "$TMP/r$r.log" 2>&1 \
      || RC=$?
    took=$(elapsed_since "$t0")
    echo "rank $r: exit $RC after $took s: $(cat "$TMP/r$r.log")"
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "rank $r exited $RC" "$TMP/r$r.log"
    awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' || fail "rank $r took $took s" "$TMP/r$r.log"
    [ "$(wc -l < "$TMP/r$r.log")" -eq 1 ] || fail "rank $r printed more than one line" "$TMP/r$r.log"
    grep -q "^coretrain qa: error: .*MASTER_ADDR" "$TMP/r$r.log" || fail "rank $r's error does not name MASTER_ADDR" "$TMP/r$r.log"
  done
  [ ! -e "$TMP/out" ] || fail "an output folder was created"
  ;;

local_world)
  export CORETRAIN_COMM_TIMEOUT=20
  ARGS=("${DEMO[@]}" --max_steps 2 --output_dir "$TMP/out")
  # Rank 0 says 2 ranks per node, rank 1 says 1: each is consistent on its own.
  t0=$(now)
  LWS_OF_0=2 LWS_OF_1=1 launch_env lws 2 "${ARGS[@]}"
  wait_rc "$P0"; rc0=$RC
  wait_rc "$P1"; rc1=$RC
  took=$(elapsed_since "$t0")
  echo "LOCAL_WORLD_SIZE 2 vs 1: exits $rc0 $rc1 after $took s"
  grep -h "error" "$TMP"/lws.*.log
  for r in 0 1; do
    rc=$([ $r = 0 ] && echo $rc0 || echo $rc1)
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "rank $r exited $rc" "$TMP/lws.$r.log"
    grep -q "^coretrain qa: error: .*LOCAL_WORLD_SIZE" "$TMP/lws.$r.log" \
      || fail "rank $r's error does not name LOCAL_WORLD_SIZE" "$TMP/lws.$r.log"
  done
  awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' \
    || fail "took $took s (a clear error, not the 20 s comm timeout, was expected)" "$TMP"/lws.*.log
  # LOCAL_WORLD_SIZE=2 does not divide WORLD_SIZE=3.
  t0=$(now)
  LWS_OF_0=2 LWS_OF_1=2 LWS_OF_2=2 launch_env div 3 "${ARGS[@]}"
  for r in 0 1 2; do
    eval "wait_rc \$P$r"
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "rank $r exited $RC" "$TMP/div.$r.log"
    grep -q "^coretrain qa: error: .*LOCAL_WORLD_SIZE=2 does not divide WORLD_SIZE=3" "$TMP/div.$r.log" \
      || fail "rank $r's error does not say LOCAL_WORLD_SIZE=2 does not divide WORLD_SIZE=3" "$TMP/div.$r.log"
  done
  took=$(elapsed_since "$t0")
  echo "LOCAL_WORLD_SIZE 2 with WORLD_SIZE 3: $took s: $(head -n 1 "$TMP/div.0.log")"
  awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' || fail "took $took s" "$TMP"/div.*.log
  ;;

nccl)
  check_nccl() {  # LOG MOST_LINES: 1..MOST_LINES lines (Hydra may kill a rank before it prints)
    n=$(grep -c . "$1")
    [ "$n" -ge 1 ] && [ "$n" -le "$2" ] || fail "expected 1 to $2 line(s) in $1, got $n" "$1"
    bad=$(grep -Ev "^coretrain qa: error: --ddp_backend: 'nccl' .*(accelerator|GPU).*ccl" "$1" || true)
    [ -z "$bad" ] || fail "unexpected line(s): $bad" "$1"
  }
  RC=0
  timeout -k 5 "$LIMIT" "$BIN" "${DEMO[@]}" --max_steps 2 --ddp_backend nccl --output_dir "$TMP/out" \
    > "$TMP/one.log" 2>&1 || RC=$?
  echo "1 process: exit $RC: $(cat "$TMP/one.log")"
  [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "exit $RC" "$TMP/one.log"
  check_nccl "$TMP/one.log" 1
  RC=0
  t0=$(now)
  MASTER_ADDR=127.0.0.1 timeout -k 5 "$LIMIT" mpiexec -n 2 "$BIN" "${DEMO[@]}" --max_steps 2 --no_cuda \
    --ddp_backend nccl --output_dir "$TMP/out" > "$TMP/mpi.log" 2>&1 || RC=$?
  took=$(elapsed_since "$t0")
  echo "mpiexec -n 2: exit $RC after $took s"
  [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "exit $RC" "$TMP/mpi.log"
  awk -v t="$took" -v q=$QUICK 'BEGIN { exit !(t < q) }' || fail "took $took s" "$TMP/mpi.log"
  check_nccl "$TMP/mpi.log" 2
  [ ! -e "$TMP/out" ] || fail "an output folder was created"
  ;;

*)
  fail "unknown case '$CASE'"
  ;;
esac
echo PASS

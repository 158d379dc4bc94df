#!/bin/bash
# elastic_worker_test.sh CORETRAIN CASE: `coretrain qa` as a worker of an elastic agent (torchrun or
# `coretrain run`): graceful stop on SIGTERM, automatic resume on a restart, torchelastic's error file. The
# built-in demo, tiny; every process under `timeout`, every wait bounded, pids killed on exit (ddp_lib.sh).
#
#   stop_resume_ccl / stop_resume_gloo   2 ranks, torchrun-style env launch with that --ddp_backend. An
#       uninterrupted run of 400 steps is the reference. The same job again; once rank 0 has logged step 8, ONE
#       rank (rank 1 under ccl, rank 0 under gloo) gets SIGTERM (under gloo both ranks get a second SIGTERM
#       0.1 s later, during the stop's save or exit). Both ranks exit 143 within 20 s, rank 0 logs
#       "stopping at step N on SIGTERM: wrote checkpoint-N", checkpoint-N is complete (weights, optimizer,
#       scheduler, trainer_state at step N, rng_state of both ranks), no temporary folder and no final files
#       are left. The same command with TORCHELASTIC_RESTART_COUNT=1 and --overwrite_output_dir says it resumes
#       from checkpoint-N, exits 0 on both ranks, and ends with model.safetensors byte-identical to the
#       reference and the same log_history (step, loss, grad_norm, learning_rate of every step). Then the
#       checkpoint resumed by 1 process (CORETRAIN_RDZV_ROUND=1, 2 more steps) logs the world-size line and
#       finishes.
#   early          1 process, SIGTERM while it is still preparing data (before training): exit 143 within
#       10 s, no checkpoint and no final files in output_dir.
#   restart_fresh  TORCHELASTIC_RESTART_COUNT=1 over a non-empty output_dir with no checkpoint (and no
#       --overwrite_output_dir): not refused, starts from scratch and says so.
#   error_file     a bad flag with TORCHELASTIC_ERROR_FILE set: exit 1, the file holds torchelastic's JSON and
#       Debian's torch (ProcessFailure) reads the message and timestamp from it; skipped (77) without torch.
source "$(dirname "$0")/ddp_lib.sh"
BIN=$1 CASE=$2
ct_setup "elastic_$CASE" "$BIN"
export CORETRAIN_COMM_TIMEOUT=30
DEMO=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --disable_tqdm --no_cuda --do_train)

case "$CASE" in
stop_resume_ccl | stop_resume_gloo)
  BACKEND=${CASE#stop_resume_}
  VICTIM=1
  [ "$BACKEND" = gloo ] && VICTIM=0
  # Enough steps that the job cannot finish between the poll that sees step AT and the signal: on an AVX-512
  # machine the demo model trains 30 steps in a quarter of a second, and under load the stop then came after
  # rank 0 had finished (exit 0, not 143).
  STEPS=400 AT=8
  BASE=("${DEMO[@]}" --ddp_backend "$BACKEND" --logging_steps 1)
  ARGS=("${BASE[@]}" --max_steps $STEPS)
  REF=$TMP/ref OUT=$TMP/out

  launch ref 2 -- "${ARGS[@]}" --output_dir "$REF"
  wait_all 2
  [ "$RC0" -eq 0 ] && [ "$RC1" -eq 0 ] || fail "the reference run exited $RC0 $RC1" "$TMP/ref.0.log" "$TMP/ref.1.log"

  launch run1 2 -- "${ARGS[@]}" --output_dir "$OUT" --overwrite_output_dir
  deadline=$(($(date +%s) + 60))
  until grep -q "\"step\":$AT}" "$TMP/run1.0.log" 2>/dev/null; do
    kill -0 "$P0" 2>/dev/null && kill -0 "$P1" 2>/dev/null \
      || fail "a rank exited before step $AT" "$TMP/run1.0.log" "$TMP/run1.1.log"
    [ "$(date +%s)" -lt "$deadline" ] || fail "no step $AT after 60 s" "$TMP/run1.0.log"
    sleep 0.05
  done
  eval "vpid=\$P$VICTIM"
  victim=$(pgrep -P "$vpid")  # coretrain under the timeout wrapper
  [ -n "$victim" ] || fail "rank $VICTIM's coretrain process not found under pid $vpid"
  kill -TERM "$victim"
  t0=$(now)
  if [ "$BACKEND" = gloo ]; then
    sleep 0.1
    for p in "$P0" "$P1"; do kill -TERM "$(pgrep -P "$p")" 2>/dev/null || true; done
  fi
  wait_all 2
  took=$(elapsed_since "$t0")
  echo "SIGTERM to rank $VICTIM at step $AT: exits $RC0 $RC1 after $took s"
  [ "$RC0" -eq 143 ] && [ "$RC1" -eq 143 ] || fail "exit statuses $RC0 $RC1, expected 143 143" "$TMP/run1.0.log" "$TMP/run1.1.log"
  awk -v t="$took" 'BEGIN { exit !(t < 20) }' || fail "the stop took $took s" "$TMP/run1.0.log"
  line=$(grep -E "^info: stopping at step [0-9]+ on SIGTERM: wrote checkpoint-[0-9]+$" "$TMP/run1.0.log") \
    || fail "rank 0 does not log 'stopping at step N on SIGTERM: wrote checkpoint-N'" "$TMP/run1.0.log"
  N=$(echo "$line" | sed -E 's/.*stopping at step ([0-9]+) .*/\1/')
  [ "$line" = "info: stopping at step $N on SIGTERM: wrote checkpoint-$N" ] || fail "step and checkpoint differ: $line"
  echo "$line"
  [ "$N" -ge $AT ] && [ "$N" -lt "$STEPS" ] || fail "stopped at step $N, expected $AT <= N < $STEPS"
  grep -q "stopping at step $N on SIGTERM (rank 0 wrote checkpoint-$N)" "$TMP/run1.1.log" \
    || fail "rank 1 does not say it stops at step $N" "$TMP/run1.1.log"
  C=$OUT/checkpoint-$N
  for f in model.safetensors optimizer.safetensors scheduler.json trainer_state.json config.json \
           rng_state_0.json rng_state_1.json; do
    [ -s "$C/$f" ] || fail "$C lacks $f"
  done
  s=$(json "$C/trainer_state.json" 'j["global_step"]')
  [ "$s" = "$N" ] || fail "$C/trainer_state.json says global_step $s"
  [ "$(cd "$OUT" && ls -d checkpoint-* | tr '\n' ' ')" = "checkpoint-$N " ] \
    || fail "output_dir holds $(cd "$OUT" && ls -d checkpoint-*), expected checkpoint-$N only"
  for f in model.safetensors trainer_state.json train_results.json; do
    [ ! -e "$OUT/$f" ] || fail "the stopped run wrote the final $f"
  done

  # The agent restarts the group: same command (with --overwrite_output_dir), TORCHELASTIC_RESTART_COUNT=1.
  launch run2 2 TORCHELASTIC_RESTART_COUNT=1 -- "${ARGS[@]}" --output_dir "$OUT" --overwrite_output_dir
  wait_all 2
  [ "$RC0" -eq 0 ] && [ "$RC1" -eq 0 ] || fail "the restart exited $RC0 $RC1" "$TMP/run2.0.log" "$TMP/run2.1.log"
  grep -q "^info: elastic restart (TORCHELASTIC_RESTART_COUNT=1): resuming from the last complete checkpoint $C " \
    "$TMP/run2.0.log" || fail "the restart does not say it resumes from $C" "$TMP/run2.0.log"
  grep -q "Continuing training from checkpoint $C: global step $N" "$TMP/run2.0.log" \
    || fail "the restart did not continue from $C" "$TMP/run2.0.log"
  cmp -s "$REF/model.safetensors" "$OUT/model.safetensors" \
    || fail "the resumed run's model.safetensors differs from the uninterrupted run's"
  "$PY" - "$REF/trainer_state.json" "$OUT/trainer_state.json" <<'PYEOF' || fail "the loss logs differ (above)"
import json, sys
ref, out = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda h: [(e["step"], e["loss"], e["grad_norm"], e["learning_rate"]) for e in h["log_history"] if "loss" in e]
a, b = key(ref), key(out)
print("log_history: %d steps, equal: %s" % (len(a), a == b))
if a != b:
    for x, y in zip(a, b):
        if x != y: print("  ref", x, "\n  out", y)
sys.exit(0 if a == b and out["global_step"] == ref["global_step"] else 1)
PYEOF

  # The same checkpoint resumed by 1 process (a scale-down): rank 0 says what changes.
  ONE=$TMP/one
  mkdir -p "$ONE"
  cp -r "$C" "$ONE/"
  RC=0
  CORETRAIN_RDZV_ROUND=1 timeout -k 5 "$LIMIT" "$BIN" "${BASE[@]}" --max_steps $((N + 2)) --output_dir "$ONE" > "$TMP/one.log" 2>&1 || RC=$?
  [ "$RC" -eq 0 ] || fail "the 1-process resume exited $RC" "$TMP/one.log"
  grep "^info: resuming checkpoint-$N written by 2 ranks with 1 ranks: global batch 32 -> 32 per step (per_device_train_batch_size 32 x 1 x accumulation 1); the epoch's sample order is re-dealt for 1 ranks" \
    "$TMP/one.log" || fail "no world-size line for 2 -> 1 ranks" "$TMP/one.log"
  ;;

early)
  OUT=$TMP/out
  # Enough paragraphs that preparing the data takes a moment; the signal lands before the first step.
  PORT=29500  # WORLD_SIZE=1: nothing listens
  start_rank 0 1 0 1 "$TMP/early.log" -- "${DEMO[@]}" --demo_train_paragraphs 3000 --max_steps 5 --output_dir "$OUT"
  p=$LAST_PID
  deadline=$(($(date +%s) + 20))
  until grep -q "demo:" "$TMP/early.log" 2>/dev/null; do
    kill -0 "$p" 2>/dev/null || fail "exited before preparing data" "$TMP/early.log"
    [ "$(date +%s)" -lt "$deadline" ] || fail "no demo line after 20 s" "$TMP/early.log"
    sleep 0.02
  done
  grep -q "Running training" "$TMP/early.log" && fail "training had already started (the test needs it earlier)" "$TMP/early.log"
  kill -TERM "$(pgrep -P "$p")"
  t0=$(now)
  wait_rc "$p"
  took=$(elapsed_since "$t0")
  echo "SIGTERM before training: exit $RC after $took s"
  [ "$RC" -eq 143 ] || fail "exit $RC, expected 143" "$TMP/early.log"
  awk -v t="$took" 'BEGIN { exit !(t < 10) }' || fail "took $took s" "$TMP/early.log"
  left=$(cd "$OUT" 2>/dev/null && ls -d checkpoint-* model.safetensors trainer_state.json 2>/dev/null || true)
  [ -z "$left" ] || fail "output_dir holds $left after a stop before training"
  ;;

restart_fresh)
  OUT=$TMP/out
  mkdir -p "$OUT"
  echo notes > "$OUT/notes.txt"
  RC=0
  TORCHELASTIC_RESTART_COUNT=1 timeout -k 5 "$LIMIT" "$BIN" "${DEMO[@]}" --max_steps 3 --output_dir "$OUT" \
    > "$TMP/fresh.log" 2>&1 || RC=$?
  [ "$RC" -eq 0 ] || fail "exit $RC" "$TMP/fresh.log"
  grep -q "^info: elastic restart (TORCHELASTIC_RESTART_COUNT=1): no complete checkpoint-N in $OUT yet; training from scratch$" \
    "$TMP/fresh.log" || fail "no line saying it starts from scratch" "$TMP/fresh.log"
  [ "$(json "$OUT/trainer_state.json" 'j["global_step"]')" = 3 ] || fail "global_step is not 3"
  ;;

error_file)
  "$PY" -c "import torch.distributed.elastic.multiprocessing.errors" 2>/dev/null || { echo "SKIP: no torch"; exit 77; }
  EF=$TMP/err/error.json
  mkdir -p "$TMP/err"
  RC=0
  TORCHELASTIC_ERROR_FILE=$EF timeout -k 5 "$LIMIT" "$BIN" "${DEMO[@]}" --learning_rate abc --output_dir "$TMP/out" \
    > "$TMP/bad.log" 2>&1 || RC=$?
  [ "$RC" -eq 1 ] || fail "exit $RC, expected 1" "$TMP/bad.log"
  [ -s "$EF" ] || fail "no $EF written" "$TMP/bad.log"
  [ -z "$(ls "$TMP/err" | grep -v '^error.json$' || true)" ] || fail "left beside it: $(ls "$TMP/err")"
  line=$(cat "$TMP/bad.log")
  "$PY" - "$EF" "$line" <<'PYEOF' || fail "torch does not read $EF as expected" "$TMP/bad.log"
import json, os, sys, time
from torch.distributed.elastic.multiprocessing.errors import ProcessFailure
path, line = sys.argv[1], sys.argv[2]
print(open(path).read())
f = ProcessFailure(local_rank=0, pid=os.getpid(), exitcode=1, error_file=path)
m = f.message
ok = isinstance(m, dict) and m["message"].startswith("ct::Error: ") and "--learning_rate" in m["message"]
ok &= m["extraInfo"]["py_callstack"].strip() == line.strip()
ok &= abs(f.timestamp - time.time()) < 60
print("ProcessFailure.message:", m["message"], "| timestamp", f.timestamp, "| ok", ok)
sys.exit(0 if ok else 1)
PYEOF
  # The way torchrun's agent prints it (ChildFailedError.format_msg) shows the line.
  "$PY" - "$EF" "$line" <<'PYEOF' || fail "torchrun's failure summary does not show the error line"
import os, sys
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure
f = ProcessFailure(local_rank=0, pid=os.getpid(), exitcode=1, error_file=sys.argv[1])
msg = ChildFailedError("coretrain", {0: f}).format_msg()
print(msg)
sys.exit(0 if sys.argv[2].strip() in msg else 1)
PYEOF
  # Without the variable no file appears.
  RC=0
  (cd "$TMP/err" && rm -f error.json && timeout -k 5 "$LIMIT" "$BIN" "${DEMO[@]}" --learning_rate abc \
     --output_dir "$TMP/out" > /dev/null 2>&1) || RC=$?
  [ "$RC" -eq 1 ] && [ -z "$(ls -A "$TMP/err")" ] || fail "exit $RC or a file without TORCHELASTIC_ERROR_FILE"
  ;;

*)
  fail "unknown case '$CASE'"
  ;;
esac
echo PASS

#!/bin/bash
# ddp_launch_test.sh CORETRAIN LAUNCHER BACKEND: the real `coretrain qa` binary trains data-parallel on 2
# processes the way the HF CPU guide's seed command does (`export CCL_WORKER_COUNT=1; export
# MASTER_ADDR=127.0.0.1; mpirun -n 2 -genv OMP_NUM_THREADS=1 run_qa.py ... --no_cuda --ddp_backend ccl`), here on
# the built-in demo data. LAUNCHER is mpiexec (MPICH Hydra) or env (torchrun-style RANK/WORLD_SIZE/... per
# process); BACKEND is ccl, gloo or mpi.
#
# Checks: exit 0 on every rank; the output folder holds HF's files once (the same listing as a 1-process run:
# no per-rank duplicates, nothing written into the working directory); trainer_state.json global_step ==
# max_steps; train_results.json's train_samples_per_second counts both ranks' samples; the log says 2 ranks and
# rank 0 prints the rank -> node -> CPUs map with both ranks; rank 1 prints no info/metrics; eval predictions
# cover every held-out question (the sharded eval is gathered). Then the same job on 1 process with the per-device
# batch doubled (--pad_to_max_length true, so both runs see the same batch shapes) must log the same losses in
# trainer_state.json's log_history within 1e-4.
source "$(dirname "$0")/ddp_lib.sh"
BIN=$1 LAUNCHER=$2 BACKEND=$3
ct_setup "ddp_launch_${LAUNCHER}_${BACKEND}" "$BIN"
export MASTER_ADDR=127.0.0.1  # the seed command exports it (mpirun) and the env launch needs it
STEPS=6
COMMON=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --max_steps $STEPS --logging_steps 1
        --disable_tqdm --no_cuda --ddp_backend "$BACKEND" --do_train --do_eval --pad_to_max_length true)
DDP=$TMP/ddp ONE=$TMP/one
mkdir -p "$TMP/cwd2" "$TMP/cwd1"

# ---- 2 ranks x batch 8
t0=$(now)
if [ "$LAUNCHER" = mpiexec ]; then
  LOG=$TMP/ddp.log
  RC=0
  (cd "$TMP/cwd2" && timeout -k 5 "$LIMIT" mpiexec -prepend-rank -n 2 -genv OMP_NUM_THREADS=1 "$BIN" \
     "${COMMON[@]}" --per_device_train_batch_size 8 --output_dir "$DDP") > "$LOG" 2>&1 || RC=$?
  [ "$RC" -eq 0 ] || fail "mpiexec -n 2 exited $RC" "$LOG"
  # Hydra's -prepend-rank tags every line with its rank.
  grep '^\[0\] ' "$LOG" | sed 's/^\[0\] //' > "$TMP/rank0.log" || true
  grep '^\[1\] ' "$LOG" | sed 's/^\[1\] //' > "$TMP/rank1.log" || true
  LAUNCHED_BY=mpirun
elif [ "$LAUNCHER" = env ]; then
  for attempt in 1 2 3; do
    pick_port
    cd "$TMP/cwd2"
    start_rank 0 2 0 2 "$TMP/rank0.log" -- "${COMMON[@]}" --per_device_train_batch_size 8 --output_dir "$DDP"
    p0=$LAST_PID
    start_rank 1 2 1 2 "$TMP/rank1.log" -- "${COMMON[@]}" --per_device_train_batch_size 8 --output_dir "$DDP"
    p1=$LAST_PID
    cd - > /dev/null
    wait_rc $p0; rc0=$RC
    if [ "$rc0" -ne 0 ] && grep -q "already in use" "$TMP/rank0.log"; then  # lost a race for the port
      kill $p1 2>/dev/null || true; wait_rc $p1; rm -rf "$DDP"; continue
    fi
    wait_rc $p1; rc1=$RC
    break
  done
  [ "$rc0" -eq 0 ] || fail "rank 0 exited $rc0" "$TMP/rank0.log"
  [ "$rc1" -eq 0 ] || fail "rank 1 exited $rc1" "$TMP/rank1.log"
  LOG=$TMP/rank0.log
  LAUNCHED_BY=env
else
  fail "LAUNCHER must be mpiexec or env, got '$LAUNCHER'"
fi
echo "2 ranks ($LAUNCHER, $BACKEND): $(elapsed_since "$t0") s"

# ---- the log: world size, the rank map (from rank 0, both ranks), quiet replica
R0=$TMP/rank0.log R1=$TMP/rank1.log
grep -q "^info: $BACKEND: 2 rank(s) on 1 node(s) .*launched by $LAUNCHED_BY" "$R0" \
  || fail "rank 0's log does not say '$BACKEND: 2 rank(s) on 1 node(s) ... launched by $LAUNCHED_BY'" "$R0"
for r in 0 1; do
  grep -q "^info: rank $r -> node 0 (.*) -> 1 thread (OMP_NUM_THREADS) on CPUs " "$R0" \
    || fail "rank 0's rank map has no line 'rank $r -> node 0 (host) -> 1 thread ... on CPUs ...'" "$R0"
done
grep -q "Total train batch size (w. parallel, distributed & accumulation) = 16" "$R0" \
  || fail "rank 0 does not log the total train batch size 16 (2 ranks x 8)" "$R0"
[ -s "$R1" ] && grep -Eq '^(info: |\*\*\*\*\* |\{|demo: )' "$R1" \
  && fail "rank 1 printed info lines or metrics (HF's replicas log warnings only)" "$R1"

# ---- the output folder
for f in config.json model.safetensors trainer_state.json train_results.json eval_results.json all_results.json \
         eval_predictions.json eval_nbest_predictions.json vocab.txt training_args.json; do
  [ -s "$DDP/$f" ] || fail "$DDP has no $f" "$LOG"
done
[ -z "$(ls -A "$TMP/cwd2")" ] || fail "the run wrote into its working directory: $(ls -A "$TMP/cwd2")"
step=$(json "$DDP/trainer_state.json" 'j["global_step"]')
[ "$step" = "$STEPS" ] || fail "trainer_state.json global_step is $step, expected max_steps $STEPS"
nloss=$(json "$DDP/trainer_state.json" 'len([e for e in j["log_history"] if "loss" in e])')
[ "$nloss" = "$STEPS" ] || fail "trainer_state.json log_history has $nloss loss entries, expected $STEPS"
# HF: train_samples_per_second = max_steps x total train batch (8 per rank x 2 ranks) / train_runtime.
samples=$(json "$DDP/train_results.json" 'round(j["train_samples_per_second"] * j["train_runtime"], 2)')
json "$DDP/train_results.json" "abs(j['train_samples_per_second'] * j['train_runtime'] / ($STEPS * 8 * 2) - 1) < 0.03" \
  | grep -q True || fail "train_samples_per_second x train_runtime = $samples samples, expected $((STEPS * 16)) (both ranks)"
# Every held-out question has a prediction: rank 1's eval shard was gathered.
nq=$(json "$DDP/demo_data/dev.json" 'sum(len(p["qas"]) for a in j["data"] for p in a["paragraphs"])')
np=$(json "$DDP/eval_predictions.json" 'len(j)')
[ "$nq" -gt 0 ] && [ "$np" = "$nq" ] || fail "eval_predictions.json has $np predictions for $nq held-out questions"

# ---- the same job on 1 process, per-device batch 16
t0=$(now)
RC=0
(cd "$TMP/cwd1" && timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --per_device_train_batch_size 16 \
   --output_dir "$ONE") > "$TMP/one.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "the 1-process run exited $RC" "$TMP/one.log"
echo "1 process: $(elapsed_since "$t0") s"
# One set of files: the 2-rank folder lists exactly what the 1-process folder does.
l2=$(cd "$DDP" && find . | sort) l1=$(cd "$ONE" && find . | sort)
[ "$l2" = "$l1" ] || fail "the 2-rank output folder differs from the 1-process one (per-rank files?):
$(diff <(echo "$l1") <(echo "$l2") || true)"

# ---- losses: 2 ranks x 8 follow 1 process x 16
"$PY" - "$DDP/trainer_state.json" "$ONE/trainer_state.json" "$DDP/train_results.json" "$ONE/train_results.json" <<'EOF' \
  || fail "the 2-rank losses differ from the 1-process ones (see above)"
import json, sys
two, one = (json.load(open(p)) for p in sys.argv[1:3])
a = [(e["step"], e["loss"]) for e in two["log_history"] if "loss" in e]
b = [(e["step"], e["loss"]) for e in one["log_history"] if "loss" in e]
print("2 ranks x 8 :", [l for _, l in a])
print("1 proc x 16 :", [l for _, l in b])
bad = len(a) != len(b) or any(sa != sb or abs(la - lb) > 1e-4 + 1e-9 for (sa, la), (sb, lb) in zip(a, b))
ta, tb = (json.load(open(p))["train_loss"] for p in sys.argv[3:5])
print("train_loss  :", ta, tb)
bad |= abs(ta - tb) > 1e-4
sys.exit(1 if bad else 0)
EOF
echo PASS

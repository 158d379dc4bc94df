#!/bin/bash
# observability_test.sh CORETRAIN: what `coretrain qa` leaves for people to look at, checked with readers that
# share no code with it.
#
# 1. 2 ranks (mpiexec) train the demo with --report_to tensorboard and evaluations during training:
#    - TensorBoard: only rank 0 writes, one event file under the default logging_dir
#      output_dir/runs/{%b%d_%H-%M-%S}_{hostname}; tensorboard_check.py reads it (TFRecord framing, both CRCs,
#      protobuf by hand) and compares every scalar with trainer_state.json's log_history;
#    - the model card README.md: front matter keys in HF's order, trained from scratch (the demo has no base
#      model), distributed_type/num_devices/total_train_batch_size, the Training results table with one row per
#      evaluation during training, Framework versions;
#    - training_report.html: report_check.py (well-formed, self-contained, polyline points = logged points, one
#      bar per rank, summary = all_results.json); ddp_timing.json has both ranks;
#    - `coretrain report DIR -o FILE` rebuilds the same page byte for byte.
# 2. 1 process fine-tunes from that output folder with --report_to all --logging_dir D: the event file is in D,
#    the card's base_model is the folder path, no distributed_type; --report_to none (the default) writes no runs/.
# 3. --report_to wandb is refused naming the flag; `coretrain report` on a folder without trainer_state.json fails.
source "$(dirname "$0")/ddp_lib.sh"
BIN=$(readlink -f "$1")
ct_setup observability "$BIN"
HERE=$(cd "$(dirname "$0")" && pwd)
COMMON=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --max_steps 12 --logging_steps 2
        --disable_tqdm --no_cuda --do_train --do_eval)
OUT=$TMP/two
LOG=$TMP/two.log

# ---- 1. two ranks
RC=0
(cd "$TMP" && timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" "${COMMON[@]}" \
   --eval_strategy steps --eval_steps 6 --report_to tensorboard --output_dir "$OUT") > "$LOG" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "mpiexec -n 2 exited $RC" "$LOG"
runs=$(ls "$OUT/runs")
[ "$(echo "$runs" | wc -l)" = 1 ] || fail "expected one logging_dir under runs/, found: $runs"
[ "$(ls "$OUT/runs/$runs" | wc -l)" = 1 ] || fail "more than one event file (rank 1 wrote too?): $(ls "$OUT/runs/$runs")"
"$PY" "$HERE/tensorboard_check.py" "$OUT/runs/$runs" "$OUT" || fail "the TensorBoard events do not read back" "$LOG"
json "$OUT/training_args.json" 'j["logging_dir"]' | grep -q "/runs/$runs\$" \
  || fail "training_args.json's logging_dir is not the folder written: $(json "$OUT/training_args.json" 'j["logging_dir"]')"

"$PY" - "$OUT/README.md" "$OUT/trainer_state.json" <<'EOF' || fail "the model card is not HF's (above)" "$OUT/README.md"
import json, re, sys
card = open(sys.argv[1]).read()
state = json.load(open(sys.argv[2]))
m = re.match(r"---\n(.*?)\n---\n", card, re.S)
assert m, "no YAML front matter"
keys = [l.split(":")[0] for l in m.group(1).splitlines() if re.match(r"^[a-z_-]+:", l)]
assert keys == ["library_name", "tags", "metrics", "model-index"], keys
assert "library_name: transformers\ntags:\n- generated_from_trainer\n" in card
assert "<!-- This model card has been generated automatically" in card
assert "\n# two\n\nThis model was trained from scratch on an unknown dataset.\n" in card
for sec in ("## Model description", "## Intended uses & limitations", "## Training and evaluation data",
            "## Training procedure", "### Training hyperparameters", "### Training results", "### Framework versions"):
    assert "\n" + sec + "\n" in card, sec
for hp in ("- learning_rate: 0.002\n", "- train_batch_size: 16\n", "- distributed_type: multi-CPU\n",
           "- num_devices: 2\n", "- total_train_batch_size: 32\n", "- training_steps: 12\n"):
    assert hp in card, hp
table = card.split("### Training results\n\n")[1].split("\n\n")[0].splitlines()
end = [i for i, e in enumerate(state["log_history"]) if "train_runtime" in e][0]
evals = [e for e in state["log_history"][:end] if "eval_f1" in e]
assert [c.strip() for c in table[0].split("|")[1:-1]] == ["Training Loss", "Epoch", "Step", "Exact Match", "F1"], table[0]
assert len(table) == 2 + len(evals), (table, len(evals))
assert "- coretrain " in card and "- oneDNN " in card
print("model card: front matter", keys, "|", len(table) - 2, "result rows")
EOF

"$PY" "$HERE/report_check.py" "$OUT/training_report.html" "$OUT" || fail "the training report is malformed" "$LOG"
[ "$(json "$OUT/ddp_timing.json" 'len(j["ranks"])')" = 2 ] || fail "ddp_timing.json does not hold both ranks"
"$BIN" report "$OUT" -o "$TMP/again.html" > /dev/null || fail "coretrain report failed"
cmp -s "$OUT/training_report.html" "$TMP/again.html" || fail "coretrain report DIR does not rebuild the same page"

# ---- 2. one process, fine-tuning from that folder, --report_to all --logging_dir
ONE=$TMP/one
RC=0
(cd "$TMP" && timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --model_name_or_path "$OUT" --report_to all \
   --logging_dir "$TMP/tb" --output_dir "$ONE") > "$TMP/one.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "the 1-process run exited $RC" "$TMP/one.log"
ls "$TMP/tb"/events.out.tfevents.* > /dev/null 2>&1 || fail "--logging_dir $TMP/tb holds no event file"
[ ! -e "$ONE/runs" ] || fail "--logging_dir given, yet $ONE/runs was made"
grep -q "^base_model: $OUT\$" "$ONE/README.md" || fail "base_model is not the --model_name_or_path folder" "$ONE/README.md"
grep -q "distributed_type" "$ONE/README.md" && fail "a 1-process card says distributed_type" "$ONE/README.md"
[ "$(json "$ONE/ddp_timing.json" 'j["world_size"]')" = 1 ] || fail "ddp_timing.json world_size is not 1"
NONE=$TMP/none
(cd "$TMP" && timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --output_dir "$NONE") > "$TMP/none.log" 2>&1 \
  || fail "the run without --report_to failed" "$TMP/none.log"
[ ! -e "$NONE/runs" ] || fail "no --report_to (HF v5's default none), yet runs/ was written"
[ -s "$NONE/README.md" ] && [ -s "$NONE/training_report.html" ] || fail "no README.md / training_report.html"

# ---- 3. refusals
RC=0
"$BIN" "${COMMON[@]}" --report_to wandb --output_dir "$TMP/w" > "$TMP/w.log" 2>&1 || RC=$?
[ "$RC" -ne 0 ] && grep -q "report_to: wandb is not available in coretrain" "$TMP/w.log" \
  || fail "--report_to wandb was not refused with a message (exit $RC)" "$TMP/w.log"
RC=0
"$BIN" report "$TMP" > "$TMP/r.log" 2>&1 || RC=$?
[ "$RC" -ne 0 ] && grep -q "no trainer_state.json" "$TMP/r.log" \
  || fail "coretrain report on a folder without trainer_state.json did not fail clearly" "$TMP/r.log"
echo PASS

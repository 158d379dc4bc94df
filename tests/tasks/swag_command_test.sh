#!/bin/bash
# swag_command_test.sh CORETRAIN CHECKPOINT_TOOL SOURCE_DIR: `coretrain swag` end to end, as a user runs
# run_swag.py on their own csv: a tiny BERT folder (ct_checkpoint_tool init + the fixture WordPiece
# tokenizer) learns a synthetic SWAG (the right ending repeats the context's word) to eval accuracy > 0.9;
# the output folder holds what HF's writes (a MultipleChoice config, weights, tokenizer, the card's task);
# the saved model evaluated again from a json file, and padded, gives the same metrics; 2 ranks under
# mpiexec with the same global batch log the same losses and end with the same eval metrics and weights;
# max_seq_length follows run_swag's rules; bad inputs fail in one line naming the flag, column or row. Only
# bash and awk, with python3 reading the JSON files.
set -eu

BIN=$(realpath "$1") TOOL=$(realpath "$2") SRC=$(realpath "$3")  # absolute: the 2-rank run starts elsewhere
for x in "$BIN" "$TOOL"; do [ -x "$x" ] || { echo "FAIL: $x is not an executable"; exit 1; }; done
# pyj FILE EXPR: EXPR over the parsed JSON file `j`, printed (python3 is one of install-deps.sh's packages).
pyj() { /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$2"; }
LIMIT=${CT_TEST_PROCESS_LIMIT:-100}  # seconds any one coretrain process may run
TMP=$(mktemp -d /tmp/ct_swag_command.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# One thread per process: beside other tests a second spinning OpenMP thread slows a tiny model a lot.
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive CCL_WORKER_COUNT=1 MASTER_ADDR=127.0.0.1
export HF_DATASETS_CACHE="$TMP/cache" CORETRAIN_COMM_TIMEOUT=${CORETRAIN_COMM_TIMEOUT:-60}
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_PORT PMI_RANK PMI_SIZE 2> /dev/null || true

fail() {
  echo "FAIL: $1" >&2
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "---- last lines of $f" >&2; grep -v '^train: step' "$f" | tail -n 25 >&2; }
  done
  exit 1
}
now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# `within A B REL`: |A - B| <= REL * |B|.
within() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
                                                     exit !(d <= r * m) }'; }
swag() { timeout -k 5 "$LIMIT" "$BIN" swag "$@"; }

# ---- the model folder: what --model_name_or_path names (config.json, model.safetensors, tokenizer.json).
# No dropout, and an init 5x HF's default: learning from scratch that two tokens are equal, the tiny model
# stalls on a plateau (eval accuracy 0.3-0.8) for some data orders at initializer_range 0.02, and reached
# 1.0 for every one of 24 orders x inits tried at 0.1.
MODEL=$TMP/model
mkdir -p "$MODEL"
cat > "$TMP/config.json" << 'EOF'
{"model_type": "bert", "vocab_size": 391, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
 "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2,
 "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.1}
EOF
"$TOOL" init "$TMP/config.json" "$MODEL" multiple-choice 42 > "$TMP/init.log" 2>&1 \
  || fail "ct_checkpoint_tool init" "$TMP/init.log"
cp "$SRC/tests/text/data/tokenizers/bert.json" "$MODEL/tokenizer.json"

# ---- SWAG-like data: context "the W", header "and", every ending "the X" of another word but the right
# one, which repeats W. Columns as the Hub's swag has them (with two it has and run_swag ignores).
gen_csv() {  # N SEED
  awk -v n="$1" -v seed="$2" 'BEGIN {
    srand(seed); k = split("hello world cafe istanbul resume", w, " ")
    print "video-id,fold-ind,sent1,sent2,ending0,ending1,ending2,ending3,label"
    for (i = 0; i < n; ++i) {
      for (j = 1; j <= k; ++j) o[j] = j
      for (j = k; j > 1; --j) { r = 1 + int(rand() * j); t = o[j]; o[j] = o[r]; o[r] = t }
      label = int(rand() * 4); wrong = 2; line = "v" i "," i ",the " w[o[1]] ",and"
      for (c = 0; c < 4; ++c) line = line ",the " w[o[c == label ? 1 : wrong++]]
      print line "," label
    }
  }'
}
# The same rows as JSON lines (datasets' json loader).
csv_to_jsonl() {
  awk -F, 'NR > 1 { printf "{\"sent1\": \"%s\", \"sent2\": \"%s\", \"ending0\": \"%s\", \"ending1\": \"%s\", ", $3, $4, $5, $6
                   printf "\"ending2\": \"%s\", \"ending3\": \"%s\", \"label\": %s}\n", $7, $8, $9 }' "$1"
}
gen_csv 544 7 > "$TMP/train.csv"
gen_csv 128 8 > "$TMP/dev.csv"
csv_to_jsonl "$TMP/dev.csv" > "$TMP/dev.json"

# 400 steps: every data order and init tried reached accuracy 1.0 by then (at 100-160 steps some stop at 0.87).
STEPS=400
COMMON=(--model_name_or_path "$MODEL" --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv"
        --do_train --do_eval --max_train_samples 512 --learning_rate 2e-3 --warmup_ratio 0.1
        --save_strategy no --per_device_eval_batch_size 32 --disable_tqdm true --seed 42)

# ---- 1 process x 16 examples a step
ONE=$TMP/one
t0=$(now)
RC=0
swag "${COMMON[@]}" --max_steps $STEPS --logging_steps 100 --per_device_train_batch_size 16 --output_dir "$ONE" \
  > "$TMP/one.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "coretrain swag exited $RC" "$TMP/one.log"
echo "1 process, $STEPS steps: $(elapsed_since "$t0") s"
for f in config.json model.safetensors tokenizer.json README.md all_results.json train_results.json \
         eval_results.json trainer_state.json; do
  [ -s "$ONE/$f" ] || fail "the output folder has no $f" "$TMP/one.log"
done
acc=$(pyj "$ONE/all_results.json" 'j["eval_accuracy"]')
loss=$(pyj "$ONE/all_results.json" 'j["eval_loss"]')
echo "eval_accuracy $acc eval_loss $loss"
awk -v a="$acc" 'BEGIN { exit !(a > 0.9) }' || fail "eval_accuracy $acc, expected > 0.9" "$TMP/one.log"
[ "$(pyj "$ONE/all_results.json" 'j["train_samples"]')" = 512 ] \
  || fail "train_samples $(pyj "$ONE/all_results.json" 'j["train_samples"]'), expected 512 (--max_train_samples)"
[ "$(pyj "$ONE/all_results.json" 'j["eval_samples"]')" = 128 ] \
  || fail "eval_samples $(pyj "$ONE/all_results.json" 'j["eval_samples"]'), expected 128"
[ "$(pyj "$ONE/config.json" 'j["architectures"][0]')" = BertForMultipleChoice ] \
  || fail "config.json architectures: $(pyj "$ONE/config.json" 'j["architectures"]'), expected BertForMultipleChoice"
grep -q "multiple-choice" "$ONE/README.md" || fail "README.md does not name the task multiple-choice"
grep -q "SWAG" "$ONE/README.md" || fail "README.md does not name the dataset SWAG"
# No --max_seq_length and no model_max_length: HF's 1024 with its warning, then the model's 64 positions.
grep -q "Picking 1024 instead" "$TMP/one.log" || fail "no warning about the 1024 default" "$TMP/one.log"

# ---- the saved folder evaluated again, from the same rows as JSON lines: the same metrics
RC=0
swag --model_name_or_path "$ONE" --validation_file "$TMP/dev.json" --do_eval --per_device_eval_batch_size 32 \
  --output_dir "$TMP/again" > "$TMP/again.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "eval of the saved folder exited $RC" "$TMP/again.log"
acc2=$(pyj "$TMP/again/eval_results.json" 'j["eval_accuracy"]')
loss2=$(pyj "$TMP/again/eval_results.json" 'j["eval_loss"]')
[ "$acc2" = "$acc" ] && within "$loss2" "$loss" 1e-5 \
  || fail "the saved model scores accuracy $acc2 loss $loss2 on dev.json, the run ended with $acc $loss" \
       "$TMP/again.log"
# An eval-only run has no epoch (HF's TrainerState.epoch is None until training starts); the training run has.
[ "$(pyj "$TMP/again/eval_results.json" '"epoch" in j')" = false ] \
  || fail "the eval-only run's eval_results.json has an \"epoch\" key" "$TMP/again/eval_results.json"
[ "$(pyj "$ONE/eval_results.json" '"epoch" in j')" = true ] \
  || fail "the training run's eval_results.json has no \"epoch\" key" "$ONE/eval_results.json"

# ---- 2 ranks x 8 examples = 1 process x 16: the same global batches, so the same training up to float
# summation order. Compared over 80 steps (accuracy 1.0 already, eval_loss 0.18): once the loss nears 0 the
# gradients are tiny, Adam scales their rounding noise up to the step size, and by step 400 the two runs'
# eval_loss (5e-5) differs by 3e-4 relative and weights by 1e-4 though both score 1.0.
PAIR=(--max_steps 80 --logging_steps 8)
ONE80=$TMP/one80 TWO=$TMP/two
RC=0
swag "${COMMON[@]}" "${PAIR[@]}" --per_device_train_batch_size 16 --output_dir "$ONE80" > "$TMP/one80.log" 2>&1 \
  || RC=$?
[ "$RC" -eq 0 ] || fail "coretrain swag (80 steps) exited $RC" "$TMP/one80.log"
mkdir -p "$TMP/cwd"
t0=$(now)
RC=0
(cd "$TMP/cwd" && timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" swag "${COMMON[@]}" \
   "${PAIR[@]}" --per_device_train_batch_size 8 --output_dir "$TWO") > "$TMP/two.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "mpiexec -n 2 coretrain swag exited $RC" "$TMP/two.log"
echo "2 ranks, 80 steps: $(elapsed_since "$t0") s"
[ -z "$(ls -A "$TMP/cwd")" ] || fail "the 2-rank run wrote into its working directory: $(ls -A "$TMP/cwd")"
grep -q "Total train batch size (w. parallel, distributed & accumulation) = 16" "$TMP/two.log" \
  || fail "the 2-rank run does not log the total train batch size 16" "$TMP/two.log"
[ "$(pyj "$TWO/all_results.json" 'j["eval_samples"]')" = 128 ] || fail "2 ranks: eval_samples is not 128"
for k in eval_accuracy eval_loss; do
  a=$(pyj "$ONE80/all_results.json" "j['$k']") b=$(pyj "$TWO/all_results.json" "j['$k']")
  echo "$k: 1 process $a, 2 ranks $b"
  if [ $k = eval_accuracy ]; then
    [ "$a" = "$b" ] || fail "2 ranks: eval_accuracy $b, 1 process $a"
  else
    within "$b" "$a" 1e-4 || fail "2 ranks: eval_loss $b, 1 process $a (more than 1e-4 apart)"
  fi
done
losses() { pyj "$1/trainer_state.json" '"\n".join("%s %s" % (e["step"], json.dumps(e["loss"])) for e in j["log_history"] if "loss" in e)'; }
paste -d' ' <(losses "$ONE80") <(losses "$TWO") > "$TMP/losses.txt"
[ "$(wc -l < "$TMP/losses.txt")" = 10 ] || fail "expected 10 logged losses in each run: $(cat "$TMP/losses.txt")"
while read -r s1 l1 s2 l2; do
  [ "$s1" = "$s2" ] && awk -v a="$l1" -v b="$l2" 'BEGIN { d = a - b; exit !(d <= 1e-4 && d >= -1e-4) }' \
    || fail "training losses differ: step $s1 loss $l1 (1 process), step $s2 loss $l2 (2 ranks)"
done < "$TMP/losses.txt"
# The classifier's and the attention keys' biases are left out: the loss does not depend on them (they shift
# every choice's logit, every key's score alike), so their gradients are rounding noise that Adam turns into
# +-lr steps of either sign.
"$TOOL" diff "$ONE80" "$TWO" classifier.bias attention.self.key.bias > "$TMP/diff.txt" 2>&1 \
  || fail "ct_checkpoint_tool diff" "$TMP/diff.txt"
read -r _ wdiff _ wmax _ < "$TMP/diff.txt"
echo "weights: $(cat "$TMP/diff.txt")"
awk -v d="$wdiff" -v m="$wmax" 'BEGIN { exit !(d <= 1e-5 * m) }' \
  || fail "2 ranks' weights differ from 1 process' by $wdiff (largest weight $wmax)"

# ---- --pad_to_max_length: every choice padded to max_seq_length scores as the packed batches did
RC=0
swag --model_name_or_path "$ONE80" --validation_file "$TMP/dev.csv" --do_eval --pad_to_max_length true \
  --max_seq_length 16 --per_device_eval_batch_size 32 --output_dir "$TMP/padded" > "$TMP/padded.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "the padded eval exited $RC" "$TMP/padded.log"
for k in eval_accuracy eval_loss; do
  a=$(pyj "$ONE80/all_results.json" "j['$k']") b=$(pyj "$TMP/padded/eval_results.json" "j['$k']")
  within "$b" "$a" 1e-5 || fail "padded to 16: $k $b, packed $a"
done

# ---- an ELECTRA folder: ElectraForMultipleChoice (SequenceSummary on the first token, then a one-logit
# classifier) trains a few steps and saves under transformers' names
ELECTRA=$TMP/electra
mkdir -p "$ELECTRA"
cat > "$TMP/electra_config.json" << 'EOF'
{"model_type": "electra", "vocab_size": 391, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 1,
 "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2}
EOF
"$TOOL" init "$TMP/electra_config.json" "$ELECTRA" multiple-choice 42 > "$TMP/electra_init.log" 2>&1 \
  || fail "ct_checkpoint_tool init (electra)" "$TMP/electra_init.log"
cp "$MODEL/tokenizer.json" "$ELECTRA/tokenizer.json"
RC=0
swag --model_name_or_path "$ELECTRA" --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv" --do_train \
  --do_eval --max_train_samples 64 --max_steps 8 --per_device_train_batch_size 8 --save_strategy no \
  --disable_tqdm true --output_dir "$TMP/electra_out" > "$TMP/electra.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "coretrain swag on an ELECTRA folder exited $RC" "$TMP/electra.log"
[ "$(pyj "$TMP/electra_out/config.json" 'j["architectures"][0]')" = ElectraForMultipleChoice ] \
  || fail "ELECTRA config.json architectures: $(pyj "$TMP/electra_out/config.json" 'j["architectures"]')"
names=$(/usr/bin/python3 -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(" ".join(sorted(k for k in json.loads(f.read(n)) if not k.startswith("electra."))))' \
  "$TMP/electra_out/model.safetensors")
[ "$names" = "__metadata__ classifier.bias classifier.weight sequence_summary.summary.bias sequence_summary.summary.weight" ] \
  || fail "ELECTRA head tensors: $names"
pyj "$TMP/electra_out/all_results.json" 'j["eval_accuracy"]' > /dev/null \
  || fail "the ELECTRA run has no eval_accuracy" "$TMP/electra.log"

# ---- max_seq_length past the tokenizer's model_max_length: HF's warning, then model_max_length
cp -r "$ONE80" "$TMP/mml32"
echo '{"model_max_length": 32}' > "$TMP/mml32/tokenizer_config.json"
RC=0
swag --model_name_or_path "$TMP/mml32" --validation_file "$TMP/dev.csv" --do_eval --max_seq_length 48 \
  --pad_to_max_length true --output_dir "$TMP/mml" > "$TMP/mml.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "the eval with model_max_length 32 exited $RC" "$TMP/mml.log"
grep -q "The max_seq_length passed (48) is larger than the maximum length for the model (32)\. Using max_seq_length=32\." \
  "$TMP/mml.log" || fail "no warning that --max_seq_length 48 is past model_max_length 32" "$TMP/mml.log"

# ---- one-line errors naming what is wrong
expect_error() {  # NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  local log=$TMP/err_$name.log rc=0
  swag "$@" --output_dir "$TMP/err_$name" > "$log" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || fail "$name: exit $rc, expected 1" "$log"
  local lines
  lines=$(grep -c "error:" "$log" || true)
  [ "$lines" = 1 ] || fail "$name: $lines error lines, expected 1" "$log"
  grep "error:" "$log" | grep -q -- "$pattern" || fail "$name: the error does not say '$pattern'" "$log"
  grep "error:" "$log"
}
cut -d, -f1-7,9 "$TMP/dev.csv" > "$TMP/no_ending3.csv"
expect_error no_ending3 "no column 'ending3'" --model_name_or_path "$MODEL" --train_file "$TMP/no_ending3.csv" \
  --do_train
cp "$TMP/dev.csv" "$TMP/dev.txt"
expect_error extension "--train_file $TMP/dev.txt: expected a csv, json file" --model_name_or_path "$MODEL" \
  --train_file "$TMP/dev.txt" --do_train
awk -F, -v OFS=, 'NR == 4 { $9 = 7 } { print }' "$TMP/dev.csv" > "$TMP/bad_label.csv"
expect_error label 'column "label" row 2: label 7 is not an ending index' --model_name_or_path "$MODEL" \
  --train_file "$TMP/dev.csv" --validation_file "$TMP/bad_label.csv" --do_eval
expect_error no_validation "--do_eval requires a validation dataset (--validation_file)" \
  --model_name_or_path "$MODEL" --train_file "$TMP/dev.csv" --do_eval
expect_error positions "--max_seq_length: 100 exceeds the model's max_position_embeddings (64)" \
  --model_name_or_path "$MODEL" --validation_file "$TMP/dev.csv" --do_eval --max_seq_length 100
echo "PASS"

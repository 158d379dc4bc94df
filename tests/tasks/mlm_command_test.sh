#!/bin/bash
# mlm_command_test.sh CORETRAIN CHECKPOINT_TOOL TOKENIZER_JSON: the real `coretrain mlm` run as run_mlm.py is
# run, on a tiny BERT (ct_checkpoint_tool init + the 391-token fixture tokenizer) and text files whose words
# follow a fixed 7-word cycle, so a masked word is what its neighbours say and a few hundred steps learn it.
#
# Checks: grouped chunks train eval_loss far below ln(391) (a uniform guess), perplexity = exp(eval_loss),
# accuracy over the masked tokens, HF's output folder (config.json naming BertForMaskedLM, weights, tokenizer,
# a fill-mask card); --line_by_line keeps one example per non-blank line; --validation_split_percentage holds
# out train[:N%]; --model_type + --config_overrides + --tokenizer_name train from scratch; 2 ranks x batch 4
# (mpiexec) end at the eval_loss of 1 process x batch 8; one-line errors for a missing file, a bad
# extension and an unknown override key.
source "$(dirname "$0")/../train/ddp_lib.sh"
BIN=$1 TOOL=$2 TOKENIZER=$3
ct_setup mlm_command "$BIN"
export MASTER_ADDR=127.0.0.1

# ---- a tiny model folder and the texts
cat > "$TMP/config.json" <<'EOF'
{"model_type": "bert", "vocab_size": 391, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
 "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2}
EOF
MODEL=$TMP/model
"$TOOL" init "$TMP/config.json" "$MODEL" mlm 7 > "$TMP/tool.log" 2>&1 || fail "ct_checkpoint_tool init failed" "$TMP/tool.log"
cp "$TOKENIZER" "$MODEL/tokenizer.json"

WORDS=(hello world cafe zurich resume naive istanbul)
# texts N SEED: N lines, each the cycle from some word on, 8-20 words long.
texts() {
  local n=$1 s=$2 i k start len line
  for ((i = 0; i < n; ++i)); do
    start=$(((i * 5 + s) % 7)) len=$((8 + (i * 7 + s) % 13)) line=""
    for ((k = 0; k < len; ++k)); do line+="${line:+ }${WORDS[$(((start + k) % 7))]}"; done
    echo "$line"
  done
}
texts 240 1 > "$TMP/train.txt"
# Blank and whitespace-only lines: grouped runs tokenize them ([CLS] [SEP]), --line_by_line drops them.
{ texts 30 3 | sed '10a\
\
   
'; } > "$TMP/validation.txt"
[ "$(grep -c . "$TMP/validation.txt")" = 31 ] || fail "the validation file should have 30 text lines and one of spaces"

run() {  # run NAME ARGS...: coretrain mlm into $TMP/NAME, log in $TMP/NAME.log
  local name=$1
  shift
  local rc=0 t0
  t0=$(now)
  timeout -k 5 "$LIMIT" "$BIN" mlm --output_dir "$TMP/$name" --disable_tqdm --seed 42 "$@" > "$TMP/$name.log" 2>&1 \
    || rc=$?
  [ "$rc" -eq 0 ] || fail "coretrain mlm $* exited $rc" "$TMP/$name.log"
  echo "$name: $(elapsed_since "$t0") s"
}
TRAIN=(--do_train --do_eval --max_seq_length 32 --per_device_train_batch_size 8 --per_device_eval_batch_size 16
       --learning_rate 3e-3 --warmup_ratio 0.1 --save_strategy no --logging_steps 20)

# ---- grouped chunks from a checkpoint
run grouped --model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt" \
  "${TRAIN[@]}" --num_train_epochs 12
OUT=$TMP/grouped
for f in config.json model.safetensors tokenizer.json README.md train_results.json eval_results.json \
         all_results.json trainer_state.json; do
  [ -s "$OUT/$f" ] || fail "$OUT has no $f" "$TMP/grouped.log"
done
json "$OUT/config.json" 'j["architectures"]' | grep -q "BertForMaskedLM" \
  || fail "config.json does not name BertForMaskedLM: $(json "$OUT/config.json" 'j.get("architectures")')"
grep -q "fill-mask" "$OUT/README.md" || fail "README.md does not tag fill-mask" "$OUT/README.md"
"$PY" - "$OUT/eval_results.json" <<'EOF' || fail "grouped: eval metrics (see above)" "$TMP/grouped.log"
import json, math, sys
m = json.load(open(sys.argv[1]))
print("grouped:", {k: m[k] for k in ("eval_loss", "perplexity", "eval_accuracy", "eval_samples")})
ok = m["eval_loss"] < 0.35 * math.log(391)
ok &= abs(m["perplexity"] / math.exp(m["eval_loss"]) - 1) < 1e-9
ok &= m["eval_accuracy"] > 0.5
sys.exit(0 if ok else 1)
EOF
# 240 train lines of 8-20 words (+ [CLS] [SEP]) hold about 3,900 tokens: 120-odd chunks of 32.
chunks=$(json "$OUT/train_results.json" 'j["train_samples"]')
[ "$chunks" -gt 100 ] && [ "$chunks" -lt 140 ] || fail "grouped: train_samples $chunks, expected ~120 chunks of 32"

# ---- --line_by_line, padded: one example per non-blank line
run lines --model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt" \
  "${TRAIN[@]}" --max_steps 10 --line_by_line --pad_to_max_length
[ "$(json "$TMP/lines/eval_results.json" 'j["eval_samples"]')" = 30 ] \
  || fail "--line_by_line: eval_samples $(json "$TMP/lines/eval_results.json" 'j["eval_samples"]'), expected the 30 non-blank lines"
[ "$(json "$TMP/lines/train_results.json" 'j["train_samples"]')" = 240 ] || fail "--line_by_line: train_samples is not 240"

# ---- no validation file: train[:10%] evaluates, train[10%:] trains
run split --model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_split_percentage 10 \
  "${TRAIN[@]}" --max_steps 10 --line_by_line --max_train_samples 200
[ "$(json "$TMP/split/eval_results.json" 'j["eval_samples"]')" = 24 ] || fail "--validation_split_percentage 10: eval_samples is not 24 of 240"
[ "$(json "$TMP/split/train_results.json" 'j["train_samples"]')" = 200 ] || fail "--max_train_samples 200: train_samples is not 200"

# ---- from scratch: a fresh BERT of the overridden size, the fixture tokenizer
run scratch --model_type bert --tokenizer_name "$MODEL" --train_file "$TMP/train.txt" \
  --validation_file "$TMP/validation.txt" "${TRAIN[@]}" --num_train_epochs 4 \
  --config_overrides "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64,vocab_size=391"
json "$TMP/scratch/config.json" '(j["hidden_size"], j["num_hidden_layers"], j["vocab_size"], j["architectures"])' \
  | grep -q "(32, 2, 391, \['BertForMaskedLM'\])" || fail "scratch: config.json is not the overridden BERT" "$TMP/scratch/config.json"
grep -q "training bert from random init" "$TMP/scratch.log" || fail "scratch: no 'from random init' line" "$TMP/scratch.log"
json "$TMP/scratch/eval_results.json" "j['eval_loss'] < 0.8 * $(awk 'BEGIN{print log(391)}')" | grep -q True \
  || fail "scratch: eval_loss $(json "$TMP/scratch/eval_results.json" 'j["eval_loss"]') did not drop below 0.8 ln(391)"

# ---- 2 ranks x 4 = 1 process x 8
DDP=(--model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt"
     "${TRAIN[@]}" --max_steps 30 --ddp_backend ccl)
run one "${DDP[@]}"
rc=0
t0=$(now)
timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" mlm --output_dir "$TMP/two" --disable_tqdm \
  --seed 42 "${DDP[@]}" --per_device_train_batch_size 4 > "$TMP/two.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "mpiexec -n 2 coretrain mlm exited $rc" "$TMP/two.log"
echo "two: $(elapsed_since "$t0") s"
"$PY" - "$TMP/one/eval_results.json" "$TMP/two/eval_results.json" <<'EOF' || fail "2 ranks' eval_loss differs from 1 process'"
import json, sys
a, b = (json.load(open(p))["eval_loss"] for p in sys.argv[1:3])
print("eval_loss 1 x 8:", a, " 2 x 4:", b)
sys.exit(0 if abs(a - b) <= 1e-4 * abs(a) else 1)
EOF

# ---- one-line errors
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1 rc=0
  shift
  timeout -k 5 "$LIMIT" "$BIN" mlm --output_dir "$TMP/err" --overwrite_output_dir "$@" > "$TMP/err.log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || fail "coretrain mlm $* succeeded, expected an error" "$TMP/err.log"
  grep -q -- "$pattern" "$TMP/err.log" || fail "coretrain mlm $*: no error line matching '$pattern'" "$TMP/err.log"
  [ "$(grep -c 'error:' "$TMP/err.log")" = 1 ] || fail "coretrain mlm $*: not one error line" "$TMP/err.log"
}
expect_error "--train_file.*$TMP/missing.txt" --model_name_or_path "$MODEL" --train_file "$TMP/missing.txt" --do_train
cp "$TMP/train.txt" "$TMP/train.tsv"
expect_error "train_file.*csv, json, txt" --model_name_or_path "$MODEL" --train_file "$TMP/train.tsv" --do_train
expect_error "--config_overrides: key 'n_embd' is not a bert config field" --model_type bert --tokenizer_name "$MODEL" \
  --train_file "$TMP/train.txt" --do_train --config_overrides "hidden_size=32,n_embd=10"
echo "PASS"

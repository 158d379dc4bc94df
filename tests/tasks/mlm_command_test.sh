#!/bin/bash
# mlm_command_test.sh CORETRAIN CHECKPOINT_TOOL TOKENIZER_JSON: the real `coretrain mlm` run as run_mlm.py is
# run, on a tiny BERT (ct_checkpoint_tool init + the 391-token fixture tokenizer) and text files whose words
# follow a fixed 7-word cycle, so a masked word is what its neighbours say and a few hundred steps learn it.
#
# Checks: grouped chunks train eval_loss far below ln(391) (a uniform guess), perplexity = exp(eval_loss),
# accuracy over the masked tokens, train/eval_samples = the chunks group_texts makes, HF's output folder
# (config.json naming BertForMaskedLM, weights, tokenizer, card); --line_by_line from a --dataset_name folder
# keeps one example per non-blank line and tags the card fill-mask with the dataset; --validation_split_percentage
# holds out train[:N%] (local files and a dataset without a validation split); --model_type + --config_overrides
# + --tokenizer_name train from scratch; a tokenizer larger than the vocabulary resizes the embeddings (a fresh
# model's, and a checkpoint's with its rows kept); 2 ranks x batch 4 (mpiexec) end at the eval_loss of 1 process
# x batch 8; an eval_loss past exp's range gives perplexity Infinity in the json files and inf in the log (as
# run_mlm's OverflowError branch); one-line errors for a missing file, a bad extension, an unknown override key,
# no tokenizer.
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
mkdir -p "$MODEL"
"$TOOL" init "$TMP/config.json" "$MODEL" mlm 7 > "$TMP/tool.log" 2>&1 || fail "ct_checkpoint_tool init failed" "$TMP/tool.log"
cp "$TOKENIZER" "$MODEL/tokenizer.json"

WORDS=(hello world cafe zurich resume naive istanbul)
# texts N SEED: N lines, each one word repeated 20-42 times (one token each): a masked word is what the rest of
# its line says, but where a chunk straddles two lines.
texts() {
  local n=$1 s=$2 i k w len line
  for ((i = 0; i < n; ++i)); do
    w=${WORDS[$(((i * 5 + s) % 7))]} len=$((20 + (i * 7 + s) % 23)) line=""
    for ((k = 0; k < len; ++k)); do line+="${line:+ }$w"; done
    echo "$line"
  done
}
texts 300 1 > "$TMP/train.txt"
# Blank and whitespace-only lines: grouped runs tokenize them ([CLS] [SEP]), --line_by_line drops them.
{ texts 40 3 | sed '10a\
\
   
'; } > "$TMP/validation.txt"
[ "$(grep -c . "$TMP/validation.txt")" = 41 ] || fail "the validation file should have 40 text lines and one of spaces"
# group_texts over one map batch: every line's words + [CLS] [SEP], cut into chunks of 32, the rest dropped.
chunks_of() { awk '{ n += NF + 2 } END { print int(n / 32) }' "$1"; }
# The same texts as a dataset folder (--dataset_name a local path, as load_dataset takes one).
mkdir -p "$TMP/ds" "$TMP/ds_train_only"
cp "$TMP/train.txt" "$TMP/validation.txt" "$TMP/ds/"
cp "$TMP/train.txt" "$TMP/ds_train_only/"

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
       --learning_rate 5e-3 --warmup_ratio 0.1 --save_strategy no --logging_steps 50)

# ---- grouped chunks from a checkpoint
run grouped --model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt" \
  "${TRAIN[@]}" --num_train_epochs 16
OUT=$TMP/grouped
for f in config.json model.safetensors tokenizer.json README.md train_results.json eval_results.json \
         all_results.json trainer_state.json; do
  [ -s "$OUT/$f" ] || fail "$OUT has no $f" "$TMP/grouped.log"
done
json "$OUT/config.json" 'j["architectures"]' | grep -q "BertForMaskedLM" \
  || fail "config.json does not name BertForMaskedLM: $(json "$OUT/config.json" 'j.get("architectures")')"
"$PY" - "$OUT/eval_results.json" <<'EOF' || fail "grouped: eval metrics (see above)" "$TMP/grouped.log"
import json, math, sys
m = json.load(open(sys.argv[1]))
print("grouped:", {k: m[k] for k in ("eval_loss", "perplexity", "eval_accuracy", "eval_samples")})
ok = m["eval_loss"] < 0.15 * math.log(391)  # a uniform guess over the vocabulary is ln(391) = 5.97
ok &= abs(m["perplexity"] / math.exp(m["eval_loss"]) - 1) < 1e-9
ok &= m["eval_accuracy"] > 0.75
sys.exit(0 if ok else 1)
EOF
for split in train eval; do
  file=$TMP/train.txt
  [ $split = eval ] && file=$TMP/validation.txt
  got=$(json "$OUT/${split}_results.json" "j['${split}_samples']") want=$(chunks_of "$file")
  [ "$got" = "$want" ] || fail "grouped: ${split}_samples $got, expected $want chunks of 32 tokens"
done

# ---- --line_by_line, padded, from a dataset folder: one example per non-blank line, a fill-mask card
run lines --model_name_or_path "$MODEL" --dataset_name "$TMP/ds" "${TRAIN[@]}" --max_steps 10 --line_by_line \
  --pad_to_max_length
[ "$(json "$TMP/lines/eval_results.json" 'j["eval_samples"]')" = 40 ] \
  || fail "--line_by_line: eval_samples $(json "$TMP/lines/eval_results.json" 'j["eval_samples"]'), expected the 40 non-blank lines"
[ "$(json "$TMP/lines/train_results.json" 'j["train_samples"]')" = 300 ] || fail "--line_by_line: train_samples is not 300"
grep -q "type: fill-mask" "$TMP/lines/README.md" || fail "README.md has no fill-mask result" "$TMP/lines/README.md"
grep -q -- "- $TMP/ds\$" "$TMP/lines/README.md" || fail "README.md does not list the dataset" "$TMP/lines/README.md"

# ---- no validation file (no validation split): train[:10%] evaluates, train[10%:] trains
run split --model_name_or_path "$MODEL" --train_file "$TMP/train.txt" --validation_split_percentage 10 \
  "${TRAIN[@]}" --max_steps 10 --line_by_line --max_train_samples 200
[ "$(json "$TMP/split/eval_results.json" 'j["eval_samples"]')" = 30 ] || fail "--validation_split_percentage 10: eval_samples is not 30 of 300"
[ "$(json "$TMP/split/train_results.json" 'j["train_samples"]')" = 200 ] || fail "--max_train_samples 200: train_samples is not 200"
run split_ds --model_name_or_path "$MODEL" --dataset_name "$TMP/ds_train_only" --validation_split_percentage 5 \
  "${TRAIN[@]}" --max_steps 10 --line_by_line
[ "$(json "$TMP/split_ds/eval_results.json" 'j["eval_samples"]')" = 15 ] || fail "--dataset_name without a validation split: eval_samples is not 5% of 300"
[ "$(json "$TMP/split_ds/train_results.json" 'j["train_samples"]')" = 285 ] || fail "--dataset_name without a validation split: train_samples is not 285"

# ---- from scratch: a fresh BERT of the overridden size, the fixture tokenizer
run scratch --model_type bert --tokenizer_name "$MODEL" --train_file "$TMP/train.txt" \
  --validation_file "$TMP/validation.txt" "${TRAIN[@]}" --num_train_epochs 4 \
  --config_overrides "hidden_size=32,num_hidden_layers=2,num_attention_heads=2,intermediate_size=64,max_position_embeddings=64,vocab_size=391"
json "$TMP/scratch/config.json" '(j["hidden_size"], j["num_hidden_layers"], j["vocab_size"], j["architectures"])' \
  | grep -q "(32, 2, 391, \['BertForMaskedLM'\])" || fail "scratch: config.json is not the overridden BERT" "$TMP/scratch/config.json"
grep -q "training bert from random init" "$TMP/scratch.log" || fail "scratch: no 'from random init' line" "$TMP/scratch.log"
json "$TMP/scratch/eval_results.json" "j['eval_loss'] < 0.8 * $(awk 'BEGIN{print log(391)}')" | grep -q True \
  || fail "scratch: eval_loss $(json "$TMP/scratch/eval_results.json" 'j["eval_loss"]') did not drop below 0.8 ln(391)"

# A tokenizer larger than the vocabulary: the model grows to it (resize_token_embeddings), a fresh one...
run resized --model_type distilbert --tokenizer_name "$MODEL" --train_file "$TMP/train.txt" \
  --validation_file "$TMP/validation.txt" "${TRAIN[@]}" --max_steps 2 \
  --config_overrides "hidden_size=32,n_layers=1,n_heads=2,hidden_dim=64,max_position_embeddings=64,vocab_size=300"
json "$TMP/resized/config.json" '(j["vocab_size"], j["dim"], j["architectures"])' | grep -q "(391, 32, \['DistilBertForMaskedLM'\])" \
  || fail "resized: config.json is not a 391-token DistilBERT" "$TMP/resized/config.json"
sed 's/"vocab_size": 391/"vocab_size": 300/' "$TMP/config.json" > "$TMP/small.json"
mkdir -p "$TMP/small"
"$TOOL" init "$TMP/small.json" "$TMP/small" mlm 7 > "$TMP/tool.log" 2>&1 || fail "ct_checkpoint_tool init failed" "$TMP/tool.log"
cp "$TOKENIZER" "$TMP/small/tokenizer.json"

# ... and a checkpoint keeps its rows (learning rate 0: the saved weights are the resized ones).
run resized_ckpt --model_name_or_path "$TMP/small" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt" \
  "${TRAIN[@]}" --max_steps 2 --learning_rate 0
"$PY" - "$TMP/small/model.safetensors" "$TMP/resized_ckpt/model.safetensors" <<'EOF' || fail "resized checkpoint (see above)"
import json, struct, sys
def tensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: (v["shape"], b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]) for k, v in h.items() if k != "__metadata__"}
old, new = tensors(sys.argv[1]), tensors(sys.argv[2])
(so, eo), (sn, en) = old["bert.embeddings.word_embeddings.weight"], new["bert.embeddings.word_embeddings.weight"]
(_, bo), (sb, bn) = old["cls.predictions.bias"], new["cls.predictions.bias"]
print("embeddings", so, "->", sn, " bias", sb)
ok = sn == [391, 32] and sb == [391] and en[:len(eo)] == eo and bn[:len(bo)] == bo
ok &= en[len(eo):] != bytes(len(en) - len(eo)) and bn[len(bo):] == bytes(len(bn) - len(bo))
sys.exit(0 if ok else 1)
EOF

# ---- 2 ranks x 4 = 1 process x 8 = 1 process x 4 x 2 accumulation steps
# With HF's default 15% masking on lines of many lengths the ranks (and micro-batches) hold different numbers
# of masked tokens; the Trainer weighs each by its share of the step's masked tokens over every rank
# (average_tokens_across_devices), so all three follow one trajectory.
for ((i = 0; i < 160; ++i)); do
  w=${WORDS[$(((i * 3) % 7))]} v=${WORDS[$(((i * 5 + 1) % 7))]} line=""
  for ((k = 0; k < 6 + (i * 7) % 25; ++k)); do line+="${line:+ }$([ $((k % 3)) = 0 ] && echo "$v" || echo "$w")"; done
  echo "$line"
done > "$TMP/even.txt"
DDP=(--model_name_or_path "$MODEL" --train_file "$TMP/even.txt" --validation_file "$TMP/validation.txt"
     "${TRAIN[@]}" --max_steps 30 --line_by_line --ddp_backend ccl)
run one "${DDP[@]}"
run accum "${DDP[@]}" --per_device_train_batch_size 4 --gradient_accumulation_steps 2
rc=0
t0=$(now)
timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" mlm --output_dir "$TMP/two" --disable_tqdm \
  --seed 42 "${DDP[@]}" --per_device_train_batch_size 4 > "$TMP/two.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "mpiexec -n 2 coretrain mlm exited $rc" "$TMP/two.log"
echo "two: $(elapsed_since "$t0") s"
grep -q "2 rank(s) on 1 node(s)" "$TMP/two.log" || fail "mpiexec -n 2 did not run 2 ranks" "$TMP/two.log"
grep -q "Total train batch size (w. parallel, distributed & accumulation) = 8" "$TMP/two.log" \
  || fail "the 2-rank run's global batch is not 8" "$TMP/two.log"
"$PY" - "$TMP/one/eval_results.json" "$TMP/two/eval_results.json" "$TMP/accum/eval_results.json" <<'EOF' \
  || fail "2 ranks' or accumulation's eval_loss differs from 1 process'"
import json, sys
a, b, c = (json.load(open(p))["eval_loss"] for p in sys.argv[1:4])
print("eval_loss 1 x 8:", a, " 2 x 4:", b, " 1 x 4 x 2:", c)
sys.exit(0 if abs(a - b) <= 1e-4 * abs(a) and abs(a - c) <= 1e-4 * abs(a) else 1)
EOF

# ---- perplexity on overflow: weights so large that eval_loss > ln(DBL_MAX) ~ 709.8; run_mlm's math.exp
# raises OverflowError, perplexity = float("inf"), which json.dump writes as Infinity and log_metrics as inf.
sed 's/"type_vocab_size": 2}/"type_vocab_size": 2, "initializer_range": 100.0}/' "$TMP/config.json" > "$TMP/huge.json"
grep -q initializer_range "$TMP/huge.json" || fail "could not make the large-weights config"
mkdir -p "$TMP/huge"
"$TOOL" init "$TMP/huge.json" "$TMP/huge" mlm 7 > "$TMP/huge_tool.log" 2>&1 || fail "ct_checkpoint_tool init" "$TMP/huge_tool.log"
cp "$TOKENIZER" "$TMP/huge/tokenizer.json"
run overflow --model_name_or_path "$TMP/huge" --validation_file "$TMP/validation.txt" --do_eval --max_seq_length 32
for f in eval_results.json all_results.json; do
  grep -qE '^    "perplexity": Infinity,?$' "$TMP/overflow/$f" || fail "$f does not say \"perplexity\": Infinity" "$TMP/overflow/$f"
done
"$PY" - "$TMP/overflow/eval_results.json" <<'EOF' || fail "overflow: eval metrics (see above)" "$TMP/overflow.log"
import json, math, sys
m = json.load(open(sys.argv[1]))
print("overflow:", m)
# Eval only: HF's TrainerState.epoch stays None, so the Trainer's log adds no "epoch" key.
sys.exit(0 if m["eval_loss"] > 709.8 and m["perplexity"] == math.inf and "epoch" not in m else 1)
EOF
grep -qE '^  perplexity +=  *inf$' "$TMP/overflow.log" || fail "the log does not print perplexity = inf" "$TMP/overflow.log"

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
expect_error "--tokenizer_name: required when training from scratch" --model_type bert --train_file "$TMP/train.txt" --do_train
echo "PASS"

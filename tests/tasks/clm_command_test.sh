#!/bin/bash
# clm_command_test.sh CORETRAIN: the real `coretrain clm` run as run_clm.py is run. The demo's generated
# counting language and word tokenizer (`clm --demo`, which must itself beat chance) are the fixture; then:
# from scratch (--model_type llama + --config_overrides + --tokenizer_name) on txt files the training loss
# falls and HF's output folder is written (config.json a LlamaForCausalLM, generation_config.json,
# model.safetensors, tokenizer, results with perplexity = exp(eval_loss) and eval_accuracy, trainer_state.json,
# the card tagged text-generation); that folder trains on as --model_name_or_path; 2 ranks x batch 4
# (mpiexec) end at the eval_loss of 1 process x batch 8; resuming checkpoint-5 ends where the straight run
# ends; one-line errors for a missing --model_type, a block_size larger than the data, a file extension,
# --bf16.
source "$(dirname "$0")/../train/ddp_lib.sh"
BIN=$1
ct_setup clm_command "$BIN"
export MASTER_ADDR=127.0.0.1
LIMIT=${CT_TEST_PROCESS_LIMIT:-240}
run() {  # run LOG ARGS...
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" clm "$@" > "$log" 2>&1
}
json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

# ---- the demo: perplexity well below chance (the vocabulary size)
run "$TMP/demo.log" --demo --output_dir "$TMP/demo" --num_train_epochs 2 || fail "clm --demo" "$TMP/demo.log"
DATA=$TMP/demo/demo_data
PPL=$(json "$TMP/demo/eval_results.json" '["perplexity"]')
V=$(python3 -c "import json; print(json.load(open('$DATA/config.json'))['vocab_size'])")
python3 -c "import sys; sys.exit(0 if $PPL < $V / 4 else 1)" || fail "demo perplexity $PPL not below chance $V / 4" "$TMP/demo.log"
grep -q "chance" "$TMP/demo.log" || fail "the demo does not print the chance level" "$TMP/demo.log"

# ---- from scratch on txt files
SCRATCH=(--model_type llama --tokenizer_name "$DATA"
         --config_overrides "vocab_size=$V,hidden_size=32,intermediate_size=64,num_hidden_layers=2,num_attention_heads=4,num_key_value_heads=2,head_dim=8,max_position_embeddings=64"
         --train_file "$DATA/train.txt" --validation_file "$DATA/validation.txt" --block_size 16
         --max_train_samples 400 --max_eval_samples 64 --learning_rate 3e-3 --logging_steps 5 --seed 5
         --per_device_train_batch_size 8 --save_strategy no --report_to none)
run "$TMP/s.log" "${SCRATCH[@]}" --do_train --do_eval --max_steps 40 --output_dir "$TMP/s" || fail "from scratch" "$TMP/s.log"
for f in config.json generation_config.json model.safetensors tokenizer.json all_results.json eval_results.json \
         train_results.json trainer_state.json README.md; do
  [ -f "$TMP/s/$f" ] || fail "from scratch: no $f" "$TMP/s.log"
done
python3 - "$TMP/s" <<'PYEOF' || fail "output folder" "$TMP/s.log"
import json, math, sys
d = sys.argv[1]
c = json.load(open(f"{d}/config.json"))
assert c["model_type"] == "llama" and c["architectures"] == ["LlamaForCausalLM"], c
assert c["hidden_size"] == 32 and c["head_dim"] == 8, c
g = json.load(open(f"{d}/generation_config.json"))
assert g["bos_token_id"] == 1 and g["eos_token_id"] == 2 and g["_from_model_config"], g
r = json.load(open(f"{d}/all_results.json"))
assert abs(r["perplexity"] - math.exp(r["eval_loss"])) < 1e-9 * r["perplexity"], r
assert 0 <= r["eval_accuracy"] <= 1 and r["train_samples"] == 400 and r["eval_samples"] == 64, r
losses = [e["loss"] for e in json.load(open(f"{d}/trainer_state.json"))["log_history"] if "loss" in e]
assert len(losses) >= 4 and losses[-1] < 0.7 * losses[0], losses
# Local files name no dataset, so the card has no model-index results (where HF writes the task), as HF's.
card = open(f"{d}/README.md").read()
assert "generated_from_trainer" in card and "results: []" in card, card
print("loss", losses[0], "->", losses[-1], "eval_loss", r["eval_loss"], "accuracy", r["eval_accuracy"])
PYEOF

# ---- the saved folder as a model: 2 ranks x 4 = 1 rank x 8
FT=(--model_name_or_path "$TMP/s" --train_file "$DATA/train.txt" --validation_file "$DATA/validation.txt"
    --block_size 16 --max_train_samples 160 --max_eval_samples 32 --do_train --do_eval --max_steps 10
    --learning_rate 1e-3 --lr_scheduler_type constant --save_strategy no --report_to none --seed 5)
run "$TMP/p1.log" "${FT[@]}" --per_device_train_batch_size 8 --output_dir "$TMP/p1" || fail "fine-tune 1 rank" "$TMP/p1.log"
timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" clm "${FT[@]}" --per_device_train_batch_size 4 \
  --output_dir "$TMP/p2" > "$TMP/p2.log" 2>&1 || fail "fine-tune 2 ranks" "$TMP/p2.log"
L1=$(json "$TMP/p1/eval_results.json" '["eval_loss"]')
L2=$(json "$TMP/p2/eval_results.json" '["eval_loss"]')
python3 -c "import sys; sys.exit(0 if abs($L1 - $L2) <= 1e-4 * abs($L1) else 1)" \
  || fail "eval_loss: 2 ranks $L2, 1 rank $L1" "$TMP/p2.log"
# --gradient_checkpointing recomputes each layer in backward: the same arithmetic, the same model.
run "$TMP/g.log" "${FT[@]}" --per_device_train_batch_size 8 --gradient_checkpointing --output_dir "$TMP/g" \
  || fail "--gradient_checkpointing" "$TMP/g.log"
LG=$(json "$TMP/g/eval_results.json" '["eval_loss"]')
[ "$LG" = "$L1" ] || fail "eval_loss with --gradient_checkpointing $LG, without $L1" "$TMP/g.log"
L0=$(json "$TMP/s/eval_results.json" '["eval_loss"]')
[ "$L1" != "$L0" ] || fail "fine-tuning did not change the model"

# ---- resume: checkpoint-5 of a 5-step run, trained on to step 10, ends at the straight run's eval_loss (a
# constant learning rate, so the schedule of the first 5 steps does not depend on max_steps)
run "$TMP/c.log" "${FT[@]}" --per_device_train_batch_size 8 --save_strategy steps --save_steps 5 --max_steps 5 \
  --output_dir "$TMP/c" || fail "to checkpoint-5" "$TMP/c.log"
[ -f "$TMP/c/checkpoint-5/generation_config.json" ] || fail "checkpoint-5 has no generation_config.json" "$TMP/c.log"
run "$TMP/r.log" "${FT[@]}" --per_device_train_batch_size 8 --output_dir "$TMP/c" \
  --resume_from_checkpoint "$TMP/c/checkpoint-5" || fail "resume" "$TMP/r.log"
LR=$(json "$TMP/c/eval_results.json" '["eval_loss"]')
python3 -c "import sys; sys.exit(0 if abs($L1 - $LR) <= 1e-5 * abs($L1) else 1)" \
  || fail "eval_loss: resumed $LR, straight $L1" "$TMP/r.log"

# ---- one-line errors
expect_error() {  # expect_error NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  if run "$TMP/e_$name.log" "$@"; then fail "$name: no error" "$TMP/e_$name.log"; fi
  grep -q -- "$pattern" "$TMP/e_$name.log" || fail "$name: no '$pattern'" "$TMP/e_$name.log"
}
printf 'one two three\nfour five\n' > "$TMP/short.txt"
cp "$DATA/train.txt" "$TMP/train.parquet.x"
expect_error model_type "--model_type: required" --train_file "$DATA/train.txt" --do_train --output_dir "$TMP/e1"
expect_error block_size "block_size of 40 is too big" --model_name_or_path "$TMP/s" --train_file "$TMP/short.txt" \
  --do_train --block_size 40 --output_dir "$TMP/e2"
expect_error extension "train_file" --model_name_or_path "$TMP/s" --train_file "$TMP/train.parquet.x" --do_train \
  --output_dir "$TMP/e3"
expect_error bf16 "--bf16: the decoder body is f32-only" --model_name_or_path "$TMP/s" --train_file "$DATA/train.txt" \
  --do_train --bf16 --output_dir "$TMP/e4"
[ ! -e "$TMP/e2/model.safetensors" ] || fail "an error left a model in the output folder"
echo "PASS"

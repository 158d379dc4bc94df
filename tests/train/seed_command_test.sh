#!/usr/bin/env bash
# The seed's command verbatim: HF's guide runs
#   mpirun -n N -genv OMP_NUM_THREADS=.. python3 run_qa.py --model_name_or_path google-bert/bert-large-uncased
#     --dataset_name squad --do_train --do_eval --per_device_train_batch_size 12 --learning_rate 3e-5
#     --num_train_epochs 2 --max_seq_length 384 --doc_stride 128 --output_dir /tmp/debug_squad/ --no_cuda
#     --ddp_backend ccl --bf16
# and here only `python3 run_qa.py` becomes `coretrain qa`. The Hub (tests/hub/fake_hub.py, HF_ENDPOINT) serves a
# tiny BERT under the name google-bert/bert-large-uncased and a local http.server (CORETRAIN_SQUAD_URL) serves small
# SQuAD v1.1 files: nothing but those two test doubles stands in for the internet. Checks: both ranks exit 0, the
# output folder is complete (model, tokenizer, states, results, predictions, model card, report), and the same command
# with both servers stopped and HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 runs from the caches.
#   seed_command_test.sh CORETRAIN_BIN
source "$(dirname "$0")/ddp_lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ct_setup seed_command "$1"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy HF_DATASETS_OFFLINE HF_HUB_OFFLINE \
  TRANSFORMERS_OFFLINE HF_TOKEN TRANSFORMERS_CACHE HUGGINGFACE_HUB_CACHE HF_HUB_CACHE 2>/dev/null || true
export no_proxy='*' HF_HOME="$TMP/hf_home"

# Test doubles' content: a tiny model and SQuAD-format data, from one step of the demo.
timeout -k 5 "$LIMIT" "$BIN" qa --demo --demo_train_paragraphs 12 --demo_eval_paragraphs 4 --max_steps 1 \
  --output_dir "$TMP/demo" > "$TMP/demo.log" 2>&1 || fail "demo run" "$TMP/demo.log"
HUB=$TMP/hub/google-bert/bert-large-uncased
mkdir -p "$HUB" "$TMP/www/squad"
for f in config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json; do
  cp "$TMP/demo/$f" "$HUB/"
done
# The demo model has 256 positions; its tokenizer_config says so, as bert-large-uncased's says 512: run_qa then
# warns and uses 256 for --max_seq_length 384, and so does coretrain.
"$PY" -c 'import json, sys; p = sys.argv[1]; c = json.load(open(p)); c["model_max_length"] = 256; json.dump(c, open(p, "w"))' \
  "$HUB/tokenizer_config.json"
cp "$TMP/demo/demo_data/train.json" "$TMP/www/squad/train-v1.1.json"
cp "$TMP/demo/demo_data/dev.json" "$TMP/www/squad/dev-v1.1.json"

"$PY" "$HERE/../hub/fake_hub.py" "$TMP/hub" "$TMP/hubport" > "$TMP/hub.log" 2>&1 &
HUB_PID=$!
PIDS="$PIDS $HUB_PID"
pick_port
timeout -k 5 "$LIMIT" "$PY" -u -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$PORT" \
  > "$TMP/http.log" 2>&1 &
WWW_PID=$!
PIDS="$PIDS $WWW_PID"
for _ in $(seq 100); do
  [ -f "$TMP/hubport" ] && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
[ -f "$TMP/hubport" ] || fail "fake_hub.py did not start" "$TMP/hub.log"
export HF_ENDPOINT="http://127.0.0.1:$(cut -d' ' -f1 "$TMP/hubport")"
export CORETRAIN_SQUAD_URL="http://127.0.0.1:$PORT/squad/"

OUT=$TMP/debug_squad
SEED=(--model_name_or_path google-bert/bert-large-uncased --dataset_name squad --do_train --do_eval
      --per_device_train_batch_size 12 --learning_rate 3e-5 --num_train_epochs 2 --max_seq_length 384
      --doc_stride 128 --output_dir "$OUT/" --no_cuda --ddp_backend ccl --bf16)
seed() {  # seed LOG: the seed's command under mpiexec, 2 ranks
  timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" qa "${SEED[@]}" > "$1" 2>&1
}

seed "$TMP/run1.log" || fail "the seed command failed" "$TMP/run1.log" "$TMP/hub.log" "$TMP/http.log"
for f in config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json \
  training_args.json trainer_state.json train_results.json eval_results.json all_results.json \
  eval_predictions.json eval_nbest_predictions.json README.md training_report.html; do
  [ -s "$OUT/$f" ] || fail "$f missing from the output folder" "$TMP/run1.log"
done
json "$OUT/eval_results.json" 'j["eval_exact_match"], j["eval_f1"]' > /dev/null || fail "no EM/F1" "$TMP/run1.log"
grep -q "google-bert/bert-large-uncased" "$OUT/README.md" || fail "the model card does not name the base model"
grep -q "squad" "$OUT/README.md" || fail "the model card does not name the dataset"
[ -d "$HF_HOME/hub/models--google-bert--bert-large-uncased/snapshots" ] || fail "the model is not in the Hub cache"
steps=$(json "$OUT/trainer_state.json" 'j["global_step"]')
echo "seed command: 2 ranks, $steps steps, EM/F1 $(json "$OUT/eval_results.json" 'j["eval_exact_match"], j["eval_f1"]')"

# Offline, both servers gone: the same command starts from the caches (a second run resumes nothing: the folder
# has no checkpoint, and run_qa's rule refuses a non-empty output folder, so use a new one as a user would).
kill "$HUB_PID" "$WWW_PID" 2>/dev/null || true
wait "$HUB_PID" "$WWW_PID" 2>/dev/null || true
OUT=$TMP/debug_squad2
SEED=("${SEED[@]/$TMP\/debug_squad\//$OUT/}")
HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 seed "$TMP/run2.log" || fail "the offline rerun failed" "$TMP/run2.log"
[ -s "$OUT/model.safetensors" ] || fail "the offline rerun wrote no model" "$TMP/run2.log"
cmp -s "$TMP/debug_squad/eval_predictions.json" "$OUT/eval_predictions.json" \
  || fail "the offline rerun's predictions differ from the online run's"
echo "PASS: seed command"

#!/usr/bin/env bash
# task_commands_test.sh CASE CORETRAIN CHECKPOINT_TOOL: `coretrain glue` and `coretrain ner` as a user runs
# run_glue.py / run_ner.py, on a tiny BERT (ct_checkpoint_tool init) with the fixture WordPiece tokenizer.
#   glue: local csv files (sentence1, sentence2, string labels): trains to eval_accuracy >= 0.9; HF's output
#     folder (config.json names BertForSequenceClassification and the labels, predict_results_None.txt
#     with label names); then 2 ranks x batch 8 against 1 rank x batch 16: the same eval_loss (1e-4) and
#     accuracy; 2 ranks -> checkpoint -> 1 rank resumes to the straight run's eval_loss; and the one-line errors (a label outside the training labels, a bad extension, a checkpoint
#     with another label count without --ignore_mismatched_sizes).
#   glue_regression: float labels (a json lines file) train a regression: num_labels 1, eval_mse.
#   glue_hub: `--task_name MRPC` through the fake Hub (nyu-mll/glue, config mrpc, json lines with ClassLabel names
#     in the card): the label names reach config.json, mrpc's metrics, predict_results_mrpc.txt, the card; then
#     offline (HF_HUB_OFFLINE=1, server gone): features from the cache, the same metrics and predictions.
#   classification: run_classification's multi-label path (list labels under --label_column_name tags, two
#     --text_column_names joined): micro F1 >= 0.9, problem_type, predict_results.txt with Python lists; the
#     one-line errors of --metric_name, --label_column_name, --remove_splits and --shuffle_seed;
#     --shuffle_train_dataset keeps the rows datasets' shuffle keeps (NumPy's default_rng permutation).
#   families: glue trains tiny DeBERTa-v2 and ModernBERT checkpoints (packed batches) to accuracy >= 0.9; 2 ranks
#     in bf16 sharing the optimizer state inside the node train the bytes of 2 ranks each updating everything.
#   ner: local json lines (tokens, ner_tags as strings): trains to eval_f1 >= 0.9, predictions.txt has a line
#     of tags per test sentence; 2 ranks equal 1 rank; a row with fewer tags than words is refused.
#   ner_hub: `--dataset_name conll2003` through the fake Hub (eriktks/conll2003 as the Hub lays it out: a
#     loading script on main, the committed conll.parquet on refs/convert/parquet): the ClassLabel names become the config's id2label, seqeval's keys are reported; then
#     offline (HF_DATASETS_OFFLINE=1, server gone) from the caches with the same metrics.
#   mlm_hub: run_mlm's README command (`--model_name_or_path FacebookAI/roberta-base --dataset_name wikitext
#     --dataset_config_name wikitext-2-raw-v1`) under mpiexec -n 2, model and data from the fake Hub
#     (Salesforce/wikitext's configs with the committed wikitext.parquet; a tiny byte-level RoBERTa); then the
#     same command with HF_HUB_OFFLINE=1 and the server gone: the cached snapshots, every split's features from
#     the feature cache, the same metrics.
#   imdb_hub: `classification --dataset_name imdb` (stanfordnlp/imdb's plain_text layout with the committed
#     imdb.parquet, no validation split: evaluation falls back to test), then with HF_DATASETS_OFFLINE=1 and the
#     server gone: the same metrics, features from the cache.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../train/ddp_lib.sh"
source "$HERE/task_lib.sh"
CASE=$1
ct_setup "task_$CASE" "$2"
TOOL=$3
export MASTER_ADDR=127.0.0.1

run() {  # run LOG ARGS...: one process
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" "$@" > "$log" 2>&1
}
run2() {  # run2 LOG ARGS...: 2 ranks under mpiexec
  local log=$1
  shift
  timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" "$@" > "$log" 2>&1
}
expect_error() {  # expect_error LOG PATTERN ARGS...: a non-zero exit whose error line matches PATTERN
  local log=$1 pat=$2
  shift 2
  if run "$log" "$@"; then fail "expected an error matching '$pat'" "$log"; fi
  grep -E "error: .*$pat" "$log" > /dev/null || fail "no error line matching '$pat'" "$log"
  [ "$(grep -c 'error:' "$log")" = 1 ] || fail "expected exactly one error line" "$log"
}
close() {  # close A B TOL: |a - b| <= TOL * max(1, |b|)
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1;
    exit !(d <= t * m) }'
}
WORDS=(hello world cafe resume zurich straße and the naive istanbul)
glue_data() {  # train.csv, dev.csv, test.csv: yes when sentence1 holds "hello" (a word a tiny model finds
  # quickly); sentence2 is noise.
  for split in train:600 dev:96 test:40; do
    awk -v n="${split#*:}" -v seed="${#split}" 'BEGIN { srand(seed); split("world cafe resume zurich and the naive istanbul", w, " ");
      print "sentence1,sentence2,label";
      for (i = 0; i < n; i++) { lab = rand() < 0.5; s = ""; h = int(rand() * 5);
        for (k = 0; k < 5; k++) s = s (k ? " " : "") (lab && k == h ? "hello" : w[1 + int(rand() * 8)]);
        t = w[1 + int(rand() * 8)] " " w[1 + int(rand() * 8)];
        print s "," t "," (lab ? "yes" : "no") } }' > "$TMP/${split%%:*}.csv"
  done
}

hub_env() {  # online, no token, the Hub and datasets caches under $TMP (none of the caller's settings leak in)
  unset HF_HUB_OFFLINE HF_DATASETS_OFFLINE TRANSFORMERS_OFFLINE HF_TOKEN 2>/dev/null || true
  export HF_HOME="$TMP/hf_home" HF_HUB_CACHE="$TMP/cache"
}
start_hub() {  # the fake Hub over $TMP/hub, HF_ENDPOINT pointing at it, its pid in $HUB_PID
  "$PY" "$HERE/../hub/fake_hub.py" "$TMP/hub" "$TMP/port" > "$TMP/hub.log" 2>&1 &
  HUB_PID=$!
  PIDS="$PIDS $HUB_PID"
  for _ in $(seq 100); do [ -f "$TMP/port" ] && break; sleep 0.1; done
  [ -f "$TMP/port" ] || fail "fake_hub.py did not start" "$TMP/hub.log"
  export HF_ENDPOINT="http://127.0.0.1:$(cut -d' ' -f1 "$TMP/port")"
}
stop_hub() {
  kill "$HUB_PID" 2>/dev/null || true
  wait "$HUB_PID" 2>/dev/null || true
}
from_cache() {  # from_cache LOG N: N splits' features read from the feature cache, none built
  [ "$(grep -c ' features from the cache ' "$1")" = "$2" ] && ! grep -q ': built [0-9]* features in' "$1" \
    || fail "expected $2 splits from the feature cache and none built" "$1"
}

case "$CASE" in
glue)
  model "$TMP/m" seq-cls
  glue_data
  COMMON=(glue --model_name_or_path "$TMP/m" --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv"
          --do_train --do_eval --max_seq_length 32 --learning_rate 3e-3 --num_train_epochs 4 --seed 3
          --logging_steps 10 --save_strategy no --disable_tqdm)
  run "$TMP/one.log" "${COMMON[@]}" --per_device_train_batch_size 16 --do_predict --test_file "$TMP/test.csv" \
    --dump_eval_features "$TMP/feats.json" --output_dir "$TMP/one" || fail "coretrain glue" "$TMP/one.log"
  # --dump_eval_features: every eval feature, padded to max_seq_length, with its class id.
  [ "$(json "$TMP/feats.json" 'str(len(j["features"])) + " " + str(sorted({len(f["input_ids"]) for f in j["features"]})) + " " + str(sorted({f["labels"] for f in j["features"]}))')" = \
    "96 [32] [0, 1]" ] || fail "--dump_eval_features: $(head -c 300 "$TMP/feats.json")"
  ACC=$(json "$TMP/one/eval_results.json" 'j["eval_accuracy"]')
  close "$ACC" 1 0.1 || fail "eval_accuracy $ACC < 0.9" "$TMP/one.log"
  for f in config.json model.safetensors tokenizer.json train_results.json eval_results.json all_results.json \
           trainer_state.json training_args.json README.md predict_results_None.txt; do
    [ -s "$TMP/one/$f" ] || fail "no $f in the output folder" "$TMP/one.log"
  done
  [ "$(json "$TMP/one/config.json" '" ".join([j["architectures"][0], j["id2label"]["0"], j["id2label"]["1"]])')" = \
    "BertForSequenceClassification no yes" ] || fail "config.json: $(cat "$TMP/one/config.json")"
  [ "$(head -1 "$TMP/one/predict_results_None.txt")" = "$(printf 'index\tprediction')" ] || fail "predict header"
  [ "$(grep -cE $'^[0-9]+\t(yes|no)$' "$TMP/one/predict_results_None.txt")" = 40 ] \
    || fail "predict_results_None.txt: expected 40 label lines" "$TMP/one/predict_results_None.txt"
  grep -q "generated_from_trainer" "$TMP/one/README.md" || fail "no model card" "$TMP/one/README.md"
  # 2 ranks x 8 = 1 rank x 16, padded to max_seq_length so both see the same shapes.
  run "$TMP/p1.log" "${COMMON[@]}" --per_device_train_batch_size 16 --output_dir "$TMP/p1" || fail "1 rank" "$TMP/p1.log"
  run2 "$TMP/p2.log" "${COMMON[@]}" --per_device_train_batch_size 8 --output_dir "$TMP/p2" || fail "2 ranks" "$TMP/p2.log"
  L1=$(json "$TMP/p1/eval_results.json" 'j["eval_loss"]') L2=$(json "$TMP/p2/eval_results.json" 'j["eval_loss"]')
  close "$L2" "$L1" 1e-4 || fail "eval_loss: 2 ranks $L2, 1 rank $L1"
  [ "$(json "$TMP/p1/eval_results.json" 'j["eval_accuracy"]')" = "$(json "$TMP/p2/eval_results.json" 'j["eval_accuracy"]')" ] \
    || fail "eval_accuracy differs between 1 and 2 ranks"
  # Ranks launched with different flags refuse to train, naming the flag and both values.
  if timeout -k 5 "$LIMIT" mpiexec -n 1 -genv OMP_NUM_THREADS=1 "$BIN" "${COMMON[@]}" --per_device_train_batch_size 8 \
       --output_dir "$TMP/d" : -n 1 "$BIN" "${COMMON[@]}" --per_device_train_batch_size 8 --seed 4 \
       --output_dir "$TMP/d" > "$TMP/d.log" 2>&1; then
    fail "ranks with different --seed trained" "$TMP/d.log"
  fi
  grep -q 'the command line differs from rank 0.s on rank(s) 1 (rank 1: --seed "4" (rank 0: "3"))' "$TMP/d.log" \
    || fail "no error naming --seed on rank 1" "$TMP/d.log"
  # Resume at another world size: 2 ranks x 8 save checkpoint-10, then 1 rank x 16 resumes it to step 20 and
  # lands where 20 straight steps of 1 rank x 16 land (a constant schedule, so the first run's max_steps does
  # not shape the second's).
  R=(--lr_scheduler_type constant --save_strategy steps --save_steps 10 --logging_steps 5)
  run2 "$TMP/a.log" "${COMMON[@]}" "${R[@]}" --per_device_train_batch_size 8 --max_steps 10 --output_dir "$TMP/res" \
    || fail "2 ranks to checkpoint-10" "$TMP/a.log"
  [ -d "$TMP/res/checkpoint-10" ] || fail "no checkpoint-10" "$TMP/a.log"
  run "$TMP/b.log" "${COMMON[@]}" "${R[@]}" --per_device_train_batch_size 16 --max_steps 20 --output_dir "$TMP/res" \
    || fail "1 rank resuming checkpoint-10" "$TMP/b.log"
  grep -q "checkpoint-10" "$TMP/b.log" || fail "the second run did not say it resumes checkpoint-10" "$TMP/b.log"
  run "$TMP/c.log" "${COMMON[@]}" "${R[@]}" --per_device_train_batch_size 16 --max_steps 20 --output_dir "$TMP/straight" \
    || fail "1 rank, 20 steps" "$TMP/c.log"
  L1=$(json "$TMP/straight/eval_results.json" 'j["eval_loss"]') L2=$(json "$TMP/res/eval_results.json" 'j["eval_loss"]')
  close "$L2" "$L1" 1e-4 || fail "resumed eval_loss $L2, straight $L1" "$TMP/b.log"
  # Errors.
  printf 'sentence1,sentence2,label\nhello world,cafe,maybe\n' > "$TMP/badlabel.csv"
  expect_error "$TMP/e1.log" "label 'maybe' is not among the training labels" "${COMMON[@]}" \
    --validation_file "$TMP/badlabel.csv" --output_dir "$TMP/e1"
  cp "$TMP/dev.csv" "$TMP/dev.tsv"
  expect_error "$TMP/e2.log" "validation_file" "${COMMON[@]}" --validation_file "$TMP/dev.tsv" --output_dir "$TMP/e2"
  awk 'NR == 1 || NR % 3 != 0 { print } NR > 1 && NR % 3 == 0 { sub(/,(yes|no)$/, ",maybe"); print }' \
    "$TMP/train.csv" > "$TMP/three.csv"
  expect_error "$TMP/e3.log" "ignore_mismatched_sizes" "${COMMON[@]}" --train_file "$TMP/three.csv" --output_dir "$TMP/e3"
  printf 'sentence1,sentence2,label\n12,cafe,yes\n' > "$TMP/numeric.csv"
  expect_error "$TMP/e5.log" 'numeric.csv: column "sentence1" row 0: expected text, got an integer' "${COMMON[@]}" \
    --validation_file "$TMP/numeric.csv" --output_dir "$TMP/e5"
  expect_error "$TMP/e6.log" "--model_name_or_path: .*/nothere is neither a local path" "${COMMON[@]}" \
    --model_name_or_path "$TMP/nothere" --output_dir "$TMP/e6"
  mkdir -p "$TMP/notok" && cp "$TMP/m/config.json" "$TMP/m/model.safetensors" "$TMP/notok/"
  expect_error "$TMP/e7.log" "--model_name_or_path: .*notok" "${COMMON[@]}" --model_name_or_path "$TMP/notok" \
    --output_dir "$TMP/e7"
  run "$TMP/e4.log" "${COMMON[@]}" --train_file "$TMP/three.csv" --max_steps 2 --ignore_mismatched_sizes \
    --output_dir "$TMP/e4" || fail "--ignore_mismatched_sizes did not start the head fresh" "$TMP/e4.log"
  ;;
glue_regression)
  model "$TMP/m" seq-cls
  for split in train:400 dev:64; do
    awk -v n="${split#*:}" -v seed="${#split}" 'BEGIN { srand(seed); split("world cafe resume zurich and the naive istanbul", w, " ");
      for (i = 0; i < n; i++) { h = int(rand() * 4); s = "";
        for (k = 0; k < 4; k++) s = s (k ? " " : "") (k < h ? "hello" : w[1 + int(rand() * 8)]);
        printf "{\"sentence1\": \"%s\", \"label\": %.1f}\n", s, h } }' > "$TMP/${split%%:*}.json"
  done
  run "$TMP/r.log" glue --model_name_or_path "$TMP/m" --train_file "$TMP/train.json" --validation_file "$TMP/dev.json" \
    --do_train --do_eval --max_seq_length 16 --learning_rate 3e-3 --num_train_epochs 6 --seed 3 --save_strategy no \
    --ignore_mismatched_sizes --per_device_train_batch_size 16 --output_dir "$TMP/r" --disable_tqdm \
    || fail "regression run" "$TMP/r.log"
  [ "$(json "$TMP/r/config.json" 'j["problem_type"] + " " + str(len(j["id2label"]))')" = "regression 1" ] \
    || fail "config.json is not a 1-label regression: $(cat "$TMP/r/config.json")"
  # run_glue scores local regression files by mse alone (pearson/spearmanr are stsb's).
  M=$(json "$TMP/r/eval_results.json" 'j["eval_mse"]')
  close "$M" 0 0.3 || fail "eval_mse $M > 0.3 (labels 0..3)" "$TMP/r.log"
  ;;
ner)
  model "$TMP/m" token-cls
  for split in train:500 dev:80 test:30; do
    awk -v n="${split#*:}" -v seed="${#split}" 'BEGIN { srand(seed); split("cafe resume and the naive", o, " ");
      for (i = 0; i < n; i++) { m = 3 + int(rand() * 5); t = ""; g = "";
        for (k = 0; k < m; k++) { r = rand();
          if (r < 0.2) { x = "hello"; y = "B-PER" } else if (r < 0.35) { x = "istanbul"; y = "B-LOC" }
          else { x = o[1 + int(rand() * 5)]; y = "O" }
          t = t (k ? ", " : "") "\"" x "\""; g = g (k ? ", " : "") "\"" y "\"" }
        print "{\"tokens\": [" t "], \"ner_tags\": [" g "]}" } }' > "$TMP/${split%%:*}.json"
  done
  COMMON=(ner --model_name_or_path "$TMP/m" --train_file "$TMP/train.json" --validation_file "$TMP/dev.json"
          --do_train --do_eval --learning_rate 3e-3 --num_train_epochs 3 --seed 3 --save_strategy no --disable_tqdm
          --ignore_mismatched_sizes --pad_to_max_length --max_seq_length 24)
  run "$TMP/one.log" "${COMMON[@]}" --per_device_train_batch_size 16 --do_predict --test_file "$TMP/test.json" \
    --dump_eval_features "$TMP/feats.json" --output_dir "$TMP/one" || fail "coretrain ner" "$TMP/one.log"
  # --dump_eval_features: per-token labels, -100 at the special tokens and padding.
  [ "$(json "$TMP/feats.json" 'str(len(j["features"])) + " " + str(all(len(f["labels"]) == len(f["input_ids"]) == 24 and f["labels"][0] == -100 for f in j["features"]))')" = \
    "80 True" ] || fail "--dump_eval_features: $(head -c 300 "$TMP/feats.json")"
  F1=$(json "$TMP/one/eval_results.json" 'j["eval_f1"]')
  close "$F1" 1 0.1 || fail "eval_f1 $F1 < 0.9" "$TMP/one.log"
  [ "$(json "$TMP/one/config.json" 'j["architectures"][0] + " " + str(sorted(j["label2id"]))')" = \
    "BertForTokenClassification ['B-LOC', 'B-PER', 'O']" ] || fail "config.json: $(cat "$TMP/one/config.json")"
  [ "$(wc -l < "$TMP/one/predictions.txt")" = 30 ] || fail "predictions.txt: expected 30 lines" "$TMP/one/predictions.txt"
  json "$TMP/one/predict_results.json" 'j["predict_f1"]' > /dev/null || fail "no predict_f1" "$TMP/one.log"
  run "$TMP/p1.log" "${COMMON[@]}" --per_device_train_batch_size 16 --output_dir "$TMP/p1" || fail "1 rank" "$TMP/p1.log"
  run2 "$TMP/p2.log" "${COMMON[@]}" --per_device_train_batch_size 8 --output_dir "$TMP/p2" || fail "2 ranks" "$TMP/p2.log"
  L1=$(json "$TMP/p1/eval_results.json" 'j["eval_loss"]') L2=$(json "$TMP/p2/eval_results.json" 'j["eval_loss"]')
  close "$L2" "$L1" 1e-4 || fail "eval_loss: 2 ranks $L2, 1 rank $L1"
  printf '{"tokens": ["hello", "cafe"], "ner_tags": ["B-PER"]}\n' > "$TMP/short.json"
  expect_error "$TMP/e1.log" "row 0 has 2 words in \"tokens\" but 1 tags in \"ner_tags\"" "${COMMON[@]}" \
    --validation_file "$TMP/short.json" --output_dir "$TMP/e1"
  ;;
ner_hub)
  model "$TMP/m" token-cls
  hub_env
  # As the real Hub has it: main holds a loading script and a README without configs; the data is the
  # Parquet export on refs/convert/parquet, which the offline rerun must find in the cache again.
  C="$TMP/hub/datasets/eriktks/conll2003"
  mkdir -p "$C"
  printf -- '---\nlanguage:\n- en\n---\n# CoNLL-2003\n' > "$C/README.md"
  echo "# a loading script" > "$C/conll2003.py"
  for s in train validation test; do
    mkdir -p "$C@convert/conll2003/$s"
    cp "$HERE/../parquet/data/conll.parquet" "$C@convert/conll2003/$s/0000.parquet"
  done
  start_hub
  C=(ner --model_name_or_path "$TMP/m" --dataset_name conll2003 --do_train --do_eval --max_steps 3
     --per_device_train_batch_size 4 --save_strategy no --ignore_mismatched_sizes --return_entity_level_metrics)
  run "$TMP/h.log" "${C[@]}" --output_dir "$TMP/h" || fail "ner --dataset_name conll2003" "$TMP/h.log" "$TMP/hub.log"
  N=$(json "$TMP/h/config.json" 'len(j["id2label"])')
  [ "$N" -gt 2 ] || fail "config.json id2label has $N labels, not conll.parquet's ClassLabel names"
  json "$TMP/h/eval_results.json" 'j["eval_overall_f1"], j["eval_overall_accuracy"]' > /dev/null \
    || fail "no entity-level metrics" "$TMP/h.log"
  grep -q "conll2003" "$TMP/h/README.md" || fail "the model card does not name the dataset" "$TMP/h/README.md"
  # Offline, the server gone: the splits' files from the Hub cache, their features from the feature cache.
  stop_hub
  HF_DATASETS_OFFLINE=1 run "$TMP/off.log" "${C[@]}" --output_dir "$TMP/off" || fail "the offline rerun" "$TMP/off.log"
  from_cache "$TMP/off.log" 2
  same_metrics "$TMP/h/all_results.json" "$TMP/off/all_results.json"
  ;;
glue_hub)
  # The issue's seed-style command, with the model and GLUE both from the fake Hub, under mpiexec -n 2.
  model "$TMP/hub/google-bert/bert-base-cased" seq-cls 130
  hub_env
  # nyu-mll/glue's mrpc config, as json lines with the ClassLabel names in the card's dataset_info.
  G="$TMP/hub/datasets/nyu-mll/glue"
  mkdir -p "$G/mrpc"
  printf -- '---\nconfigs:\n- config_name: mrpc\n  data_files:\n  - split: train\n    path: mrpc/train.jsonl\n%b' \
    '  - split: validation\n    path: mrpc/validation.jsonl\n  - split: test\n    path: mrpc/test.jsonl\n' > "$G/README.md"
  printf 'dataset_info:\n- config_name: mrpc\n  features:\n  - name: sentence1\n    dtype: string\n%b%b---\n' \
    '  - name: sentence2\n    dtype: string\n  - name: label\n    dtype:\n      class_label:\n        names:\n' \
    "          '0': not_equivalent\n          '1': equivalent\n  - name: idx\n    dtype: int32\n" >> "$G/README.md"
  for split in train:200 validation:32 test:16; do
    awk -v n="${split#*:}" -v seed="${#split}" -v test="${split%%:*}" 'BEGIN { srand(seed);
      split("world cafe resume zurich and the naive istanbul", w, " ");
      for (i = 0; i < n; i++) { lab = rand() < 0.5; s = "";
        for (k = 0; k < 4; k++) s = s (k ? " " : "") (lab && k == 1 ? "hello" : w[1 + int(rand() * 8)]);
        printf "{\"sentence1\": \"%s\", \"sentence2\": \"the cafe\", \"label\": %d, \"idx\": %d}\n", s,
          test == "test" ? -1 : lab, i } }' > "$G/mrpc/${split%%:*}.jsonl"
  done
  start_hub
  C=(glue --model_name_or_path google-bert/bert-base-cased --task_name MRPC --do_train --do_eval --max_seq_length 128
     --per_device_train_batch_size 32 --learning_rate 2e-5 --num_train_epochs 3 --no_cuda --ddp_backend ccl
     --do_predict)
  run2 "$TMP/h.log" "${C[@]}" --output_dir "$TMP/h" || fail "glue --task_name mrpc" "$TMP/h.log" "$TMP/hub.log"
  [ "$(json "$TMP/h/trainer_state.json" 'j["global_step"]')" = 12 ] || fail "expected 3 epochs of 4 steps" "$TMP/h.log"
  [ "$(json "$TMP/h/config.json" 'j["id2label"]["0"] + " " + j["id2label"]["1"] + " " + j["finetuning_task"]')" = \
    "not_equivalent equivalent mrpc" ] || fail "config.json: $(cat "$TMP/h/config.json")"
  json "$TMP/h/eval_results.json" 'j["eval_accuracy"], j["eval_f1"], j["eval_combined_score"]' > /dev/null \
    || fail "no mrpc metrics (accuracy, f1, combined_score)" "$TMP/h.log"
  [ "$(grep -cE $'^[0-9]+\t(not_equivalent|equivalent)$' "$TMP/h/predict_results_mrpc.txt")" = 16 ] \
    || fail "predict_results_mrpc.txt" "$TMP/h/predict_results_mrpc.txt"
  grep -q "dataset:" "$TMP/h/README.md" && grep -q "GLUE MRPC" "$TMP/h/README.md" \
    || fail "the model card does not name GLUE MRPC" "$TMP/h/README.md"
  # Offline (model and data), the server gone: the same run from the Hub cache and the feature cache.
  stop_hub
  HF_HUB_OFFLINE=1 run2 "$TMP/off.log" "${C[@]}" --output_dir "$TMP/off" || fail "the offline rerun" "$TMP/off.log"
  from_cache "$TMP/off.log" 3
  same_metrics "$TMP/h/all_results.json" "$TMP/off/all_results.json"
  cmp "$TMP/h/predict_results_mrpc.txt" "$TMP/off/predict_results_mrpc.txt" || fail "offline predictions differ"
  ;;
classification)
  model "$TMP/m" seq-cls
  # Multi-label: "greet" when the title holds hello, "place" when the body is istanbul; none, one or both.
  for split in train:500 dev:80 test:20; do
    awk -v n="${split#*:}" -v seed="${#split}" 'BEGIN { srand(seed); split("cafe resume and the naive zurich", w, " ");
      for (i = 0; i < n; i++) { a = rand() < 0.5; b = rand() < 0.5;
        t = (a ? "hello" : w[1 + int(rand() * 6)]) " " w[1 + int(rand() * 6)];
        l = (a ? "\"greet\"" : "") (a && b ? ", " : "") (b ? "\"place\"" : "");
        printf "{\"title\": \"%s\", \"body\": \"%s\", \"tags\": [%s]}\n", t, b ? "istanbul" : w[1 + int(rand() * 6)], l } }' \
      > "$TMP/${split%%:*}.json"
  done
  COMMON=(classification --model_name_or_path "$TMP/m" --train_file "$TMP/train.json" --validation_file "$TMP/dev.json"
          --text_column_names title,body --label_column_name tags --do_train --do_eval --max_seq_length 16
          --per_device_train_batch_size 16 --learning_rate 5e-3 --num_train_epochs 20 --seed 3 --save_strategy no
          --disable_tqdm)
  run "$TMP/c.log" "${COMMON[@]}" --do_predict --test_file "$TMP/test.json" --output_dir "$TMP/c" \
    || fail "coretrain classification (multi-label)" "$TMP/c.log"
  F1=$(json "$TMP/c/eval_results.json" 'j["eval_f1"]')
  close "$F1" 1 0.1 || fail "multi-label eval_f1 $F1 < 0.9" "$TMP/c.log"
  [ "$(json "$TMP/c/config.json" 'j["problem_type"] + " " + j["id2label"]["0"] + " " + j["id2label"]["1"]')" = \
    "multi_label_classification greet place" ] || fail "config.json: $(cat "$TMP/c/config.json")"
  [ "$(grep -cE $'^[0-9]+\t\\[(\'(greet|place)\'(, )?)*\\]$' "$TMP/c/predict_results.txt")" = 20 ] \
    || fail "predict_results.txt: expected 20 lines of label lists" "$TMP/c/predict_results.txt"
  expect_error "$TMP/e1.log" "--metric_name bleu: not a metric" "${COMMON[@]}" --metric_name bleu --output_dir "$TMP/e1"
  expect_error "$TMP/e2.log" "--label_column_name labels: .* has no such column" "${COMMON[@]}" \
    --label_column_name labels --output_dir "$TMP/e2"
  expect_error "$TMP/e3.log" "--remove_splits: no split 'extra'" "${COMMON[@]}" --remove_splits extra --output_dir "$TMP/e3"
  # --shuffle_train_dataset --shuffle_seed 7 then --max_train_samples 5 keeps the rows datasets'
  # shuffle(seed=7) puts first: np.random.default_rng(7).permutation(20)[:5] = [3 8 12 13 14] (NumPy 1.24);
  # each row's regression label is its index, so the dumped training features name the rows kept.
  for i in $(seq 0 19); do printf '{"sentence": "hello world", "label": %d.0}\n' "$i"; done > "$TMP/rows.json"
  run "$TMP/s.log" classification --model_name_or_path "$TMP/m" --train_file "$TMP/rows.json" \
    --validation_file "$TMP/rows.json" --do_train --do_regression --ignore_mismatched_sizes --shuffle_train_dataset \
    --shuffle_seed 7 --max_train_samples 5 --max_steps 1 --max_seq_length 8 --save_strategy no --disable_tqdm \
    --dump_train_features "$TMP/rows_feats.json" --output_dir "$TMP/s" || fail "classification --shuffle_train_dataset" "$TMP/s.log"
  [ "$(json "$TMP/rows_feats.json" 'sorted(int(f["labels"][0]) for f in j["features"])')" = "[3, 8, 12, 13, 14]" ] \
    || fail "--shuffle_seed 7 kept other rows than datasets' shuffle: $(cat "$TMP/rows_feats.json")"
  expect_error "$TMP/e4.log" "--shuffle_seed: must be >= 0" "${COMMON[@]}" --shuffle_seed -1 --output_dir "$TMP/e4"
  ;;
families)
  # The two bodies of their own (DeBERTa-v2's disentangled attention, ModernBERT's rotary local/global
  # layers) train through the same command as BERT.
  glue_data
  cfg() { printf '{"vocab_size":391,"hidden_size":32,"num_hidden_layers":3,"num_attention_heads":2,%s,%s}\n' \
    '"intermediate_size":64,"max_position_embeddings":64,"pad_token_id":0' "$1"; }
  cfg '"model_type":"deberta-v2","type_vocab_size":0,"relative_attention":true,"position_buckets":8,"pos_att_type":["p2c","c2p"],"share_att_key":true,"norm_rel_ebd":"layer_norm","position_biased_input":false,"layer_norm_eps":1e-7' \
    > "$TMP/deberta.json"
  cfg '"model_type":"modernbert","global_attn_every_n_layers":3,"local_attention":8,"norm_eps":1e-5,"classifier_pooling":"mean"' \
    > "$TMP/modernbert.json"
  for fam in deberta modernbert; do
    mkdir -p "$TMP/$fam"
    "$TOOL" init "$TMP/$fam.json" "$TMP/$fam" seq-cls 7 || fail "ct_checkpoint_tool init $fam"
    cp "$HERE/../text/data/tokenizers/bert.json" "$TMP/$fam/tokenizer.json"
    run "$TMP/$fam.log" glue --model_name_or_path "$TMP/$fam" --train_file "$TMP/train.csv" \
      --validation_file "$TMP/dev.csv" --do_train --do_eval --max_seq_length 32 --learning_rate 3e-3 \
      --num_train_epochs 6 --seed 1 --save_strategy no --pad_to_max_length false --per_device_train_batch_size 16 \
      --output_dir "$TMP/$fam-out" || fail "glue on $fam" "$TMP/$fam.log"
    ACC=$(json "$TMP/$fam-out/eval_results.json" 'j["eval_accuracy"]')
    close "$ACC" 1 0.1 || fail "$fam: eval_accuracy $ACC < 0.9" "$TMP/$fam.log"
    # 2 ranks in bf16: the node's ranks sharing the weights, their bf16 copies and the moments (each updating
    # its slice) train the bytes of every rank updating everything.
    for mode in shared replicated; do
      env $([ $mode = replicated ] && echo CORETRAIN_REPLICATED_OPTIMIZER=1) \
        timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" glue --model_name_or_path "$TMP/$fam" \
        --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv" --do_train --max_seq_length 32 \
        --learning_rate 3e-3 --num_train_epochs 2 --seed 1 --save_strategy no --pad_to_max_length false \
        --per_device_train_batch_size 8 --bf16 --output_dir "$TMP/$fam-$mode" > "$TMP/$fam-$mode.log" 2>&1 ||
        fail "glue on $fam, 2 ranks, $mode" "$TMP/$fam-$mode.log"
    done
    grep -q "share one copy of the weights" "$TMP/$fam-shared.log" ||
      fail "$fam: no shared optimizer state" "$TMP/$fam-shared.log"
    cmp -s "$TMP/$fam-shared/model.safetensors" "$TMP/$fam-replicated/model.safetensors" ||
      fail "$fam: shared and replicated optimizer state trained different weights" "$TMP/$fam-shared.log"
  done
  [ "$(json "$TMP/deberta-out/config.json" 'j["architectures"][0]')" = DebertaV2ForSequenceClassification ] \
    || fail "deberta config.json: $(cat "$TMP/deberta-out/config.json")"
  [ "$(json "$TMP/modernbert-out/config.json" 'j["architectures"][0]')" = ModernBertForSequenceClassification ] \
    || fail "modernbert config.json: $(cat "$TMP/modernbert-out/config.json")"
  ;;
mlm_hub)
  hub_env
  # FacebookAI/roberta-base in miniature: byte-level BPE (the 256 byte symbols after RoBERTa's specials, no
  # merges) with model_max_length 64, so run_mlm's default max_seq_length is 64.
  R="$TMP/hub/FacebookAI/roberta-base"
  mkdir -p "$R"
  "$PY" - "$HERE/../text/data/tokenizers/gpt2.json" "$R" "$TMP/rconfig.json" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
vocab.update({t: i + 4 for t, i in g["model"]["vocab"].items() if i < 256})
vocab["<mask>"] = 260
json.dump(vocab, open(sys.argv[2] + "/vocab.json", "w"))
open(sys.argv[2] + "/merges.txt", "w").write("#version: 0.2\n")
json.dump({"model_max_length": 64}, open(sys.argv[2] + "/tokenizer_config.json", "w"))
json.dump({"model_type": "roberta", "vocab_size": 261, "hidden_size": 32, "num_hidden_layers": 1,
           "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 66,
           "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}, open(sys.argv[3], "w"))
EOF
  "$TOOL" init "$TMP/rconfig.json" "$R" mlm 7 > "$TMP/init.log" 2>&1 || fail "ct_checkpoint_tool init roberta" "$TMP/init.log"
  # Salesforce/wikitext as the Hub lays it out: a folder per config; the 103 config's files would not parse.
  W="$TMP/hub/datasets/Salesforce/wikitext"
  mkdir -p "$W/wikitext-2-raw-v1" "$W/wikitext-103-raw-v1"
  {
    printf -- '---\nconfigs:\n'
    for c in wikitext-103-raw-v1 wikitext-2-raw-v1; do
      printf -- '- config_name: %s\n  data_files:\n' "$c"
      for s in test train validation; do printf -- '  - split: %s\n    path: %s/%s-*\n' "$s" "$c" "$s"; done
    done
    printf -- '---\n'
  } > "$W/README.md"
  for s in test train validation; do
    cp "$HERE/../parquet/data/wikitext.parquet" "$W/wikitext-2-raw-v1/$s-00000-of-00001.parquet"
    echo "not parquet" > "$W/wikitext-103-raw-v1/$s-00000-of-00001.parquet"
  done
  start_hub
  SEED_CMD=(mlm --model_name_or_path FacebookAI/roberta-base --dataset_name wikitext --dataset_config_name
            wikitext-2-raw-v1 --per_device_train_batch_size 8 --per_device_eval_batch_size 8 --do_train --do_eval)
  run2 "$TMP/on.log" "${SEED_CMD[@]}" --output_dir "$TMP/test-mlm" || fail "mlm --dataset_name wikitext" "$TMP/on.log" "$TMP/hub.log"
  json "$TMP/test-mlm/all_results.json" '[j["eval_loss"], j["eval_accuracy"], j["perplexity"]]' > /dev/null \
    || fail "no mlm metrics" "$TMP/on.log"
  # The config has a validation split (the same rows here), so nothing is held out of train.
  [ "$(json "$TMP/test-mlm/all_results.json" 'j["train_samples"] == j["eval_samples"] > 20')" = True ] \
    || fail "train and validation should give the same chunks: $(cat "$TMP/test-mlm/all_results.json")"
  ls "$HF_HUB_CACHE"/datasets--Salesforce--wikitext/snapshots/*/wikitext-2-raw-v1/train-00000-of-00001.parquet \
    > /dev/null 2>&1 || fail "wikitext-2-raw-v1's train split is not in the Hub cache" "$TMP/on.log"
  grep -q "wikitext" "$TMP/test-mlm/README.md" || fail "the model card does not name wikitext" "$TMP/test-mlm/README.md"
  [ "$(json "$TMP/test-mlm/config.json" 'j["architectures"][0]')" = RobertaForMaskedLM ] \
    || fail "config.json: $(cat "$TMP/test-mlm/config.json")"
  stop_hub
  HF_HUB_OFFLINE=1 run2 "$TMP/off.log" "${SEED_CMD[@]}" --output_dir "$TMP/test-mlm-offline" \
    || fail "the offline rerun" "$TMP/off.log"
  from_cache "$TMP/off.log" 2
  same_metrics "$TMP/test-mlm/all_results.json" "$TMP/test-mlm-offline/all_results.json"
  ;;
imdb_hub)
  model "$TMP/m" seq-cls
  hub_env
  # stanfordnlp/imdb's layout: config plain_text, splits train, test and unsupervised (no validation).
  I="$TMP/hub/datasets/stanfordnlp/imdb"
  mkdir -p "$I/plain_text"
  {
    printf -- '---\nconfigs:\n- config_name: plain_text\n  data_files:\n'
    for s in train test unsupervised; do printf -- '  - split: %s\n    path: plain_text/%s-*\n' "$s" "$s"; done
    printf -- '  default: true\n---\n'
  } > "$I/README.md"
  for s in train test unsupervised; do cp "$HERE/../parquet/data/imdb.parquet" "$I/plain_text/$s-00000-of-00001.parquet"; done
  start_hub
  C=(classification --model_name_or_path "$TMP/m" --dataset_name imdb --text_column_names text --do_train --do_eval
     --max_seq_length 16 --per_device_train_batch_size 8 --learning_rate 3e-3 --num_train_epochs 3 --seed 3
     --save_strategy no --disable_tqdm)
  run "$TMP/on.log" "${C[@]}" --output_dir "$TMP/on" || fail "classification --dataset_name imdb" "$TMP/on.log" "$TMP/hub.log"
  grep -q "Falling back to test dataset for validation" "$TMP/on.log" || fail "no fallback to the test split" "$TMP/on.log"
  [ "$(json "$TMP/on/all_results.json" '[j["train_samples"], j["eval_samples"]]')" = "[48, 48]" ] \
    || fail "train/eval_samples: $(cat "$TMP/on/all_results.json")"
  [ "$(json "$TMP/on/config.json" 'j["problem_type"] + " " + str(len(j["id2label"]))')" = "single_label_classification 2" ] \
    || fail "config.json: $(cat "$TMP/on/config.json")"
  ls "$HF_HUB_CACHE"/datasets--stanfordnlp--imdb/snapshots/*/plain_text/train-00000-of-00001.parquet > /dev/null 2>&1 \
    || fail "imdb's train split is not in the Hub cache" "$TMP/on.log"
  stop_hub
  HF_DATASETS_OFFLINE=1 run "$TMP/off.log" "${C[@]}" --output_dir "$TMP/off" || fail "the offline rerun" "$TMP/off.log"
  from_cache "$TMP/off.log" 2
  same_metrics "$TMP/on/all_results.json" "$TMP/off/all_results.json"
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS task_commands $CASE"

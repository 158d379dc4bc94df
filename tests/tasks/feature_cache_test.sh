#!/usr/bin/env bash
# feature_cache_test.sh CASE CORETRAIN CHECKPOINT_TOOL: the task commands' feature cache (tasks/cached_features.h)
# on a tiny BERT with the fixture WordPiece tokenizer and a few dozen local rows. In every case a first run
# builds each split's features and writes them under $HF_DATASETS_CACHE/coretrain-features, and a second,
# identical run logs that every split came from the cache, builds none, and ends with the same metrics.
#   glue: then --max_seq_length, another validation file and --overwrite_cache each rebuild what they change
#     (a changed file only its own split); damaged cache files are logged and rebuilt; --cache_dir moves the
#     cache; 2 ranks on a fresh cache: local rank 0 builds each split once, rank 1 builds nothing.
#   ner: --label_all_tokens rebuilds (it changes the labels).
#   mlm: --line_by_line rebuilds; an edited train file rebuilds the train split only.
#   swag: --max_train_samples rebuilds the train split only.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../train/ddp_lib.sh"
source "$HERE/task_lib.sh"
CASE=$1
ct_setup "cache_$CASE" "$2"
TOOL=$3
export MASTER_ADDR=127.0.0.1
CACHE="$HF_DATASETS_CACHE/coretrain-features"

run() {  # run NAME ARGS...: one process into $TMP/NAME, log $TMP/NAME.log
  local name=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" "$@" --output_dir "$TMP/$name" --disable_tqdm --save_strategy no --seed 3 \
    > "$TMP/$name.log" 2>&1 || fail "coretrain $*" "$TMP/$name.log"
}
built() { grep -c ": built [0-9]* features in" "$TMP/$1.log" || true; }
cached() { grep -c " features from the cache " "$TMP/$1.log" || true; }
expect() {  # expect NAME BUILT CACHED: how many splits the run built and read from the cache
  [ "$(built "$1")" = "$2" ] && [ "$(cached "$1")" = "$3" ] \
    || fail "$1: built $(built "$1") and read $(cached "$1") splits from the cache, expected $2 and $3" "$TMP/$1.log"
}
files() { ls "$CACHE" 2>/dev/null | grep -c '\.bin$' || true; }
csv_rows() {  # csv_rows N SEED: sentence1,sentence2,label; yes when sentence1 holds "hello"
  awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); split("world cafe resume zurich and the naive istanbul", w, " ");
    print "sentence1,sentence2,label";
    for (i = 0; i < n; i++) { lab = rand() < 0.5; s = "";
      for (k = 0; k < 4; k++) s = s (k ? " " : "") (lab && k == 1 ? "hello" : w[1 + int(rand() * 8)]);
      print s "," w[1 + int(rand() * 8)] "," (lab ? "yes" : "no") } }'
}

case "$CASE" in
glue)
  model "$TMP/m" seq-cls
  csv_rows 64 1 > "$TMP/train.csv"
  csv_rows 16 2 > "$TMP/dev.csv"
  G=(glue --model_name_or_path "$TMP/m" --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv" --do_train
     --do_eval --max_seq_length 16 --per_device_train_batch_size 8 --max_steps 4 --learning_rate 1e-3)
  run first "${G[@]}"
  expect first 2 0
  [ "$(files)" = 2 ] || fail "expected 2 cache files in $CACHE, found $(files)" "$TMP/first.log"
  run second "${G[@]}"
  expect second 0 2
  same_metrics "$TMP/first/all_results.json" "$TMP/second/all_results.json"
  run longer "${G[@]}" --max_seq_length 24
  expect longer 2 0
  csv_rows 17 2 > "$TMP/dev.csv"
  run newdev "${G[@]}"
  expect newdev 1 1
  run overwrite "${G[@]}" --overwrite_cache
  expect overwrite 2 0
  # Damaged files: one cut short, one with a flipped byte; each logged once and rebuilt.
  cut=1
  for f in "$CACHE"/*.bin; do
    if [ "$cut" = 1 ]; then
      head -c 30 "$f" > "$f.cut" && mv "$f.cut" "$f"
      cut=0
    else
      printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
    fi
  done
  run damaged "${G[@]}"
  [ "$(grep -c 'warning: .*\.bin: corrupt feature cache (checksum mismatch); rebuilding it' "$TMP/damaged.log")" = 2 ] \
    || fail "the damaged cache files were not reported" "$TMP/damaged.log"
  expect damaged 2 0
  run repaired "${G[@]}"
  expect repaired 0 2
  # --cache_dir: the features go there (an empty folder, so both splits are built once more).
  run moved "${G[@]}" --cache_dir "$TMP/mine"
  expect moved 2 0
  [ "$(ls "$TMP/mine/coretrain-features" | grep -c '\.bin$')" = 2 ] || fail "--cache_dir: no cache files there" "$TMP/moved.log"
  # 2 ranks on a fresh cache: each split built once (local rank 0), never by rank 1.
  export HF_DATASETS_CACHE="$TMP/fresh"
  timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" "${G[@]}" --per_device_train_batch_size 4 \
    --output_dir "$TMP/two" --disable_tqdm --save_strategy no --seed 3 > "$TMP/two.log" 2>&1 \
    || fail "2 ranks" "$TMP/two.log"
  expect two 2 0
  grep -q "building the features on this rank" "$TMP/two.log" && fail "rank 1 built its own features" "$TMP/two.log"
  [ "$(ls "$TMP/fresh/coretrain-features" | grep -c '\.bin$')" = 2 ] || fail "2 ranks: expected 2 cache files" "$TMP/two.log"
  ;;
ner)
  model "$TMP/m" token-cls
  for split in train:40 dev:12; do
    awk -v n="${split#*:}" -v seed="${#split}" 'BEGIN { srand(seed); split("cafe resume and the naive", o, " ");
      for (i = 0; i < n; i++) { m = 3 + int(rand() * 4); t = ""; g = "";
        for (k = 0; k < m; k++) { r = rand();
          if (r < 0.25) { x = "hello"; y = "B-PER" } else if (r < 0.4) { x = "istanbul"; y = "B-LOC" }
          else { x = o[1 + int(rand() * 5)]; y = "O" }
          t = t (k ? ", " : "") "\"" x "\""; g = g (k ? ", " : "") "\"" y "\"" }
        print "{\"tokens\": [" t "], \"ner_tags\": [" g "]}" } }' > "$TMP/${split%%:*}.json"
  done
  N=(ner --model_name_or_path "$TMP/m" --train_file "$TMP/train.json" --validation_file "$TMP/dev.json" --do_train
     --do_eval --max_seq_length 24 --per_device_train_batch_size 8 --max_steps 3 --ignore_mismatched_sizes)
  run first "${N[@]}"
  expect first 2 0
  run second "${N[@]}"
  expect second 0 2
  same_metrics "$TMP/first/all_results.json" "$TMP/second/all_results.json"
  run all_tokens "${N[@]}" --label_all_tokens
  expect all_tokens 2 0
  ;;
mlm)
  model "$TMP/m" mlm
  for split in train:60:1 validation:12:2; do
    IFS=: read -r name n seed <<< "$split"
    awk -v n="$n" -v seed="$seed" 'BEGIN { srand(seed); split("hello world cafe zurich resume naive istanbul", w, " ");
      for (i = 0; i < n; i++) { s = ""; m = 5 + int(rand() * 10);
        for (k = 0; k < m; k++) s = s (k ? " " : "") w[1 + int(rand() * 7)]; print s } }' > "$TMP/$name.txt"
  done
  M=(mlm --model_name_or_path "$TMP/m" --train_file "$TMP/train.txt" --validation_file "$TMP/validation.txt"
     --do_train --do_eval --max_seq_length 16 --per_device_train_batch_size 8 --max_steps 3)
  run first "${M[@]}"
  expect first 2 0
  run second "${M[@]}"
  expect second 0 2
  same_metrics "$TMP/first/all_results.json" "$TMP/second/all_results.json"
  run lines "${M[@]}" --line_by_line
  expect lines 2 0
  echo "hello world hello world" >> "$TMP/train.txt"
  run edited "${M[@]}"
  expect edited 1 1
  ;;
swag)
  model "$TMP/m" multiple-choice
  for split in train:32 dev:8; do
    awk -v n="${split#*:}" 'BEGIN { k = split("hello world cafe istanbul resume", w, " ");
      print "sent1,sent2,ending0,ending1,ending2,ending3,label"
      for (i = 0; i < n; ++i) { label = i % 4; c = 1 + i % k; line = "the " w[c] ",and"
        for (e = 0; e < 4; ++e) line = line ",the " w[e == label ? c : 1 + (c + e) % k]
        print line "," label } }' > "$TMP/${split%%:*}.csv"
  done
  S=(swag --model_name_or_path "$TMP/m" --train_file "$TMP/train.csv" --validation_file "$TMP/dev.csv" --do_train
     --do_eval --max_seq_length 16 --per_device_train_batch_size 4 --max_steps 3)
  run first "${S[@]}"
  expect first 2 0
  run second "${S[@]}"
  expect second 0 2
  same_metrics "$TMP/first/all_results.json" "$TMP/second/all_results.json"
  run fewer "${S[@]}" --max_train_samples 20
  expect fewer 1 1
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS feature_cache $CASE"

#!/bin/bash
# swag_hub_test.sh CORETRAIN CHECKPOINT_TOOL SOURCE_DIR: `coretrain swag` without --train_file/--validation_file
# reads the Hub's swag, configuration "regular", as run_swag's load_dataset("swag", "regular") does: against the
# fake Hub (tests/hub/fake_hub.py on loopback, HF_ENDPOINT) the legacy name resolves to allenai/swag, the README's
# "regular" config (not the other one, whose files would fail) gives train and validation, the files land in the
# Hub cache and a short run trains and evaluates on them; HF_DATASETS_OFFLINE=1 reruns from the cache; --do_eval
# alone fetches no train split. Needs python3 for the fake Hub (exit 77 without it).
set -eu

BIN=$(realpath "$1") TOOL=$(realpath "$2") SRC=$(realpath "$3")
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no $PY for the fake Hub"; exit 77; }
# pyj FILE EXPR: EXPR over the parsed JSON file `j`, printed (python3 is one of install-deps.sh's packages).
pyj() { /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$2"; }
LIMIT=${CT_TEST_PROCESS_LIMIT:-100}
TMP=$(mktemp -d /tmp/ct_swag_hub.XXXXXX)
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2> /dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive HF_HOME="$TMP/hf_home" HF_HUB_CACHE="$TMP/cache"
unset HF_HUB_OFFLINE HF_DATASETS_OFFLINE TRANSFORMERS_OFFLINE HF_TOKEN HUGGING_FACE_HUB_TOKEN \
  HUGGINGFACE_HUB_CACHE RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE 2> /dev/null || true
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export no_proxy='*'

fail() {
  echo "FAIL: $1" >&2
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "---- last lines of $f" >&2; grep -v '^train: step' "$f" | tail -n 25 >&2; }
  done
  exit 1
}

MODEL=$TMP/model
mkdir -p "$MODEL"
echo '{"model_type": "bert", "vocab_size": 391, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
 "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2}' > "$TMP/config.json"
"$TOOL" init "$TMP/config.json" "$MODEL" multiple-choice 42 > "$TMP/init.log" 2>&1 \
  || fail "ct_checkpoint_tool init" "$TMP/init.log"
cp "$SRC/tests/text/data/tokenizers/bert.json" "$MODEL/tokenizer.json"

# allenai/swag as the Hub lays it out: a README with the "full" and "regular" configs, one folder each.
SW=$TMP/hub/datasets/allenai/swag
mkdir -p "$SW/regular" "$SW/full"
printf -- '---\nconfigs:\n- config_name: full\n  data_files:\n  - split: train\n    path: full/train-*\n  - split: validation\n    path: full/validation-*\n- config_name: regular\n  data_files:\n  - split: train\n    path: regular/train-*\n  - split: validation\n    path: regular/validation-*\n  default: true\n---\n' \
  > "$SW/README.md"
rows() {  # N: SWAG rows, the right ending (label) repeating the context's word
  awk -v n="$1" 'BEGIN {
    k = split("hello world cafe istanbul resume", w, " ")
    print "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"
    for (i = 0; i < n; ++i) {
      label = i % 4; c = 1 + i % k; line = "v" i "," i ",the " w[c] " and,the " w[c] ",and,gold"
      for (e = 0; e < 4; ++e) line = line ",the " w[e == label ? c : 1 + (c + e) % k]
      print line "," label
    }
  }'
}
rows 40 > "$SW/regular/train-00000-of-00001.csv"
rows 12 > "$SW/regular/validation-00000-of-00001.csv"
# The full config has other columns: reading it instead of "regular" fails on the missing sent1.
printf 'video-id,startphrase,label\nv0,the hello,0\n' > "$SW/full/train-00000-of-00001.csv"
cp "$SW/full/train-00000-of-00001.csv" "$SW/full/validation-00000-of-00001.csv"

"$PY" "$SRC/tests/hub/fake_hub.py" "$TMP/hub" "$TMP/port" > "$TMP/hub.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || fail "fake_hub.py did not start" "$TMP/hub.log"
export HF_ENDPOINT="http://127.0.0.1:$(cut -d' ' -f1 "$TMP/port")"

swag() {  # LOG ARGS...
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" swag --model_name_or_path "$MODEL" --max_steps 3 --save_strategy no \
    --disable_tqdm true "$@" > "$log" 2>&1
}
swag "$TMP/run1.log" --do_train --do_eval --output_dir "$TMP/out1" || fail "the Hub run failed" "$TMP/run1.log"
[ "$(pyj "$TMP/out1/all_results.json" 'j["train_samples"]')" = 40 ] || fail "train_samples is not the 40 rows"
[ "$(pyj "$TMP/out1/all_results.json" 'j["eval_samples"]')" = 12 ] || fail "eval_samples is not the 12 rows"
ls "$HF_HUB_CACHE"/datasets--allenai--swag/snapshots/*/regular/train-00000-of-00001.csv > /dev/null 2>&1 \
  || fail "allenai/swag's regular train split is not in the Hub cache" "$TMP/run1.log"
grep -q "^info: dataset swag train: " "$TMP/run1.log" || fail "the log does not name the dataset" "$TMP/run1.log"
grep -q "dataset_name" "$TMP/run1.log" && fail "the log names --dataset_name, which run_swag has not" "$TMP/run1.log"

# Offline: the same splits from the cache (the server is gone).
kill "$SERVER"
wait "$SERVER" 2> /dev/null || true
SERVER=""
HF_DATASETS_OFFLINE=1 swag "$TMP/run2.log" --do_eval --output_dir "$TMP/out2" \
  || fail "the offline run failed" "$TMP/run2.log"
[ "$(pyj "$TMP/out2/all_results.json" 'j["eval_samples"]')" = 12 ] || fail "offline: eval_samples is not 12"
grep -q "dataset swag train" "$TMP/run2.log" && fail "--do_eval alone read the train split" "$TMP/run2.log"
echo "PASS"

#!/usr/bin/env bash
# `coretrain qa --dataset_name squad` against the fake Hub (fake_hub.py on loopback, HF_ENDPOINT): the legacy name
# resolves to rajpurkar/squad, whose README configs point at plain_text/{train,validation}-*.parquet (the
# committed tests/parquet/data/squad.parquet, written by parquet-wasm); the files land in the Hub cache
# (datasets--rajpurkar--squad) and a 2-step run trains and evaluates from them; HF_DATASETS_OFFLINE=1 reruns with no
# request (the fixture has unanswerable rows, hence --version_2_with_negative); `coretrain hub download --repo-type
# dataset` prefills a cache an offline run uses; an unknown config lists the available one; a dataset without SQuAD's columns names the missing ones;
# `hub download --revision` takes a commit and refuses a revision the repo lacks in one line; a train split of two
# Parquet shards trains on both.
#   qa_dataset_hub_test.sh CORETRAIN_BIN
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../train/ddp_lib.sh"
ct_setup qa_dataset_hub "$1"
unset HF_HUB_OFFLINE HF_DATASETS_OFFLINE TRANSFORMERS_OFFLINE HF_TOKEN HUGGING_FACE_HUB_TOKEN CORETRAIN_SQUAD_URL \
  HUGGINGFACE_HUB_CACHE 2>/dev/null || true
export HF_HOME="$TMP/hf_home"
FIX="$HERE/../parquet/data"

timeout -k 5 "$LIMIT" "$BIN" qa --demo --max_steps 1 --output_dir "$TMP/demo" --demo_train_paragraphs 8 \
  --demo_eval_paragraphs 2 > "$TMP/demo.log" 2>&1 || fail "the demo did not write a model" "$TMP/demo.log"
HUB="$TMP/hub"
SQ="$HUB/datasets/rajpurkar/squad"
mkdir -p "$SQ/plain_text" "$HUB/datasets/org/not-squad/data" "$HUB/datasets/org/squad-shards/data"
printf -- '---\nconfigs:\n- config_name: plain_text\n  data_files:\n  - split: train\n    path: plain_text/train-*\n  - split: validation\n    path: plain_text/validation-*\n  default: true\n---\n' > "$SQ/README.md"
cp "$FIX/squad.parquet" "$SQ/plain_text/train-00000-of-00001.parquet"
cp "$FIX/squad.parquet" "$SQ/plain_text/validation-00000-of-00001.parquet"
cp "$FIX/conll.parquet" "$HUB/datasets/org/not-squad/data/train-00000-of-00001.parquet"
cp "$FIX/conll.parquet" "$HUB/datasets/org/not-squad/data/validation-00000-of-00001.parquet"
# A train split of two shards (the default data/{split}-NNNNN-of-NNNNN pattern).
for k in 0 1; do cp "$FIX/squad.parquet" "$HUB/datasets/org/squad-shards/data/train-0000$k-of-00002.parquet"; done
cp "$FIX/squad.parquet" "$HUB/datasets/org/squad-shards/data/validation-00000-of-00001.parquet"

"$PY" "$HERE/fake_hub.py" "$HUB" "$TMP/port" > "$TMP/hub.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -f "$TMP/port" ] && break; sleep 0.1; done
[ -f "$TMP/port" ] || fail "fake_hub.py did not start" "$TMP/hub.log"
export HF_ENDPOINT="http://127.0.0.1:$(cut -d' ' -f1 "$TMP/port")"
requests() { "$PY" -c "import json,urllib.request; print(len(json.load(urllib.request.urlopen('$HF_ENDPOINT/_stats'))))"; }
export HF_HUB_CACHE="$TMP/cache"
qa() {  # qa LOG ARGS...
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" qa --model_name_or_path "$TMP/demo" --do_train --do_eval --max_steps 2 \
    --per_device_train_batch_size 4 --max_seq_length 128 --doc_stride 32 --overwrite_output_dir \
    --save_strategy no --version_2_with_negative "$@" > "$log" 2>&1
}

qa "$TMP/online.log" --dataset_name squad --output_dir "$TMP/out1" || fail "--dataset_name squad failed" "$TMP/online.log"
REPO="$TMP/cache/datasets--rajpurkar--squad"
COMMIT=$(cat "$REPO/refs/main")
cmp -s "$REPO/snapshots/$COMMIT/plain_text/train-00000-of-00001.parquet" "$FIX/squad.parquet" ||
  fail "the train split is not in the Hub cache" "$TMP/online.log"
[ "$(json "$TMP/out1/trainer_state.json" 'j["global_step"]')" = 2 ] || fail "global_step != 2" "$TMP/online.log"
json "$TMP/out1/eval_results.json" 'j["eval_exact"], j["eval_f1"]' > /dev/null || fail "no eval metrics" "$TMP/online.log"

before=$(requests)
HF_DATASETS_OFFLINE=1 qa "$TMP/offline.log" --dataset_name rajpurkar/squad --dataset_config_name plain_text \
  --output_dir "$TMP/out2" || fail "the offline rerun failed" "$TMP/offline.log"
[ "$(requests)" = "$before" ] || fail "the offline run made $(( $(requests) - before )) request(s)"
cmp -s "$TMP/out1/eval_predictions.json" "$TMP/out2/eval_predictions.json" || fail "online and offline runs differ"

if qa "$TMP/config.log" --dataset_name squad --dataset_config_name v9 --output_dir "$TMP/out3"; then
  fail "an unknown config was accepted" "$TMP/config.log"
fi
grep -q "error: .*'v9' is not a config of squad (it has one: plain_text)" "$TMP/config.log" ||
  fail "unclear config error" "$TMP/config.log"
if qa "$TMP/shape.log" --dataset_name org/not-squad --output_dir "$TMP/out4"; then
  fail "a dataset without SQuAD's columns was accepted" "$TMP/shape.log"
fi
grep -q "error: .*train-00000-of-00001.parquet: Parquet file lacks SQuAD column(s) context, question, answers" \
  "$TMP/shape.log" || fail "unclear column error" "$TMP/shape.log"
# `coretrain hub download --repo-type dataset` fills a cache that an offline job then runs from.
timeout -k 5 "$LIMIT" "$BIN" hub download --repo-type dataset squad --cache-dir "$TMP/prefill" > "$TMP/prefill.out" \
  2> "$TMP/prefill.log" || fail "hub download --repo-type dataset failed" "$TMP/prefill.log"
[ "$(wc -l < "$TMP/prefill.out")" = 2 ] || fail "hub download printed: $(cat "$TMP/prefill.out")" "$TMP/prefill.log"
grep -q "datasets--rajpurkar--squad/snapshots/.*/plain_text/validation-00000-of-00001.parquet" "$TMP/prefill.out" ||
  fail "no validation file in: $(cat "$TMP/prefill.out")"
before=$(requests)
HF_DATASETS_OFFLINE=1 qa "$TMP/prefilled.log" --dataset_name squad --cache_dir "$TMP/prefill" --output_dir "$TMP/out5" ||
  fail "offline run from a prefilled cache failed" "$TMP/prefilled.log"
[ "$(requests)" = "$before" ] || fail "the prefilled offline run made requests"
# --revision pins a dataset download: the commit main resolved to works, a revision the repo lacks is one error line.
timeout -k 5 "$LIMIT" "$BIN" hub download --repo-type dataset squad --revision "$COMMIT" --cache-dir "$TMP/pinned" \
  > "$TMP/pinned.out" 2> "$TMP/pinned.log" || fail "hub download --revision $COMMIT failed" "$TMP/pinned.log"
[ "$(grep -c "datasets--rajpurkar--squad/snapshots/$COMMIT/plain_text/" "$TMP/pinned.out")" = 2 ] \
  || fail "--revision $COMMIT: $(cat "$TMP/pinned.out")" "$TMP/pinned.log"
if timeout -k 5 "$LIMIT" "$BIN" hub download --repo-type dataset squad --revision v9 --cache-dir "$TMP/pinned" \
  > "$TMP/v9.out" 2> "$TMP/v9.log"; then
  fail "hub download --revision v9 succeeded" "$TMP/v9.log"
fi
grep -q "error: .*revision v9 not found" "$TMP/v9.log" && [ "$(grep -c . "$TMP/v9.log")" = 1 ] \
  || fail "expected one error line naming revision v9" "$TMP/v9.log"
# A split of several files: their examples one after the other, as datasets concatenates a split's shards.
qa "$TMP/shards.log" --dataset_name org/squad-shards --output_dir "$TMP/out6" || fail "a 2-shard split failed" "$TMP/shards.log"
grep -q "train-00000-of-00002.parquet and 1 more file(s): built" "$TMP/shards.log" \
  || fail "the log does not name the two shards" "$TMP/shards.log"
[ "$(json "$TMP/out6/train_results.json" 'j["train_samples"]')" = \
  "$(json "$TMP/out1/train_results.json" 'j["train_samples"] * 2')" ] \
  || fail "2 shards should give twice the train features of one" "$TMP/shards.log"
echo "qa_dataset_hub: ok"

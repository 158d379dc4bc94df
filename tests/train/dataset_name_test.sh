#!/usr/bin/env bash
# dataset_name_test.sh CORETRAIN: `coretrain qa --dataset_name squad` against a local HTTP server (python3
# http.server on a free loopback port, CORETRAIN_SQUAD_URL pointing at it) serving small SQuAD JSON files:
# the first run downloads train-v1.1.json and dev-v1.1.json into HF_DATASETS_CACHE/coretrain-squad/ and trains
# 2 steps + evaluates; a second run makes no request; 2 ranks on an empty cache download each file once; with
# the server stopped and HF_DATASETS_OFFLINE=1 a run works from the cache; offline with an empty cache, an HTML
# body instead of JSON, a 404, an unknown dataset or config and --do_predict without a test split each fail with
# a one-line error naming the cause.
source "$(dirname "$0")/ddp_lib.sh"
ct_setup dataset_name "$1"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy HF_DATASETS_OFFLINE HF_HUB_OFFLINE
export no_proxy='*'

# A tiny model and SQuAD-format data: the demo's, after 1 step.
timeout -k 5 "$LIMIT" "$BIN" qa --demo --demo_train_paragraphs 12 --demo_eval_paragraphs 4 --max_steps 1 \
  --output_dir "$TMP/demo" > "$TMP/demo.log" 2>&1 || fail "demo run" "$TMP/demo.log"
mkdir -p "$TMP/www/squad" "$TMP/www/bad"
cp "$TMP/demo/demo_data/train.json" "$TMP/www/squad/train-v1.1.json"
cp "$TMP/demo/demo_data/dev.json" "$TMP/www/squad/dev-v1.1.json"
printf '<!DOCTYPE html>\n<html><body>Page not found</body></html>\n' > "$TMP/www/bad/train-v1.1.json"

pick_port
timeout -k 5 "$LIMIT" "$PY" -u -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$PORT" \
  > "$TMP/http.log" 2>&1 &
SERVER=$!
PIDS="$PIDS $SERVER"
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || fail "http.server did not start" "$TMP/http.log"
export CORETRAIN_SQUAD_URL="http://127.0.0.1:$PORT/squad/"
gets() { grep -c '"GET /squad/' "$TMP/http.log" || true; }

RUN=(qa --model_name_or_path "$TMP/demo" --dataset_name squad --dataset_config_name plain_text --do_train
     --do_eval --max_steps 2 --per_device_train_batch_size 8 --max_seq_length 128 --doc_stride 32
     --logging_steps 1 --save_strategy no --overwrite_output_dir)
CACHED="$HF_DATASETS_CACHE/coretrain-squad/127.0.0.1_$PORT/squad"

timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" --output_dir "$TMP/out1" > "$TMP/run1.log" 2>&1 \
  || fail "first run with --dataset_name squad" "$TMP/run1.log" "$TMP/http.log"
cmp -s "$CACHED/train-v1.1.json" "$TMP/www/squad/train-v1.1.json" || fail "train-v1.1.json not cached" "$TMP/run1.log"
cmp -s "$CACHED/dev-v1.1.json" "$TMP/www/squad/dev-v1.1.json" || fail "dev-v1.1.json not cached" "$TMP/run1.log"
[ "$(gets)" = 2 ] || fail "expected 2 downloads, the server saw $(gets)" "$TMP/http.log"
[ "$(json "$TMP/out1/trainer_state.json" 'j["global_step"]')" = 2 ] || fail "global_step != 2" "$TMP/run1.log"
json "$TMP/out1/eval_results.json" 'j["eval_exact_match"], j["eval_f1"]' > /dev/null \
  || fail "no eval metrics" "$TMP/run1.log"
ls "$CACHED" | grep -q incomplete && fail "a temporary file was left in the cache"

# Second run: the cache, no request.
timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" --output_dir "$TMP/out2" > "$TMP/run2.log" 2>&1 \
  || fail "second run" "$TMP/run2.log"
[ "$(gets)" = 2 ] || fail "the second run made requests ($(gets) GETs in all)" "$TMP/http.log"
cmp -s "$TMP/out1/eval_predictions.json" "$TMP/out2/eval_predictions.json" || fail "runs 1 and 2 differ"

# Two ranks of one node on an empty cache: local rank 0 downloads each file once, rank 1 waits and reads it.
SERVE_PORT=$PORT
pick_port
start_rank 0 2 0 2 "$TMP/r0.log" HF_DATASETS_CACHE="$TMP/cache2" -- "${RUN[@]}" --output_dir "$TMP/ddp"
P0=$LAST_PID
start_rank 1 2 1 2 "$TMP/r1.log" HF_DATASETS_CACHE="$TMP/cache2" -- "${RUN[@]}" --output_dir "$TMP/ddp"
P1=$LAST_PID
wait_rc $P0; R0=$RC
wait_rc $P1; R1=$RC
[ "$R0" = 0 ] && [ "$R1" = 0 ] || fail "2 ranks with --dataset_name (rc $R0, $R1)" "$TMP/r0.log" "$TMP/r1.log"
[ "$(gets)" = 4 ] || fail "2 ranks: expected 2 more downloads, the server saw $(gets) in all" "$TMP/http.log"
cmp -s "$TMP/cache2/coretrain-squad/127.0.0.1_$SERVE_PORT/squad/dev-v1.1.json" "$TMP/www/squad/dev-v1.1.json" \
  || fail "2 ranks: dev-v1.1.json not cached"
PORT=$SERVE_PORT

# An HTML page instead of JSON: one line naming the URL, nothing cached.
set +e
CORETRAIN_SQUAD_URL="http://127.0.0.1:$PORT/bad" timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" \
  --output_dir "$TMP/out3" > "$TMP/bad.log" 2>&1
rc=$?
set -e
[ $rc != 0 ] || fail "an HTML body was accepted" "$TMP/bad.log"
grep -q "error: .*bad/train-v1.1.json: not JSON .*it starts with '<!DOCTYPE html> <html>" "$TMP/bad.log" \
  || fail "no one-line error for the HTML body" "$TMP/bad.log"
[ -z "$(ls "$HF_DATASETS_CACHE/coretrain-squad/127.0.0.1_$PORT/bad" 2>/dev/null | grep -v '\.lock$')" ] \
  || fail "the HTML body was left in the cache"

# A 404 (squad_v2 files are not served).
set +e
timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" --dataset_name squad_v2 --dataset_config_name squad_v2 \
  --output_dir "$TMP/out4" > "$TMP/404.log" 2>&1
rc=$?
set -e
[ $rc != 0 ] || fail "a 404 was accepted" "$TMP/404.log"
grep -q "error: .*train-v2.0.json: HTTP 404" "$TMP/404.log" || fail "no error naming the 404" "$TMP/404.log"

# Server gone, offline: the cache alone.
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
HF_DATASETS_OFFLINE=1 timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" --output_dir "$TMP/out5" > "$TMP/offline.log" 2>&1 \
  || fail "offline run from the cache" "$TMP/offline.log"
cmp -s "$TMP/out1/eval_predictions.json" "$TMP/out5/eval_predictions.json" || fail "the offline run differs"

# Offline with nothing cached: says what is missing and where it was looked for.
set +e
HF_HUB_OFFLINE=1 HF_DATASETS_CACHE="$TMP/empty" timeout -k 5 "$LIMIT" "$BIN" "${RUN[@]}" \
  --output_dir "$TMP/out6" > "$TMP/offline_empty.log" 2>&1
rc=$?
set -e
[ $rc != 0 ] || fail "offline without a cache succeeded" "$TMP/offline_empty.log"
grep -q "error: .*train-v1.1.json is not in the datasets cache ($TMP/empty/coretrain-squad/.*) and HF_DATASETS_OFFLINE" \
  "$TMP/offline_empty.log" || fail "the offline error does not name the missing file" "$TMP/offline_empty.log"

# Refused flags.
expect_error() {
  local want=$1
  shift
  set +e
  timeout -k 5 "$LIMIT" "$BIN" qa --model_name_or_path "$TMP/demo" --output_dir "$TMP/outx" "$@" > "$TMP/err.log" 2>&1
  local rc=$?
  set -e
  [ $rc != 0 ] || fail "accepted: $*" "$TMP/err.log"
  grep -qF -- "$want" "$TMP/err.log" || fail "expected '$want' for: $*" "$TMP/err.log"
}
expect_error "--dataset_name: 'squad_v3' is not available" --dataset_name squad_v3 --do_train
expect_error "--dataset_config_name: 'v2' is not a config of squad" --dataset_name squad --dataset_config_name v2 \
  --do_train
expect_error "--do_predict requires a test dataset" --dataset_name rajpurkar/squad --do_predict
echo "PASS"

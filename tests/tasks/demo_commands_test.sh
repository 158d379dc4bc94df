#!/usr/bin/env bash
# demo_commands_test.sh CASE CORETRAIN: `coretrain CASE --demo --output_dir DIR`, nothing else given, generates
# its data, tokenizer and config under DIR/demo_data/, trains a small BERT from random init and reaches its
# metric (eval_results.json) clearly above chance, printing it; a flag given overrides a demo default; an
# unwritable --output_dir or --dump_train_features path is one error line naming it.
#   glue (eval_accuracy >= 0.9), classification (multi-label eval_f1 >= 0.9), ner (eval_f1 >= 0.9),
#   mlm (eval_accuracy >= 0.8 over a 12-word counting ring; chance 1/12), swag (eval_accuracy >= 0.9).
#   glue_ddp: 2 ranks under mpiexec split the demo's global batch (16 each) and end at 1 process's eval_loss
#     and accuracy, padded to max_seq_length so both see the same shapes.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../train/ddp_lib.sh"
CASE=$1
ct_setup "demo_$CASE" "$2"
export MASTER_ADDR=127.0.0.1

demo() {  # demo CMD OUT ARGS...: one process, log in OUT.log
  local cmd=$1 out=$2
  shift 2
  timeout -k 5 "$LIMIT" "$BIN" "$cmd" --demo --output_dir "$out" --disable_tqdm "$@" > "$out.log" 2>&1 \
    || fail "coretrain $cmd --demo $*" "$out.log"
}
at_least() {  # at_least FILE KEY MIN LOG
  local v
  v=$(json "$1" "j[\"$2\"]") || fail "no $2 in $1" "$4"
  awk -v a="$v" -v b="$3" 'BEGIN { exit !(a >= b) }' || fail "$2 $v < $3" "$4"
  grep -q "^demo: $2 " "$4" || fail "the demo did not print $2" "$4"
  echo "$CASE: $2 $v"
}

case "$CASE" in
glue | classification | ner | mlm | swag)
  declare -A KEY=([glue]=eval_accuracy [classification]=eval_f1 [ner]=eval_f1 [mlm]=eval_accuracy
                  [swag]=eval_accuracy)
  declare -A MIN=([glue]=0.9 [classification]=0.9 [ner]=0.9 [mlm]=0.8 [swag]=0.9)
  t0=$(now)
  demo "$CASE" "$TMP/out"
  echo "$CASE: $(elapsed_since "$t0") s"
  at_least "$TMP/out/eval_results.json" "${KEY[$CASE]}" "${MIN[$CASE]}" "$TMP/out.log"
  for f in demo_data/config.json demo_data/tokenizer.json config.json model.safetensors tokenizer.json \
           train_results.json all_results.json; do
    [ -s "$TMP/out/$f" ] || fail "no $f in the output folder" "$TMP/out.log"
  done
  # Any flag overrides a demo default.
  demo "$CASE" "$TMP/short" --max_steps 2 --per_device_train_batch_size 4
  [ "$(json "$TMP/short/trainer_state.json" 'str(j["global_step"]) + " " + str(j["train_batch_size"])')" = "2 4" ] \
    || fail "--max_steps 2 --per_device_train_batch_size 4 did not override the demo's" "$TMP/short.log"
  # Paths the demo cannot write: one error line naming the flag or the file, a non-zero exit.
  bad() {  # bad PATTERN ARGS...
    local pat=$1
    shift
    if timeout -k 5 "$LIMIT" "$BIN" "$CASE" --demo --disable_tqdm "$@" > "$TMP/bad.log" 2>&1; then
      fail "expected an error for $*" "$TMP/bad.log"
    fi
    [ "$(grep -c 'error:' "$TMP/bad.log")" = 1 ] && grep -q "error: .*$pat" "$TMP/bad.log" \
      || fail "expected one error line matching '$pat'" "$TMP/bad.log"
  }
  bad "--output_dir: cannot create /proc/nope/out/demo_data" --output_dir /proc/nope/out
  bad "/proc/nope/train.json: cannot create" --output_dir "$TMP/dump" --max_steps 1 \
    --dump_train_features /proc/nope/train.json
  ;;
glue_ddp)
  demo glue "$TMP/one" --pad_to_max_length --max_seq_length 32
  timeout -k 5 "$LIMIT" mpiexec -n 2 -genv OMP_NUM_THREADS=1 "$BIN" glue --demo --output_dir "$TMP/two" \
    --disable_tqdm --pad_to_max_length --max_seq_length 32 > "$TMP/two.log" 2>&1 \
    || fail "coretrain glue --demo under mpiexec -n 2" "$TMP/two.log"
  grep -q "demo: 2 ranks x batch 16" "$TMP/two.log" || fail "the 2 ranks did not split the global batch" "$TMP/two.log"
  L1=$(json "$TMP/one/eval_results.json" 'j["eval_loss"]') L2=$(json "$TMP/two/eval_results.json" 'j["eval_loss"]')
  awk -v a="$L2" -v b="$L1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-3 * (b < 0 ? -b : b) + 1e-7) }' \
    || fail "eval_loss: 2 ranks $L2, 1 process $L1" "$TMP/two.log"
  A1=$(json "$TMP/one/eval_results.json" 'j["eval_accuracy"]') A2=$(json "$TMP/two/eval_results.json" 'j["eval_accuracy"]')
  [ "$A1" = "$A2" ] || fail "eval_accuracy: 2 ranks $A2, 1 process $A1"
  echo "glue_ddp: eval_loss $L1 / $L2, eval_accuracy $A1"
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS demo_commands $CASE"

#!/bin/sh
# tokenize_test.sh CORETRAIN: `coretrain bench tokenize` on a tiny SQuAD file with hand-counted features, text and
# --json, plus its flag errors. No timing is checked. Run by ctest (data.bench_tokenize).
#
# Every word below is one vocabulary token, so the counts follow from run_qa's windowing alone (HF tokenizers'
# only_second overflow, which bench/tokenize_vs_hf.py checks against the real thing): the question "what is x ?"
# is 4 tokens, so at --max_seq_length 16 a window holds 16 - 4 - 3 = 9 context tokens, and --doc_stride 3 (the
# overlap) starts one every 6 tokens:
#   context of 20 tokens: windows at 0, 6, 12 -> 3 features
#   context of  9 tokens: fits                -> 1
#   context of 15 tokens: windows at 0, 6     -> 2   (6 + 9 = 15 reaches the end)
# = 6 features, 3 examples, 3 x 4 + 20 + 9 + 15 = 56 tokens.
set -u
bin=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/ct_bench_tokenize.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

mkdir "$dir/tok"
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' what is x '?' a b c d e f g h i j k l m n o p q r s t \
  >"$dir/tok/vocab.txt"
words() {  # words N: the first N of a..t, space-separated
  echo "a b c d e f g h i j k l m n o p q r s t" | cut -d' ' -f1-"$1"
}
c20=$(words 20)
c9=$(words 9)
c15=$(words 15)
cat >"$dir/train.json" <<EOF
{"version": "1.1", "data": [{"title": "t", "paragraphs": [
  {"context": "$c20", "qas": [{"id": "q1", "question": "What is X?", "answers": [{"text": "s", "answer_start": 36}]}]},
  {"context": "$c9", "qas": [{"id": "q2", "question": "  what is x ?", "answers": [{"text": "a", "answer_start": 0}]}]},
  {"context": "$c15", "qas": [{"id": "q3", "question": "what is x?", "answers": [{"text": "o", "answer_start": 28}]}]}
]}]}
EOF

run="$bin bench tokenize --train_file $dir/train.json --tokenizer_name $dir/tok --max_seq_length 16 --doc_stride 3"
run="$run --iters 1"
out=$($run --threads 2 2>&1) || fail "text run: $out"
printf '%s\n' "$out" | grep -q '^features 6  tokens 56 ' || fail "text run: wanted 'features 6  tokens 56', got: $out"
printf '%s\n' "$out" | grep -q '^2 threads: .*features/s' || fail "text run: no 2-thread line: $out"
printf '%s\n' "$out" | grep -q '^1 thread: .*features/s' || fail "text run: no 1-thread line: $out"

json=$($run --json --threads 1 2>&1) || fail "json run: $json"
printf '%s\n' "$json" | grep -q '^{"examples": 3, "skipped": 0, "features": 6, "tokens": 56, ' ||
  fail "json run: $json"
printf '%s\n' "$json" | grep -q '"features_per_s": ' || fail "json run: no features_per_s: $json"
printf '%s\n' "$json" | grep -q 'single_thread' && fail "json run at 1 thread has a second pass: $json"
[ "$(printf '%s\n' "$json" | wc -l)" -eq 1 ] || fail "json run: not one line: $json"

# The same file through --model_name_or_path (its tokenizer only) and the default HF windows: all fit in 384.
json=$("$bin" bench tokenize --train_file "$dir/train.json" --model_name_or_path "$dir/tok" --iters 1 --json 2>&1)
printf '%s\n' "$json" | grep -q '"features": 3, ' || fail "--model_name_or_path at 384: $json"

expect_error() {  # expect_error "text in the error" args...
  want=$1
  shift
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] || ! printf '%s' "$out" | grep -qF -- "$want"; then
    fail "coretrain $* -> rc $rc, wanted an error containing '$want', got: $out"
  fi
}
expect_error "--tokenizer_name or --model_name_or_path: one is required" bench tokenize --train_file "$dir/train.json"
expect_error "--train_file is required" bench tokenize --tokenizer_name "$dir/tok"
expect_error "--doc_stride 9 must be smaller than the context window" bench tokenize --train_file "$dir/train.json" \
  --tokenizer_name "$dir/tok" --max_seq_length 16 --doc_stride 9
expect_error "--iters: expected a positive integer, got '0'" bench tokenize --train_file "$dir/train.json" \
  --tokenizer_name "$dir/tok" --iters 0

[ "$fails" -eq 0 ] && echo PASS
exit "$fails"

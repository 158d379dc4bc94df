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

# The other tasks, through the tokenizer.json engine on the same vocab.txt folder (BERT's template: [CLS] a [SEP]
# and [CLS] a [SEP] b [SEP]; every word one token).
#   glue: "what is x ?" + "a b c" -> 1 + 4 + 1 + 3 + 1 = 10; "a b" alone -> 4                 = 2 features, 14 tokens
#   ner:  [a, b, c] -> 5; [what, is] -> 4                                                     = 2 features,  9 tokens
#   swag: "what is x ?" + "a b" + ending of 1, 2, 1, 3 words -> 10, 11, 10, 12              = 4 features, 43 tokens
#   mlm:  lines of 8, 4 and 0 words -> 10 + 6 + 2 = 18 tokens in one batch; chunks of 4       = 4 features, 16 tokens
#         --line_by_line (the blank line dropped), max 16                                     = 2 features, 16 tokens
cat >"$dir/glue.jsonl" <<'EOF'
{"sentence1": "what is x ?", "sentence2": "a b c", "label": 1}
{"sentence1": "a b"}
EOF
cat >"$dir/ner.jsonl" <<'EOF'
{"tokens": ["a", "b", "c"], "ner_tags": [0, 0, 0]}

{"tokens": ["what", "is"]}
EOF
cat >"$dir/swag.jsonl" <<'EOF'
{"sent1": "what is x ?", "sent2": "a b", "ending0": "c", "ending1": "d e", "ending2": "f", "ending3": "g h i", "label": 2}
EOF
printf 'a b c d e f g h\ni j k l\n\n' >"$dir/mlm.txt"

task_check() {  # task_check TASK FILE "JSON prefix" extra args...
  task=$1 file=$2 want=$3
  shift 3
  out=$("$bin" bench tokenize --task "$task" --train_file "$file" --tokenizer_name "$dir/tok" --iters 1 --json \
    --threads 2 "$@" 2>&1) || fail "--task $task: $out"
  printf '%s\n' "$out" | grep -qF "$want" || fail "--task $task $*: wanted '$want', got: $out"
  for field in "\"task\": \"$task\"" '"examples_per_s": ' '"features_per_s": ' '"tokens_per_s": ' \
    '"single_thread_features_per_s": '; do
    printf '%s\n' "$out" | grep -qF "$field" || fail "--task $task $*: no $field in: $out"
  done
}
task_check glue "$dir/glue.jsonl" '{"examples": 2, "skipped": 0, "features": 2, "tokens": 14, '
task_check ner "$dir/ner.jsonl" '{"examples": 2, "skipped": 0, "features": 2, "tokens": 9, '
task_check swag "$dir/swag.jsonl" '{"examples": 1, "skipped": 0, "features": 4, "tokens": 43, '
task_check mlm "$dir/mlm.txt" '{"examples": 3, "skipped": 0, "features": 4, "tokens": 16, ' --max_seq_length 4
task_check mlm "$dir/mlm.txt" '{"examples": 3, "skipped": 0, "features": 2, "tokens": 16, ' --max_seq_length 16 \
  --line_by_line

# Text output of one of them: the task line and both thread lines.
out=$("$bin" bench tokenize --task glue --train_file "$dir/glue.jsonl" --tokenizer_name "$dir/tok" --iters 1 \
  --threads 2 2>&1) || fail "glue text run: $out"
printf '%s\n' "$out" | grep -q '^bench tokenize --task glue: ' || fail "glue text run: no header: $out"
printf '%s\n' "$out" | grep -q '^features 2  tokens 14 ' || fail "glue text run: wanted 'features 2  tokens 14': $out"
printf '%s\n' "$out" | grep -q '^2 threads: .*examples/s .*features/s .*tokens/s' || fail "glue text run: $out"
printf '%s\n' "$out" | grep -q '^1 thread: .*examples/s .*features/s .*tokens/s' || fail "glue text run: $out"

expect_error "--task: expected qa, glue, ner, mlm or swag, got 'pos'" bench tokenize --task pos \
  --train_file "$dir/glue.jsonl" --tokenizer_name "$dir/tok"
expect_error "glue.jsonl:1: expected a list of words \"tokens\"" bench tokenize --task ner \
  --train_file "$dir/glue.jsonl" --tokenizer_name "$dir/tok"
printf '{"sent1": "a", "sent2": "b", "ending0": "c"}\n' >"$dir/swag.jsonl"
expect_error "swag.jsonl:1: expected a string field \"ending1\"" bench tokenize --task swag \
  --train_file "$dir/swag.jsonl" --tokenizer_name "$dir/tok"
printf 'not json\n' >"$dir/glue.jsonl"
expect_error "glue.jsonl:1: expected one JSON object per line" bench tokenize --task glue \
  --train_file "$dir/glue.jsonl" --tokenizer_name "$dir/tok"

[ "$fails" -eq 0 ] && echo PASS
exit "$fails"

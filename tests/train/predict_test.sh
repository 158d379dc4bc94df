#!/usr/bin/env bash
# predict_test.sh CORETRAIN: `coretrain qa --do_predict --test_file` as run_qa: with test file == validation
# file the predict_*.json files equal the eval_*.json ones and the SQuAD scores agree (test_ prefix, as
# QuestionAnsweringTrainer.predict names them, plus predict_samples) in predict_results.json and all_results.json;
# the same file as CSV (pandas' answers repr) predicts the same; a test file without answers (JSON lines, CSV)
# gives predictions and speed metrics only; --max_predict_samples truncates; v2 writes predict_null_odds.json;
# 2 ranks (sharded eval loop) write the same predictions as 1.
source "$(dirname "$0")/ddp_lib.sh"
ct_setup predict "$1"

timeout -k 5 "$LIMIT" "$BIN" qa --demo --demo_train_paragraphs 12 --demo_eval_paragraphs 6 --max_steps 3 \
  --output_dir "$TMP/demo" > "$TMP/demo.log" 2>&1 || fail "demo run" "$TMP/demo.log"
DEV="$TMP/demo/demo_data/dev.json"
# The same examples as CSV (pandas writes answers as the repr of a dict) and without answers.
"$PY" - "$DEV" "$TMP" <<'PYEOF'
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = []
for a in d["data"]:
    for p in a["paragraphs"]:
        for q in p["qas"]:
            rows.append({"id": q["id"], "title": a["title"], "context": p["context"], "question": q["question"],
                         "answers": {"text": [x["text"] for x in q["answers"]],
                                     "answer_start": [x["answer_start"] for x in q["answers"]]}})
with open(sys.argv[2] + "/dev.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["id", "title", "context", "question", "answers"])
    w.writeheader()
    for r in rows:
        w.writerow({**r, "answers": str(r["answers"])})
with open(sys.argv[2] + "/noans.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["id", "title", "context", "question"])
    w.writeheader()
    for r in rows:
        w.writerow({k: v for k, v in r.items() if k != "answers"})
with open(sys.argv[2] + "/noans.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps({k: v for k, v in r.items() if k != "answers"}) + "\n")
PYEOF
COMMON=(qa --model_name_or_path "$TMP/demo" --max_seq_length 128 --doc_stride 32 --per_device_eval_batch_size 4)

timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --validation_file "$DEV" --test_file "$DEV" --do_eval --do_predict \
  --output_dir "$TMP/o1" > "$TMP/o1.log" 2>&1 || fail "eval + predict" "$TMP/o1.log"
O=$TMP/o1
cmp -s "$O/eval_predictions.json" "$O/predict_predictions.json" || fail "predict != eval predictions"
cmp -s "$O/eval_nbest_predictions.json" "$O/predict_nbest_predictions.json" || fail "predict != eval nbest"
[ "$(json "$O/predict_results.json" 'j["test_exact_match"] == json.load(open(sys.argv[1].replace("predict_", "eval_")))["eval_exact_match"]')" = True ] \
  || fail "test_exact_match != eval_exact_match" "$TMP/o1.log"
[ "$(json "$O/predict_results.json" 'sorted(j)')" = "['predict_samples', 'test_exact_match', 'test_f1', 'test_runtime', 'test_samples_per_second', 'test_steps_per_second']" ] \
  || fail "predict_results.json keys: $(json "$O/predict_results.json" 'sorted(j)')"
[ "$(json "$O/predict_results.json" 'j["predict_samples"] == json.load(open(sys.argv[1].replace("predict_", "eval_")))["eval_samples"]')" = True ] \
  || fail "predict_samples != eval_samples"
[ "$(json "$O/all_results.json" '"test_f1" in j and "eval_f1" in j and "predict_samples" in j')" = True ] \
  || fail "all_results.json lacks predict metrics"
grep -q '\*\*\*\*\* predict metrics \*\*\*\*\*' "$TMP/o1.log" || fail "no predict metrics printed" "$TMP/o1.log"

# CSV test file with answers: same predictions and scores.
timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --test_file "$TMP/dev.csv" --do_predict --output_dir "$TMP/o2" \
  > "$TMP/o2.log" 2>&1 || fail "predict on CSV" "$TMP/o2.log"
cmp -s "$O/predict_predictions.json" "$TMP/o2/predict_predictions.json" || fail "CSV predictions differ"
[ "$(json "$TMP/o2/predict_results.json" 'j["test_f1"]')" = "$(json "$O/predict_results.json" 'j["test_f1"]')" ] \
  || fail "CSV scores differ"

# No answers: predictions, no scores.
for f in noans.csv noans.jsonl; do
  timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --test_file "$TMP/$f" --do_predict --output_dir "$TMP/o_$f" \
    > "$TMP/o_$f.log" 2>&1 || fail "predict on $f" "$TMP/o_$f.log"
  cmp -s "$O/predict_predictions.json" "$TMP/o_$f/predict_predictions.json" || fail "$f predictions differ"
  [ "$(json "$TMP/o_$f/predict_results.json" 'sorted(j)')" = "['predict_samples', 'test_runtime', 'test_samples_per_second', 'test_steps_per_second']" ] \
    || fail "$f: predict_results.json keys $(json "$TMP/o_$f/predict_results.json" 'sorted(j)')"
done

# --max_predict_samples, and v2's null odds.
timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --test_file "$DEV" --do_predict --max_predict_samples 3 \
  --version_2_with_negative --output_dir "$TMP/o3" > "$TMP/o3.log" 2>&1 || fail "v2 predict" "$TMP/o3.log"
[ "$(json "$TMP/o3/predict_results.json" 'j["predict_samples"], len(json.load(open(sys.argv[1].replace("predict_results", "predict_predictions"))))')" = "(3, 3)" ] \
  || fail "--max_predict_samples 3" "$TMP/o3.log"
[ "$(json "$TMP/o3/predict_null_odds.json" 'len(j)')" = 3 ] || fail "no predict_null_odds.json" "$TMP/o3.log"
json "$TMP/o3/predict_results.json" 'j["test_exact"], j["test_HasAns_total"]' > /dev/null || fail "v2 keys"

# Two ranks: the sharded eval loop writes the same predictions.
pick_port
start_rank 0 2 0 2 "$TMP/r0.log" -- "${COMMON[@]}" --test_file "$DEV" --do_predict --output_dir "$TMP/o4"
P0=$LAST_PID
start_rank 1 2 1 2 "$TMP/r1.log" -- "${COMMON[@]}" --test_file "$DEV" --do_predict --output_dir "$TMP/o4"
P1=$LAST_PID
wait_rc $P0; R0=$RC
wait_rc $P1; R1=$RC
[ "$R0" = 0 ] && [ "$R1" = 0 ] || fail "2-rank predict (rc $R0, $R1)" "$TMP/r0.log" "$TMP/r1.log"
cmp -s "$O/predict_nbest_predictions.json" "$TMP/o4/predict_nbest_predictions.json" \
  || fail "2-rank nbest predictions differ from 1 rank"
echo "PASS"

#!/usr/bin/env bash
# task_step_test.sh CASE CORETRAIN CHECKPOINT_TOOL [GOLDEN_INPUTS_DIR]: one SGD step of a task command equals
# PyTorch's. CASE (glue, glue_wd, regression, multilabel, ner, mlm, swag) runs `coretrain <command>` on a committed tiny
# set (tests/tasks/data/step/) from a tiny BERT with dropout 0 (ct_checkpoint_tool init, seed 7):
# --optim sgd --max_steps 1, the whole set as one batch, no clipping (--max_grad_norm 0, as HF skips clipping
# for 0), no weight decay (glue_wd: glue with 0.01), a constant learning rate of 1e4. Checks:
#   - --dump_train_features (the step's features: labels, padding or packing, MLM's masks drawn for epoch 0)
#     equal the committed <case>_features.json, the inputs the golden was computed on;
#   - every tensor of the saved model is init - lr * g, g the golden gradient <case>_grad.safetensors that
#     scripts/task_step_golden.py computes in float64 with plain PyTorch (torch_reference.py's TaskModel, the
#     loss as the HF model and Trainer compute it), within 1e-4 of the tensor's largest |g| (float32 sums in
#     another order; float64 truth) plus 10x PyTorch's own float32 error there (large where a gradient is a
#     small difference of large terms) plus the rounding of init - lr * g (tools/compare_step.py).
# With GOLDEN_INPUTS_DIR the script only stores the case's init checkpoint and dumped features there, for
# scripts/task_step_golden.py (which regenerates the goldens: `/usr/bin/python3 scripts/task_step_golden.py
# build/release`).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../train/ddp_lib.sh"
CASE=$1
ct_setup "task_step_$CASE" "$2"
TOOL=$3
STORE=${4:-}
DATA=$HERE/data/step
# Large, so that the saved init - lr * g holds g to float32's precision even where g is 1e-6 of the weight (a
# tiny model's attention at init): the rounding of the sum would otherwise hide most of g.
LR=1e4

# The config of the tiny BERT: dropout 0 so that torch's step sees the same function; the labels' names and
# problem_type as the command would write them, so that the head loads as initialized (no fresh head).
config() {  # config EXTRA_JSON_FIELDS
  printf '{"model_type": "bert", "vocab_size": 391, "hidden_size": 32, "num_hidden_layers": 2,
 "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2,
 "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0%s}\n' "$1" > "$TMP/config.json"
}
GOLDEN=$CASE WD=0
case "$CASE" in
glue | glue_wd)
  # glue_wd: glue's step with --weight_decay 0.01, which HF's Trainer applies (torch.optim.SGD's L2 term) to
  # every parameter but biases and LayerNorm weights.
  if [ "$CASE" = glue_wd ]; then GOLDEN=glue WD=0.01; fi
  HEAD=seq-cls
  config ', "id2label": {"0": "no", "1": "yes"}, "label2id": {"no": 0, "yes": 1}'
  ARGS=(glue --train_file "$DATA/glue.csv" --validation_file "$DATA/glue.csv" --max_seq_length 16)
  ;;
regression)
  HEAD=seq-cls
  config ', "num_labels": 1, "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}, "problem_type": "regression"'
  ARGS=(glue --train_file "$DATA/regression.json" --validation_file "$DATA/regression.json" --max_seq_length 12)
  ;;
multilabel)
  HEAD=seq-cls
  config ', "id2label": {"0": "greet", "1": "place"}, "label2id": {"greet": 0, "place": 1}, "problem_type": "multi_label_classification"'
  ARGS=(classification --train_file "$DATA/multilabel.json" --validation_file "$DATA/multilabel.json"
        --text_column_names title,body --label_column_name tags --max_seq_length 12)
  ;;
ner)
  HEAD=token-cls
  config ', "id2label": {"0": "B-LOC", "1": "B-PER", "2": "O"}, "label2id": {"B-LOC": 0, "B-PER": 1, "O": 2}'
  # run_ner's default: no padding to max_seq_length, so the rows are packed.
  ARGS=(ner --train_file "$DATA/ner.json" --validation_file "$DATA/ner.json" --max_seq_length 16)
  ;;
mlm)
  HEAD=mlm
  config ''
  ARGS=(mlm --train_file "$DATA/mlm.txt" --validation_file "$DATA/mlm.txt" --max_seq_length 16
        --mlm_probability 0.3)
  ;;
swag)
  HEAD=multiple-choice
  config ', "initializer_range": 0.2'
  ARGS=(swag --train_file "$DATA/swag.csv" --validation_file "$DATA/swag.csv" --max_seq_length 12)
  ;;
*) fail "unknown case $CASE" ;;
esac

MODEL=$TMP/model
mkdir -p "$MODEL"
"$TOOL" init "$TMP/config.json" "$MODEL" "$HEAD" 7 > "$TMP/tool.log" 2>&1 || fail "ct_checkpoint_tool init" "$TMP/tool.log"
cp "$HERE/../text/data/tokenizers/bert.json" "$MODEL/tokenizer.json"
timeout -k 5 "$LIMIT" "$BIN" "${ARGS[@]}" --model_name_or_path "$MODEL" --do_train --max_steps 1 --optim sgd \
  --learning_rate "$LR" --lr_scheduler_type constant --per_device_train_batch_size 64 --max_grad_norm 0 \
  --weight_decay "$WD" --seed 5 --save_strategy no --disable_tqdm --dump_train_features "$TMP/features.json" \
  --output_dir "$TMP/out" > "$TMP/run.log" 2>&1 || fail "coretrain ${ARGS[*]}" "$TMP/run.log"

# Packed rows compute no padding: the throughput line counts every batch position real.
if [ "$CASE" = ner ]; then
  grep -qE "Throughput on real tokens \(rank 0\): [0-9]+ tokens/s, ([0-9]+) of \1 batch positions real \(100%, packed" \
    "$TMP/run.log" || fail "ner's throughput line does not count its packed batch as all real" "$TMP/run.log"
fi

if [ -n "$STORE" ]; then
  mkdir -p "$STORE"
  cp "$MODEL/config.json" "$STORE/${CASE}_config.json"
  cp "$MODEL/model.safetensors" "$STORE/${CASE}_init.safetensors"
  cp "$TMP/features.json" "$STORE/${CASE}_features.json"
  echo "$CASE: stored the init checkpoint and features in $STORE"
  exit 0
fi

"$PY" - "$TMP/features.json" "$DATA/${GOLDEN}_features.json" <<'EOF' || fail "the dumped training features differ from the golden's"
import json, sys
a, b = (json.load(open(p))["features"] for p in sys.argv[1:])
if a != b:
    bad = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    print(f"{len(a)} features dumped, {len(b)} in the golden; the first difference at feature {bad}:")
    print(" dumped:", json.dumps(a[bad]) if bad < len(a) else None)
    print(" golden:", json.dumps(b[bad]) if bad < len(b) else None)
    sys.exit(1)
EOF
"$PY" "$HERE/tools/compare_step.py" "$MODEL/model.safetensors" "$TMP/out/model.safetensors" \
  "$DATA/${GOLDEN}_grad.safetensors" "$LR" 1e-4 "$WD" || fail "$CASE: the step differs from PyTorch's" "$TMP/run.log"
echo "PASS $CASE"

# Shared by the task command tests (sourced after tests/train/ddp_lib.sh, with HERE, TMP, TOOL and PY set).

# A tiny BERT checkpoint with a HEAD (ct_checkpoint_tool init, seed 7) and the fixture WordPiece tokenizer.
model() {  # model DIR HEAD [POSITIONS]
  mkdir -p "$1"
  printf '{"model_type":"bert","vocab_size":391,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":2,%s%s}\n' \
    '"intermediate_size":64,"type_vocab_size":2,"max_position_embeddings":' "${3:-64}" > "$TMP/config.json"
  "$TOOL" init "$TMP/config.json" "$1" "$2" 7 > "$TMP/init.log" 2>&1 || fail "ct_checkpoint_tool init $2" "$TMP/init.log"
  cp "$HERE/../text/data/tokenizers/bert.json" "$1/tokenizer.json"
}

# Two runs end alike: every metric of all_results.json A equal in B (timings aside), at least 3 compared.
same_metrics() {  # same_metrics A_JSON B_JSON
  "$PY" - "$1" "$2" <<'PYEOF' || fail "$1 and $2 differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = [k for k in a if "runtime" not in k and "per_second" not in k and k != "total_flos"]
diff = [(k, a[k], b.get(k)) for k in keys if a[k] != b.get(k)]
print("compared", len(keys), "metrics" + (f"; differ: {diff}" if diff else ""))
sys.exit(1 if diff or len(keys) < 3 else 0)
PYEOF
}

#!/usr/bin/env bash
# `coretrain qa --model_name_or_path org/tiny-bert` against the fake Hub (fake_hub.py on loopback, HF_ENDPOINT):
# a tiny BERT written by `coretrain qa --demo` is served as a repo; training downloads it into the Hub cache and
# runs; the same command with HF_HUB_OFFLINE=1 makes no request; offline with an empty cache names the file;
# a sharded checkpoint (model.safetensors.index.json + 2 shards) loads; a pytorch_model.bin-only repo is refused
# with the conversion recipe; a gated repo needs --token; a RoBERTa repo with only vocab.json + merges.txt
# trains and saves tokenizer.json; two ranks (torchrun-style env) download each file once;
# `coretrain hub download` prefills a cache an offline job runs from.
#   qa_hub_test.sh CORETRAIN_BIN
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../train/ddp_lib.sh"
ct_setup qa_hub "$1"
unset HF_HUB_OFFLINE TRANSFORMERS_OFFLINE HF_TOKEN HUGGING_FACE_HUB_TOKEN TRANSFORMERS_CACHE \
  PYTORCH_TRANSFORMERS_CACHE PYTORCH_PRETRAINED_BERT_CACHE HUGGINGFACE_HUB_CACHE 2>/dev/null || true
export HF_HOME="$TMP/hf_home"

# The model: one step of the demo writes an HF folder (config.json, model.safetensors, tokenizer files).
timeout -k 5 "$LIMIT" "$BIN" qa --demo --max_steps 1 --output_dir "$TMP/demo" --demo_train_paragraphs 20 \
  --demo_eval_paragraphs 5 > "$TMP/demo.log" 2>&1 || fail "the demo did not write a model" "$TMP/demo.log"
HUB="$TMP/hub"
mkdir -p "$HUB/org/tiny-bert" "$HUB/org/sharded" "$HUB/org/pt-only" "$HUB/org/gated"
for f in config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json; do
  cp "$TMP/demo/$f" "$HUB/org/tiny-bert/"
  cp "$TMP/demo/$f" "$HUB/org/gated/"
done
cp "$TMP/demo/"{config.json,vocab.txt} "$HUB/org/sharded/"
cp "$TMP/demo/"{config.json,vocab.txt} "$HUB/org/pt-only/"
echo "not a pickle" > "$HUB/org/pt-only/pytorch_model.bin"
# Two shards + index, as save_pretrained(max_shard_size=...) writes them.
"$PY" - "$TMP/demo/model.safetensors" "$HUB/org/sharded" <<'PYEOF'
import json, struct, sys
src, out = sys.argv[1], sys.argv[2]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
header.pop("__metadata__", None)
names = sorted(header)
weight_map = {}
for i, part in enumerate((names[: len(names) // 2], names[len(names) // 2:])):
    fname = "model-%05d-of-00002.safetensors" % (i + 1)
    h, body, off = {"__metadata__": {"format": "pt"}}, b"", 0
    for k in part:
        b, e = header[k]["data_offsets"]
        h[k] = {"dtype": header[k]["dtype"], "shape": header[k]["shape"], "data_offsets": [off, off + e - b]}
        body += data[b:e]
        off += e - b
        weight_map[k] = fname
    hj = json.dumps(h).encode()
    hj += b" " * (-len(hj) % 8)
    open(out + "/" + fname, "wb").write(struct.pack("<Q", len(hj)) + hj + body)
json.dump({"metadata": {"total_size": len(data)}, "weight_map": weight_map},
          open(out + "/model.safetensors.index.json", "w"), indent=2)
PYEOF
echo '{"gated": {"org/gated": "hf_e2e_token"}}' > "$HUB/_hub.json"

"$PY" "$HERE/fake_hub.py" "$HUB" "$TMP/port" > "$TMP/hub.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -f "$TMP/port" ] && break; sleep 0.1; done
[ -f "$TMP/port" ] || fail "fake_hub.py did not start" "$TMP/hub.log"
export HF_ENDPOINT="http://127.0.0.1:$(cut -d' ' -f1 "$TMP/port")"
requests() { "$PY" -c "import json,urllib.request; print(len(json.load(urllib.request.urlopen('$HF_ENDPOINT/_stats'))))"; }
heads() {  # Hub HEADs of a resolve path
  "$PY" -c "import json,urllib.request; print(sum(1 for r in json.load(urllib.request.urlopen('$HF_ENDPOINT/_stats')) if r['method']=='HEAD' and r['path']=='$1'))"
}
cdn_gets() {  # CDN GETs of a repo's LFS file
  "$PY" -c "import json,urllib.request; print(sum(1 for r in json.load(urllib.request.urlopen('$HF_ENDPOINT/_stats')) if r['server']=='cdn' and '$1' in urllib.parse.unquote(r['path'])))"
}
DATA="$TMP/demo/demo_data"
qa() {  # qa LOG ARGS...: a 2-step training run on the demo data
  local log=$1
  shift
  timeout -k 5 "$LIMIT" "$BIN" qa --train_file "$DATA/train.json" --do_train --max_steps 2 \
    --per_device_train_batch_size 4 --max_seq_length 128 --doc_stride 32 --overwrite_output_dir \
    --save_strategy no "$@" > "$log" 2>&1
}

# 1. Online: downloads into the cache in huggingface_hub's layout, trains.
export HF_HUB_CACHE="$TMP/cache"
qa "$TMP/online.log" --model_name_or_path org/tiny-bert --output_dir "$TMP/out1" ||
  fail "training from org/tiny-bert failed" "$TMP/online.log"
[ -f "$TMP/out1/model.safetensors" ] || fail "no model written" "$TMP/online.log"
REPO="$TMP/cache/models--org--tiny-bert"
COMMIT=$(cat "$REPO/refs/main")
[ ${#COMMIT} -eq 40 ] || fail "refs/main is '$COMMIT'"
for f in config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json; do
  link=$(readlink "$REPO/snapshots/$COMMIT/$f") || fail "snapshots/$COMMIT/$f is not a symlink"
  case "$link" in ../../blobs/*) ;; *) fail "snapshots/$COMMIT/$f -> $link is not ../../blobs/<etag>" ;; esac
  cmp -s "$REPO/snapshots/$COMMIT/$f" "$TMP/demo/$f" || fail "$f differs from the served file"
done
grep -q "org/tiny-bert (revision main): $REPO/snapshots/$COMMIT" "$TMP/online.log" ||
  fail "the log does not say where the model came from" "$TMP/online.log"

# 2. Offline: the same command reads the cache and makes no request at all.
before=$(requests)
HF_HUB_OFFLINE=1 qa "$TMP/offline.log" --model_name_or_path org/tiny-bert --output_dir "$TMP/out2" ||
  fail "the offline rerun failed" "$TMP/offline.log"
[ "$(requests)" = "$before" ] || fail "the offline run made $(( $(requests) - before )) request(s)"
cmp -s "$TMP/out1/model.safetensors" "$TMP/out2/model.safetensors" ||
  fail "online and offline runs trained different weights"
TRANSFORMERS_OFFLINE=1 qa "$TMP/offline2.log" --model_name_or_path org/tiny-bert --output_dir "$TMP/out2b" ||
  fail "TRANSFORMERS_OFFLINE=1 rerun failed" "$TMP/offline2.log"
[ "$(requests)" = "$before" ] || fail "the TRANSFORMERS_OFFLINE run made requests"

# 3. Offline with an empty cache: one line naming the flag, the file and the switch.
if HF_HUB_OFFLINE=1 qa "$TMP/offline_empty.log" --model_name_or_path org/tiny-bert --output_dir "$TMP/out3" \
  --cache_dir "$TMP/empty_cache"; then fail "offline with an empty cache succeeded" "$TMP/offline_empty.log"; fi
grep -q "error: --model_name_or_path: config.json of org/tiny-bert at revision main is not in the cache .*HF_HUB_OFFLINE" \
  "$TMP/offline_empty.log" || fail "unclear offline error" "$TMP/offline_empty.log"
[ ! -d "$TMP/empty_cache/models--org--tiny-bert/blobs" ] || fail "offline run wrote blobs"

# 3b. `coretrain hub download` fills a cache ahead of a job; the offline job then runs from it.
snap=$(timeout -k 5 "$LIMIT" "$BIN" hub download org/tiny-bert --cache-dir "$TMP/prefill" 2> "$TMP/prefill.log") ||
  fail "coretrain hub download failed" "$TMP/prefill.log"
[ -f "$snap/model.safetensors" ] && [ -f "$snap/config.json" ] || fail "hub download printed '$snap'" "$TMP/prefill.log"
one=$(timeout -k 5 "$LIMIT" "$BIN" hub download org/tiny-bert vocab.txt --cache-dir "$TMP/prefill" 2>> "$TMP/prefill.log")
[ "$one" = "$snap/vocab.txt" ] || fail "hub download FILE printed '$one'" "$TMP/prefill.log"
HF_HUB_OFFLINE=1 qa "$TMP/prefilled.log" --model_name_or_path org/tiny-bert --output_dir "$TMP/out3b" \
  --cache_dir "$TMP/prefill" || fail "offline run from a prefilled cache failed" "$TMP/prefilled.log"

# 4. --cache_dir wins over HF_HUB_CACHE; a sharded checkpoint loads and trains like the single file.
qa "$TMP/sharded.log" --model_name_or_path org/sharded --output_dir "$TMP/out4" --cache_dir "$TMP/cache2" ||
  fail "the sharded checkpoint failed" "$TMP/sharded.log"
[ -L "$TMP/cache2/models--org--sharded/snapshots/$(cat "$TMP/cache2/models--org--sharded/refs/main")/model-00002-of-00002.safetensors" ] ||
  fail "shard 2 is not in --cache_dir" "$TMP/sharded.log"
cmp -s "$TMP/out1/model.safetensors" "$TMP/out4/model.safetensors" ||
  fail "sharded and single-file starts trained different weights"

# 5. PyTorch pickles only: refused with the conversion recipe.
if qa "$TMP/pt.log" --model_name_or_path org/pt-only --output_dir "$TMP/out5"; then
  fail "a pytorch_model.bin-only repo was accepted" "$TMP/pt.log"
fi
grep -q "error: --model_name_or_path: org/pt-only has pytorch_model.bin but no model.safetensors.*docs/hub.md" \
  "$TMP/pt.log" || fail "unclear pytorch_model.bin error" "$TMP/pt.log"

# 6. Gated: without a token the error says what to do; --token (or HF_TOKEN) opens it.
if qa "$TMP/gated.log" --model_name_or_path org/gated --output_dir "$TMP/out6"; then
  fail "a gated repo opened without a token" "$TMP/gated.log"
fi
grep -q "error: --model_name_or_path: model repo org/gated is gated.*--token.*HF_TOKEN" "$TMP/gated.log" ||
  fail "unclear gated-repo error" "$TMP/gated.log"
qa "$TMP/gated2.log" --model_name_or_path org/gated --output_dir "$TMP/out6" --token hf_e2e_token ||
  fail "--token did not open the gated repo" "$TMP/gated2.log"
# A path that does not exist and is no repo id.
if qa "$TMP/path.log" --model_name_or_path ./no/such/dir --output_dir "$TMP/out7"; then fail "bad path accepted"; fi
grep -q "error: --model_name_or_path: ./no/such/dir is neither a local path" "$TMP/path.log" ||
  fail "unclear error for a missing folder" "$TMP/path.log"

# 6b. A RoBERTa repo with only the slow tokenizer's files (vocab.json + merges.txt: byte-level BPE over GPT-2's
# 256 byte symbols after RoBERTa's specials, no merges): they are fetched, converted as transformers converts
# them (RobertaProcessing, from config.json's model_type), and the output folder gets tokenizer.json.
ROB="$TMP/rob"
mkdir -p "$ROB" "$HUB/org/tiny-roberta"
"$PY" - "$HERE/../text/data/tokenizers/gpt2.json" "$ROB" <<'PYEOF'
import json, sys
g = json.load(open(sys.argv[1]))
vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
vocab.update({t: i + 4 for t, i in g["model"]["vocab"].items() if i < 256})
vocab["<mask>"] = 260
out = sys.argv[2]
json.dump(vocab, open(out + "/vocab.json", "w"))
open(out + "/merges.txt", "w").write("#version: 0.2\n")
json.dump({"model_max_length": 512}, open(out + "/tokenizer_config.json", "w"))
json.dump({"model_type": "roberta", "vocab_size": 261, "hidden_size": 32, "num_hidden_layers": 1,
           "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 160,
           "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2},
          open(out + "/config.json", "w"))
PYEOF
qa "$TMP/rob0.log" --config_name "$ROB" --output_dir "$TMP/rob_out" || fail "the local RoBERTa did not train" "$TMP/rob0.log"
cp "$TMP/rob_out/"{config.json,model.safetensors} "$ROB/"{vocab.json,merges.txt,tokenizer_config.json} \
  "$HUB/org/tiny-roberta/"
qa "$TMP/rob.log" --model_name_or_path org/tiny-roberta --output_dir "$TMP/out_rob" ||
  fail "training from org/tiny-roberta failed" "$TMP/rob.log"
RSNAP="$HF_HUB_CACHE/models--org--tiny-roberta/snapshots/$(cat "$HF_HUB_CACHE/models--org--tiny-roberta/refs/main")"
for f in vocab.json merges.txt tokenizer_config.json; do
  [ -f "$RSNAP/$f" ] || fail "org/tiny-roberta: $f was not fetched" "$TMP/rob.log"
done
[ -f "$TMP/out_rob/tokenizer.json" ] || fail "org/tiny-roberta: no tokenizer.json saved" "$TMP/rob.log"
grep -q '"RobertaProcessing"' "$TMP/out_rob/tokenizer.json" ||
  fail "org/tiny-roberta: the saved tokenizer is not RoBERTa's" "$TMP/out_rob/tokenizer.json"

# 7. Two ranks (torchrun-style, one node) on a fresh cache: local rank 0 downloads, each file once.
export HF_HUB_CACHE="$TMP/cache_ddp"
pick_port
gets_before=$(cdn_gets org/tiny-bert/model.safetensors)
heads_before=$(heads /org/tiny-bert/resolve/main/config.json)
common=(qa --model_name_or_path org/tiny-bert --train_file "$DATA/train.json" --do_train --max_steps 2
        --per_device_train_batch_size 2 --max_seq_length 128 --doc_stride 32 --output_dir "$TMP/out_ddp"
        --save_strategy no --ddp_backend gloo)
start_rank 0 2 0 2 "$TMP/r0.log" -- "${common[@]}"
p0=$LAST_PID
start_rank 1 2 1 2 "$TMP/r1.log" -- "${common[@]}"
p1=$LAST_PID
wait_rc $p0; rc0=$RC
wait_rc $p1; rc1=$RC
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "2-rank run from the Hub: exit $rc0/$rc1" "$TMP/r0.log" "$TMP/r1.log"
[ "$(( $(cdn_gets org/tiny-bert/model.safetensors) - gets_before ))" = 1 ] ||
  fail "model.safetensors downloaded $(( $(cdn_gets org/tiny-bert/model.safetensors) - gets_before )) times by 2 ranks"
# Only local rank 0 asked the Hub; rank 1 read the node's cache without a request.
[ "$(( $(heads /org/tiny-bert/resolve/main/config.json) - heads_before ))" = 1 ] ||
  fail "config.json was asked for $(( $(heads /org/tiny-bert/resolve/main/config.json) - heads_before )) times by 2 ranks"
echo "PASS: qa from the fake Hub (online, offline, sharded, pytorch-only, gated, RoBERTa vocab.json + merges.txt, 2 ranks)"

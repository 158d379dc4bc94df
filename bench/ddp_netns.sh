#!/bin/sh
# ddp_netns.sh [CORETRAIN] [STEPS]: data-parallel `coretrain qa` training throughput of BERT-base shapes with two
# ranks on two "nodes" (network namespaces, tests/comm/netns_lib.sh) joined through a link shaped to 10 Gbit/s
# in both directions (tc tbf on each node's veth), against the same two ranks on one node (shared memory). Prints
# train_samples_per_second (from train_results.json) of both and the ratio two nodes / one node (target >= 0.9).
#
# Model: BERT-base from random init (--config_name: hidden 768, 12 layers, 12 heads, intermediate 3072, vocab
# 30522, 512 positions; 110M parameters, so 440 MB of f32 gradients all-reduced per step). Data: the built-in
# demo's generated train.json and its vocab as tokenizer (written once by a 1-step demo run). Sequence length 384
# (--pad_to_max_length true), global batch 4 (2 ranks x 2), STEPS optimizer steps (default 4; each step takes
# seconds on a small machine), OMP_NUM_THREADS=1 per rank (THREADS=...), --ddp_backend ccl.
#
# Environment knobs: LAUNCH=mpi (default: mpiexec through deploy/netns-launch, UCX_TLS=tcp,self between the
# nodes; plain mpiexec -n 2 on one node) or LAUNCH=env (torchrun-style variables per rank; Gloo between nodes);
# RATE=10gbit (tc tbf rate; RATE=none leaves the link unshaped); REPEAT=1 (pairs of runs, alternating; the best
# of each is compared); THREADS=1; KEEP=1 keeps the scratch folder (logs, outputs) and prints its path.
# Needs root (network namespaces); not part of ctest. Example: sudo bench/ddp_netns.sh build/release/apps/coretrain 4
set -u
here=$(cd "$(dirname "$0")" && pwd)
coretrain=${1:-$here/../build/release/apps/coretrain}
steps=${2:-4}
LAUNCH=${LAUNCH:-mpi}
RATE=${RATE:-10gbit}
REPEAT=${REPEAT:-1}
THREADS=${THREADS:-1}
case "$LAUNCH" in mpi | env) ;; *) echo "ddp_netns.sh: LAUNCH must be mpi or env, got '$LAUNCH'" >&2; exit 2 ;; esac
[ -x "$coretrain" ] || { echo "ddp_netns.sh: '$coretrain' is not an executable (build it, or pass its path)" >&2; exit 2; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
NETNS_LAUNCH="$here/../deploy/netns-launch"
. "$here/../tests/comm/netns_lib.sh"
# Away from the subnets and ports tests/comm's netns tests use (10.100-249.x, 20000-31999), like netns_qa.sh.
NETNS_SUBNET="10.$((250 + NETNS_ID % 5)).$(((NETNS_ID / 5) % 250))"
port=$((12000 + NETNS_ID % 8000))
export NETNS_RUN_TIMEOUT=${NETNS_RUN_TIMEOUT:-3600}

netns_setup 2 || { echo "ddp_netns.sh: namespace setup failed" >&2; exit 1; }
work=$(mktemp -d /tmp/ct-ddp-netns.XXXXXX)
bench_cleanup() {
  netns_cleanup
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
  return 0
}
trap bench_cleanup EXIT
if [ "$RATE" != none ]; then
  for k in 0 1; do
    ip netns exec "${NETNS_PREFIX}$k" tc qdisc add dev "v${NETNS_ID}n$k" root tbf rate "$RATE" burst 1mb \
      latency 10ms || { echo "ddp_netns.sh: tc tbf failed" >&2; exit 1; }
  done
fi

export OMP_NUM_THREADS=$THREADS HF_DATASETS_CACHE="$work/cache"
# BERT-base shapes.
mkdir -p "$work/bert-base"
cat > "$work/bert-base/config.json" <<'EOF'
{
  "architectures": ["BertForQuestionAnswering"],
  "model_type": "bert",
  "hidden_size": 768,
  "num_hidden_layers": 12,
  "num_attention_heads": 12,
  "intermediate_size": 3072,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "attention_probs_dropout_prob": 0.1,
  "max_position_embeddings": 512,
  "type_vocab_size": 2,
  "vocab_size": 30522,
  "initializer_range": 0.02,
  "layer_norm_eps": 1e-12,
  "pad_token_id": 0
}
EOF
# Generated data and its vocab: one quick demo run.
"$coretrain" qa --demo --output_dir "$work/demo" --demo_train_paragraphs 100 --demo_eval_paragraphs 10 \
  --max_steps 1 --disable_tqdm > "$work/demo.log" 2>&1 || {
  echo "ddp_netns.sh: the demo run that generates the data failed:" >&2
  tail -n 20 "$work/demo.log" >&2
  exit 1
}
data="$work/demo/demo_data"
args="qa --config_name $work/bert-base --tokenizer_name $data --train_file $data/train.json --do_train
  --max_seq_length 384 --doc_stride 128 --pad_to_max_length true --per_device_train_batch_size 2
  --max_steps $steps --logging_steps 1 --disable_tqdm --save_strategy no --overwrite_output_dir --ddp_backend ccl"

sps() {
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["train_samples_per_second"])' \
    "$1/train_results.json" 2>/dev/null
}

# run_one_node TAG / run_two_nodes TAG: one run each; prints samples/s, or fails with the log's tail.
run_one_node() {
  out="$work/one.$1"
  case "$LAUNCH" in
    mpi) timeout -k 5 "$NETNS_RUN_TIMEOUT" mpiexec -n 2 -genv OMP_NUM_THREADS "$THREADS" "$coretrain" $args \
           --output_dir "$out" > "$out.log" 2>&1 ;;
    env) r1=0
         for r in 0 1; do
           RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port + 1)) \
             timeout -k 5 "$NETNS_RUN_TIMEOUT" "$coretrain" $args --output_dir "$out" >> "$out.log" 2>&1 &
           eval "p$r=\$!"
         done
         wait "$p0" || r1=1
         wait "$p1" || r1=1
         [ "$r1" -eq 0 ] ;;
  esac || { echo "ddp_netns.sh: the one-node run failed:" >&2; tail -n 20 "$out.log" >&2; exit 1; }
  sps "$out"
}
run_two_nodes() {
  out="$work/two.$1"
  case "$LAUNCH" in
    mpi) netns_mpiexec 2 1 -genv OMP_NUM_THREADS "$THREADS" "$coretrain" $args --output_dir "$out" > "$out.log" 2>&1 ;;
    env) netns_envlaunch 2 1 "$port" "$coretrain" $args --output_dir "$out" > "$out.log" 2>&1 ;;
  esac || { echo "ddp_netns.sh: the two-node run failed:" >&2; tail -n 20 "$out.log" >&2; exit 1; }
  sps "$out"
}

echo "BERT-base (random init), seq 384, global batch 4 = 2 ranks x 2, $steps steps, $THREADS thread(s) per rank," \
  "--ddp_backend ccl, launch: $LAUNCH; link between the two nodes: ${RATE} (tc tbf, both directions)"
best1=0
best2=0
rep=1
while [ "$rep" -le "$REPEAT" ]; do
  s1=$(run_one_node "$rep") || exit 1
  before=$(netns_tx_bytes 0)
  s2=$(run_two_nodes "$rep") || exit 1
  sent=$(($(netns_tx_bytes 0) - before))
  echo "run $rep: one node $s1 samples/s, two nodes $s2 samples/s (node 0's veth sent $((sent / 1000000)) MB)"
  best1=$("$PY" -c "print(max($best1, $s1))")
  best2=$("$PY" -c "print(max($best2, $s2))")
  rep=$((rep + 1))
done
params=$(sed -n 's/.*Number of trainable parameters = \([0-9]*\).*/\1/p' "$work/two.1.log" | head -n 1)
need=$((${params:-0} * 4 * steps))
if [ "$sent" -lt "$need" ]; then
  echo "warning: node 0's veth sent $sent bytes, less than the gradients' $need: the inter-node leg took a shortcut"
fi
if [ "$RATE" != none ]; then
  echo "shaper on node 0: $(ip netns exec "${NETNS_PREFIX}0" tc -s qdisc show dev "v${NETNS_ID}n0" | grep -m1 Sent)"
fi
"$PY" - "$best1" "$best2" "$work/one.1" "$work/two.1" <<'EOF'
import json, sys
one, two = float(sys.argv[1]), float(sys.argv[2])
# Same data, seed and global batch: both layouts must train the same model (a cheap correctness check).
loss = [[e["loss"] for e in json.load(open(d + "/trainer_state.json"))["log_history"] if "loss" in e]
        for d in sys.argv[3:5]]
same = len(loss[0]) == len(loss[1]) and all(abs(a - b) <= 1e-4 for a, b in zip(*loss))
print(f"losses per step, one node {loss[0]}, two nodes {loss[1]}: {'equal' if same else 'DIFFERENT'}")
ratio = two / one if one > 0 else 0.0
print(f"train_samples_per_second: one node (2 ranks) {one:.3f}, two nodes (1 rank each) {two:.3f}")
print(f"ratio two nodes / one node: {ratio:.3f} ({'meets' if ratio >= 0.9 else 'below'} the 0.9 target)")
EOF

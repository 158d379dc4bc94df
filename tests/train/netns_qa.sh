#!/bin/sh
# netns_qa.sh MODE CORETRAIN: `coretrain qa` trained data-parallel across two "nodes" that are network
# namespaces (tests/comm/netns_lib.sh), 2 ranks each, on the built-in demo (6 steps, global batch 8):
#   MODE mpi: mpiexec -f hostfile -n 4 -ppn 2 through deploy/netns-launch, UCX_TLS=tcp,self, --ddp_backend ccl
#             (shared memory inside a node, MPI between nodes), --bf16 (runs f32 with one warning on CPUs
#             without AVX512-BF16/AMX);
#   MODE env: one process per rank with RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE/MASTER_ADDR (node 0's
#             address)/MASTER_PORT, started inside its node's namespace (--ddp_backend ccl: Gloo between nodes).
# Checks: exit 0 (bounded: a hang, e.g. MPICH/UCX's MPI_Finalize deadlock across namespaces, fails the test), a
# complete output folder (model.safetensors, trainer_state.json at global_step 6, eval_predictions.json), a rank
# map of 2 nodes x 2 ranks, node 0's veth TX counter grown by at least the gradient volume (parameters x 4 bytes
# x steps: between 2 nodes each node sends half the gradient to be summed and returns the other half summed,
# so less means the gradients took a shared-memory shortcut), and the logged losses equal, within 1e-4, those
# of one process with the same global batch (--per_device_train_batch_size 8).
# MODE mpi also runs the hostfile that puts every rank on one host while -ppn says 2 per node
# ("node0:4", -n 4 -ppn 2): Hydra merges it into one proxy with MPI_LOCALNRANKS=4, so the job must run as
# 1 node x 4 ranks and give the same losses.
# Last, a job whose rank 0 fails at the very end must exit non-zero, on every node, within seconds.
# Needs root for the namespaces; exits 77 (skip) without it.
set -u
mode=${1:-}
coretrain=${2:-}
case "$mode" in mpi | env) ;; *) echo "usage: netns_qa.sh mpi|env CORETRAIN"; exit 2 ;; esac
[ -x "$coretrain" ] || { echo "FAIL: '$coretrain' is not an executable"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
NETNS_LAUNCH="$here/../../deploy/netns-launch"
. "$here/../comm/netns_lib.sh"
# Namespace/veth names are unique per run (ctn<id>), and each run's subnet lives only inside its own namespaces;
# still, keep away from tests/comm's subnets (10.100-249.x) and store ports (20000-31999) altogether.
NETNS_SUBNET="10.$((250 + NETNS_ID % 5)).$(((NETNS_ID / 5) % 250))"
port=$((12000 + NETNS_ID % 8000))
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

netns_setup 2 || { echo "FAIL: namespace setup"; exit 1; }
work=$(mktemp -d /tmp/ct-netns-qa.XXXXXX)
qa_cleanup() {
  netns_cleanup
  rm -rf "$work"
  return 0
}
trap qa_cleanup EXIT

steps=6
common="qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --max_steps $steps --logging_steps 1
  --disable_tqdm --pad_to_max_length true --ddp_backend ccl --bf16"
export OMP_NUM_THREADS=1 CORETRAIN_COMM_TIMEOUT=60 NETNS_RUN_TIMEOUT=90

fail() {
  echo "FAIL: $1"
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "--- last lines of $(basename "$f"):"; tail -n 25 "$f"; }
  done
  exit 1
}

# compare_losses DIR LOG: DIR's losses equal the reference's within 1e-4 (log_history rounds to 4 decimals).
compare_losses() {
  "$PY" - "$work/ref" "$1" <<'EOF' || fail "losses differ from the 1-process run with the same global batch" "$2"
import json, sys
def losses(d):
    h = json.load(open(d + "/trainer_state.json"))["log_history"]
    return {e["step"]: e["loss"] for e in h if "loss" in e}
ref, got = losses(sys.argv[1]), losses(sys.argv[2])
bad = [s for s in ref if s not in got or abs(ref[s] - got[s]) > 1e-4 + 1e-9]
print("losses, 1 process:", [ref[s] for s in sorted(ref)])
print("losses, this run: ", [got.get(s) for s in sorted(ref)])
if len(ref) != 6 or len(got) != len(ref) or bad:
    print("differing steps:", bad, "(steps logged:", sorted(ref), "vs", sorted(got), ")")
    sys.exit(1)
EOF
}

# check_output DIR LOG: the files HF's run_qa writes, trained to the last step.
check_output() {
  for f in model.safetensors trainer_state.json eval_predictions.json train_results.json config.json; do
    [ -s "$1/$f" ] || fail "$1/$f is missing" "$2"
  done
  gs=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["global_step"])' "$1/trainer_state.json")
  [ "$gs" = "$steps" ] || fail "trainer_state.json global_step is $gs, expected $steps" "$2"
}

# The reference: one process, the same global batch, its own feature cache.
HF_DATASETS_CACHE="$work/cache-ref" timeout -k 5 "$NETNS_RUN_TIMEOUT" "$coretrain" $common \
  --output_dir "$work/ref" --per_device_train_batch_size 8 > "$work/ref.log" 2>&1 ||
  fail "the 1-process reference run failed" "$work/ref.log"
check_output "$work/ref" "$work/ref.log"

# The 2 x 2 run. Both nodes get the same --output_dir and feature cache (one shared file system, like a shared
# home directory): local rank 0 of each node writes the demo data and the features there.
out="$work/ddp"
log="$work/ddp.log"
export HF_DATASETS_CACHE="$work/cache-ddp"
before=$(netns_tx_bytes 0)
t0=$(date +%s)
case "$mode" in
  mpi) netns_mpiexec 2 2 -genv OMP_NUM_THREADS 1 "$coretrain" $common --output_dir "$out" \
         --per_device_train_batch_size 2 > "$log" 2>&1 ;;
  env) netns_envlaunch 2 2 "$port" "$coretrain" $common --output_dir "$out" \
         --per_device_train_batch_size 2 > "$log" 2>&1 ;;
esac
run_rc=$?
after=$(netns_tx_bytes 0)
echo "2 nodes x 2 ranks ($mode): exit $run_rc after $(($(date +%s) - t0)) s"
[ "$run_rc" -eq 0 ] || fail "the 2 x 2 run exited $run_rc (124: it hung until the ${NETNS_RUN_TIMEOUT} s bound)" "$log"
check_output "$out" "$log"

# Rank map (rank 0 logs it): ranks 0,1 on node 0 and 2,3 on node 1.
grep -q "4 rank(s) on 2 node(s)" "$log" || fail "the log does not say 4 ranks on 2 nodes" "$log"
for r in 0 1 2 3; do
  grep -q "rank $r -> node $((r / 2)) " "$log" || fail "rank map: no 'rank $r -> node $((r / 2))' line" "$log"
done

params=$(sed -n 's/.*Number of trainable parameters = \([0-9]*\).*/\1/p' "$log" | head -n 1)
[ -n "$params" ] || fail "no 'Number of trainable parameters' in the log" "$log"
sent=$((after - before))
need=$((params * 4 * steps))
echo "node 0 veth sent $sent bytes; gradient volume $need bytes ($params parameters x 4 bytes x $steps steps)"
[ "$sent" -ge "$need" ] || fail "too little crossed the veth link: the gradients did not go over TCP" "$log"

compare_losses "$out" "$log"

if [ "$mode" = mpi ]; then
  # One host line holding all 4 slots while -ppn says 2 per node: Hydra starts a single proxy there
  # (MPI_LOCALNRANKS=4), so this is 1 node x 4 ranks, and must still train correctly.
  hosts="$work/one-host"
  echo "$NETNS_SUBNET.1:4" > "$hosts"
  log1="$work/one-host.log"
  HF_DATASETS_CACHE="$work/cache-one" timeout -k 5 "$NETNS_RUN_TIMEOUT" ip netns exec "${NETNS_PREFIX}0" \
    mpiexec -genv UCX_TLS tcp,self -genv OMP_NUM_THREADS 1 -f "$hosts" -n 4 -ppn 2 \
    -launcher ssh -launcher-exec "$NETNS_LAUNCH" "$coretrain" $common --output_dir "$work/one" \
    --per_device_train_batch_size 2 > "$log1" 2>&1
  one_rc=$?
  echo "hostfile '$NETNS_SUBNET.1:4' with -n 4 -ppn 2: exit $one_rc"
  [ "$one_rc" -eq 0 ] || fail "the one-host hostfile run exited $one_rc" "$log1"
  grep -q "4 rank(s) on 1 node(s)" "$log1" || fail "one-host hostfile: expected 4 ranks on 1 node" "$log1"
  check_output "$work/one" "$log1"
  compare_losses "$work/one" "$log1"
fi
# A rank failing at the very end, after the others are done (rank 0 cannot write model.safetensors: a folder is
# in the way) must fail the whole job, on both nodes, at once: not exit 0, and not leave the other node's ranks
# waiting out the comm timeout (60 s here). Under mpiexec this is the bootstrap's MPI_Abort on a failing exit.
bad="$work/bad"
mkdir -p "$bad/model.safetensors/in-the-way"
log2="$work/bad.log"
t0=$(date +%s)
case "$mode" in
  mpi) netns_mpiexec 2 2 -genv OMP_NUM_THREADS 1 "$coretrain" $common --output_dir "$bad" --overwrite_output_dir \
         --per_device_train_batch_size 2 > "$log2" 2>&1 ;;
  env) netns_envlaunch 2 2 $((port + 1)) "$coretrain" $common --output_dir "$bad" --overwrite_output_dir \
         --per_device_train_batch_size 2 > "$log2" 2>&1 ;;
esac
bad_rc=$?
took=$(($(date +%s) - t0))
echo "rank 0 failing at the end: exit $bad_rc after $took s"
[ "$bad_rc" -ne 0 ] || fail "the job exited 0 although rank 0 could not write model.safetensors" "$log2"
grep -q "model.safetensors" "$log2" || fail "no error naming model.safetensors" "$log2"
[ "$took" -lt 30 ] || fail "the job took $took s to fail (the other node waited for its timeout?)" "$log2"
echo "PASS"

#!/usr/bin/env bash
# The elastic PyTorchJob of deploy/k8s/pytorchjob.yaml, played on one machine: one network namespace per worker
# pod (own address, hostname = pod name, the headless Service name <job>-worker-0 in the pod's /etc/hosts), each
# pod's container command from the manifest with the env the training operator injects (pytorchjob_pods.py), the
# PVC a shared folder. Generated data replaces the SQuAD/model flags; the rdzvConf below stands for one the
# manifest could carry (shorter timeouts than production). Usage: operator_play.sh BIN CASE
#
#   all_pods     4 pods, started in reverse order (worker-0 last: the others wait for the endpoint): the job
#                finishes with world size 4, every pod exits 0, one output folder.
#   pod_killed   4 pods; once checkpoint-20 exists, every process of pod 3 gets SIGKILL (its node is gone): the
#                3 others restart after an elastic rendezvous (world size 4 -> 3), resume from a checkpoint no
#                older than the last one written before the kill (at most save_steps lost), and finish.
#   pod_missing  pod 3 never starts: min 1 is met, the round closes after last_call with 3 and the job finishes
#                with world size 3.
# Needs root for namespaces (exit 77 otherwise).
source "$(dirname "$0")/../train/ddp_lib.sh"
source "$(dirname "$0")/../comm/netns_lib.sh"
BIN=$1 CASE=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ct_setup "operator_$CASE" "$BIN"
netns_setup 4
cleanup_all() {
  for ns in $NETNS_NODES; do rm -rf "/etc/netns/$ns"; done
  netns_cleanup
  ct_cleanup
}
trap cleanup_all EXIT

SAVE=10
PODS=$TMP/pods
DEMO="--demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --disable_tqdm --per_device_train_batch_size 4
      --max_steps 60 --save_strategy steps --save_steps $SAVE --logging_steps 10"
read -r JOB REPLICAS < <("$PY" "$ROOT/tests/launch/pytorchjob_pods.py" "$ROOT/deploy/k8s/pytorchjob.yaml" "$PODS" \
  --rdzv-conf "join_timeout=120,last_call_timeout=4,keep_alive_interval=1,keep_alive_max_attempt=8,read_timeout=10,close_timeout=20" \
  --pvc "$TMP/pvc" --omp 1 --demo "$DEMO" --coretrain "$BIN")
[ "$REPLICAS" -eq 4 ] || fail "the manifest has $REPLICAS worker replicas, this test plays 4"
mkdir -p "$TMP/pvc"

# Pod i: namespace i, hosts file with the Service name of worker 0, hostname = pod name.
for i in 0 1 2 3; do
  ns=${NETNS_PREFIX}$i
  mkdir -p "/etc/netns/$ns"
  printf "127.0.0.1 localhost\n%s %s-worker-%d\n%s.1 %s-worker-0\n" "$NETNS_SUBNET.$((i + 1))" "$JOB" "$i" \
    "$NETNS_SUBNET" "$JOB" | sort -u > "/etc/netns/$ns/hosts"
done

start_pod() {
  local i=$1 ns=${NETNS_PREFIX}$1
  local envs=()
  mapfile -t envs < "$PODS/pod$i.env"
  local cmd=()
  mapfile -d '' -t cmd < "$PODS/pod$i.cmd"
  ip netns exec "$ns" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$JOB-worker-$i" \
    env "${envs[@]}" timeout -k 5 "$LIMIT" "${cmd[@]}" > "$TMP/pod$i.log" 2>&1 &
  eval "POD$i=\$!"
  PIDS="$PIDS $!"
}
pod_rc() { eval "wait_rc \$POD$1"; }
last_checkpoint() { ls -d "$TMP"/pvc/output/checkpoint-* 2>/dev/null | sed 's/.*checkpoint-//' | sort -n | tail -n 1; }
logs() { ls "$TMP"/pod*.log; }

case "$CASE" in
all_pods)
  for i in 3 2 1; do start_pod $i; done
  sleep 1
  start_pod 0
  for i in 0 1 2 3; do
    pod_rc $i
    [ "$RC" -eq 0 ] || fail "pod $i exited $RC" $(logs)
  done
  grep -q "round 0: 4 node(s), world size 4" "$TMP/pod0.log" || fail "no round of 4" "$TMP/pod0.log"
  grep -q "(hosted here)" "$TMP/pod0.log" || fail "worker-0 does not host the rendezvous" "$TMP/pod0.log"
  [ "$(json "$TMP/pvc/output/trainer_state.json" 'j["global_step"]')" -eq 60 ] || fail "global_step != 60" "$TMP/pod0.log"
  ;;
pod_killed)
  for i in 0 1 2 3; do start_pod $i; done
  deadline=$(($(date +%s) + 90))
  until [ -d "$TMP/pvc/output/checkpoint-20" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "no checkpoint-20 after 90 s" $(logs)
    sleep 0.1
  done
  ip netns pids "${NETNS_PREFIX}3" | xargs -r kill -9
  before=$(last_checkpoint)
  echo "pod 3 killed; the last checkpoint then: $before"
  for i in 0 1 2; do
    pod_rc $i
    [ "$RC" -eq 0 ] || fail "pod $i exited $RC" $(logs)
  done
  pod_rc 3
  grep -q "world size 4 -> 3" "$TMP/pod0.log" || fail "no shrink to 3" "$TMP/pod0.log"
  # Rank 0 (whichever pod it landed on in the new round) says where it resumed from.
  grep -h "restarting\|world size\|resum\|Continuing" "$TMP/pod0.log" "$TMP/pod1.log" "$TMP/pod2.log"
  resumed=$(sed -n 's/.*Continuing training from checkpoint.*checkpoint-\([0-9]*\).*/\1/p' \
    "$TMP/pod0.log" "$TMP/pod1.log" "$TMP/pod2.log" | tail -n 1)
  [ -n "$resumed" ] && [ "$resumed" -ge "$before" ] || fail "resumed from checkpoint-$resumed, older than checkpoint-$before" $(logs)
  [ "$(json "$TMP/pvc/output/trainer_state.json" 'j["global_step"]')" -eq 60 ] || fail "global_step != 60" "$TMP/pod0.log"
  ;;
pod_missing)
  for i in 0 1 2; do start_pod $i; done
  for i in 0 1 2; do
    pod_rc $i
    [ "$RC" -eq 0 ] || fail "pod $i exited $RC" $(logs)
  done
  grep -q "round 0: 3 node(s), world size 3" "$TMP/pod0.log" || fail "no round of 3" "$TMP/pod0.log"
  [ "$(json "$TMP/pvc/output/trainer_state.json" 'j["global_step"]')" -eq 60 ] || fail "global_step != 60" "$TMP/pod0.log"
  ;;
*)
  fail "unknown case $CASE"
  ;;
esac
echo "PASS: operator $CASE"

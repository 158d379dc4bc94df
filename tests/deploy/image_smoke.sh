#!/usr/bin/env bash
# Runs the built container images the way a cluster would (not in CTest: needs root, podman and the images from
# `sudo scripts/build-image.sh --mpi`; results in docs/containers.md):
#   1. localhost/coretrain --help
#   2. localhost/coretrain qa --demo ... --max_steps 5                  (one process, as the non-root user)
#   3. mpiexec -n 2 coretrain qa --demo ...                              (two ranks in one container, shared memory)
#   4. an MPIJob played by hand: two "worker pods" (coretrain-mpi containers running the non-root sshd on port 2222,
#      ssh key mounted read-only at /home/coretrain/.ssh as the MPI Operator's Secret is) in two network namespaces,
#      and a "launcher" container running `mpirun -n 2 -ppn 1 coretrain qa --demo ...` with HYDRA_HOST_FILE /
#      HYDRA_LAUNCH_EXTRA_ARGS as the operator sets them: Hydra reaches the workers over ssh.
#   5. the PyTorchJob played: 4 "pods" (containers of the image in 4 network namespaces on a bridge, hostname = pod
#      name), each running the manifest's `coretrain run qa ...` with the env the training operator injects.
# usage: sudo tests/deploy/image_smoke.sh [--tag localhost/coretrain] [--skip-pods]
set -uo pipefail
tag=localhost/coretrain skip_pods=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift ;;
    --skip-pods) skip_pods=1 ;;
    *) echo "usage: $0 [--tag IMAGE] [--skip-pods]" >&2; exit 2 ;;
  esac
  shift
done
P=(podman --runtime runc)
U=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
DEMO=(qa --demo --output_dir /tmp/x --max_steps 5)
fails=0
step() {  # name, command...
  local name=$1; shift
  local t0 rc
  t0=$(date +%s.%N)
  echo "== $name: $*"
  "$@" > "/tmp/image-smoke.$$.log" 2>&1
  rc=$?
  { grep -E -- "-> node|world size|ranks?," "/tmp/image-smoke.$$.log" | head -n 4; tail -n 8 "/tmp/image-smoke.$$.log"; } |
    awk '!seen[$0]++' | sed 's/^/   | /'
  printf '== %s: exit %d, %.1f s\n' "$name" $rc "$(echo "$(date +%s.%N) - $t0" | awk '{print $1 - $3}')"
  [ $rc -eq 0 ] || fails=$((fails + 1))
  rm -f "/tmp/image-smoke.$$.log"
}

step help "${P[@]}" run --rm "${U[@]}" --network none "$tag" --help
step demo-1proc "${P[@]}" run --rm "${U[@]}" --network none "$tag" "${DEMO[@]}"
step demo-mpiexec-2ranks "${P[@]}" run --rm "${U[@]}" --network none --entrypoint mpiexec "$tag" \
  -n 2 -genv OMP_NUM_THREADS 1 coretrain "${DEMO[@]}"
step whoami "${P[@]}" run --rm "${U[@]}" --network none --entrypoint id "$tag"

if [ $skip_pods -eq 0 ]; then
  # "Pods": network namespaces ctdeploy0..3 (10.79.0.1-4) on a bridge in ctdeployh; names and addresses of this
  # script only (other tests use ctA/ctB, 10.77.0.0/24 and their own prefixes).
  NS=ctdeploy SUB=10.79.0
  keys=$(mktemp -d /tmp/image-smoke-keys.XXXXXX)
  pvc=$(mktemp -d /tmp/image-smoke-pvc.XXXXXX)
  cleanup() {
    local c
    for c in $("${P[@]}" ps -a --format '{{.Names}}' | grep -E '^coretrain-qa(-mpi)?-worker-[0-9]$'); do
      "${P[@]}" rm -f -t 2 "$c" >/dev/null 2>&1
    done
    for n in h 0 1 2 3; do ip netns del $NS$n 2>/dev/null; done
    rm -rf "$keys" "$pvc"
  }
  trap cleanup EXIT
  for n in h 0 1 2 3; do ip netns del $NS$n 2>/dev/null; done
  ip netns add ${NS}h
  ip netns exec ${NS}h ip link add br0 type bridge && ip netns exec ${NS}h ip link set br0 up
  for i in 0 1 2 3; do
    ip netns add $NS$i
    ip link add vd$i type veth peer name pd$i
    ip link set vd$i netns $NS$i; ip link set pd$i netns ${NS}h
    ip netns exec ${NS}h ip link set pd$i master br0 up
    ip netns exec $NS$i ip addr add $SUB.$((i + 1))/24 dev vd$i
    ip netns exec $NS$i ip link set lo up; ip netns exec $NS$i ip link set vd$i up
  done

  # 4. MPIJob (deploy/k8s/mpijob.yaml, 2 workers): the ssh key Secret the operator mounts (id_rsa, id_rsa.pub,
  #    authorized_keys; owned by root, default mode 0644), the hostfile it writes, the launcher env it sets.
  job=coretrain-qa-mpi
  ssh-keygen -q -t rsa -b 2048 -N "" -f "$keys/id_rsa" && cp "$keys/id_rsa.pub" "$keys/authorized_keys"
  chmod 0644 "$keys"/*; chmod 0755 "$keys"
  hosts=(--add-host "$job-worker-0:$SUB.1" --add-host "$job-worker-1:$SUB.2" --add-host "$job-launcher:$SUB.1")
  printf '%s:1\n%s:1\n' "$job-worker-0" "$job-worker-1" > "$keys/hostfile"
  for i in 0 1; do
    "${P[@]}" run -d "${U[@]}" --name "$job-worker-$i" --hostname "$job-worker-$i" "${hosts[@]}" \
      --network ns:/run/netns/$NS$i --shm-size 256m -v "$keys:/home/coretrain/.ssh:ro" \
      --entrypoint /usr/sbin/sshd "$tag-mpi" -De -f /home/coretrain/.sshd_config >/dev/null
  done
  sleep 2
  step mpijob-2pods "${P[@]}" run --rm "${U[@]}" --hostname "$job-launcher" "${hosts[@]}" \
    --network ns:/run/netns/${NS}0 -v "$keys:/home/coretrain/.ssh:ro" -v "$keys/hostfile:/etc/mpi/hostfile:ro" \
    -e K_MPI_JOB_ROLE=launcher -e HYDRA_HOST_FILE=/etc/mpi/hostfile \
    -e "HYDRA_LAUNCH_EXTRA_ARGS=-o ConnectionAttempts=10" \
    --entrypoint mpirun "$tag-mpi" -n 2 -ppn 1 -genv OMP_NUM_THREADS 1 coretrain "${DEMO[@]}"
  ip netns exec ${NS}0 ip -s link show vd0 | sed -n '3,6p' | sed 's/^/   veth of pod 0: /'
  for i in 0 1; do "${P[@]}" logs "$job-worker-$i" 2>&1 | tail -n 1 | sed "s/^/   worker-$i sshd: /"; done
  for i in 0 1; do "${P[@]}" rm -f -t 2 "$job-worker-$i" >/dev/null 2>&1; done

  # 5. PyTorchJob (deploy/k8s/pytorchjob.yaml, all 4 workers): each pod's command and env as the training
  #    operator makes them (tests/launch/pytorchjob_pods.py, rules in docs/kubernetes.md), hostname = pod name, the
  #    Service name coretrain-qa-worker-0 -> pod 0's address, a host folder as the PVC at /tmp/pvc-mount, pod 0
  #    started last. What this machine lacks is substituted: the model/SQuAD flags (the Hub id and --dataset_name
  #    squad, which need the network; the namespaces have none) by the demo's generated data and config (made first,
  #    by one container, onto the "PVC": with --demo every pod's local rank 0 would write it into the shared
  #    output_dir, and their temporary files collide, see docs/containers.md), OMP_NUM_THREADS=1.
  pj=coretrain-qa
  chown 1000:1000 "$pvc"
  "${P[@]}" run --rm "${U[@]}" --network none -v "$pvc:/tmp/pvc-mount" "$tag" qa --demo \
    --demo_train_paragraphs 200 --demo_eval_paragraphs 20 --max_steps 1 --output_dir /tmp/pvc-mount/gen >/dev/null 2>&1
  D=/tmp/pvc-mount/gen/demo_data
  /usr/bin/python3 "$(dirname "$0")/../launch/pytorchjob_pods.py" "$(dirname "$0")/../../deploy/k8s/pytorchjob.yaml" \
    "$pvc/pods" --omp 1 --demo "--config_name $D --tokenizer_name $D --train_file $D/train.json \
    --validation_file $D/dev.json --max_seq_length 192 --doc_stride 64 --per_device_train_batch_size 4 \
    --max_steps 40 --save_steps 10 --logging_steps 10 --disable_tqdm" >/dev/null
  pytorchjob() {
    local i pids=() rc=0 cmd
    for i in 3 2 1 0; do
      mapfile -d '' -t cmd < "$pvc/pods/pod$i.cmd"
      [ "$i" -eq 0 ] && sleep 2
      "${P[@]}" run --rm "${U[@]}" --name "$pj-worker-$i" --hostname "$pj-worker-$i" \
        --add-host "$pj-worker-0:$SUB.1" --network ns:/run/netns/$NS$i --shm-size 256m \
        --env-file "$pvc/pods/pod$i.env" -v "$pvc:/tmp/pvc-mount" --entrypoint "${cmd[0]}" "$tag" "${cmd[@]:1}" \
        > "$pvc/pod$i.log" 2>&1 &
      pids[$i]=$!
    done
    for i in 0 1 2 3; do wait "${pids[$i]}" || { echo "pod $i exited $?"; rc=1; }; done
    grep -h -E "round|world size|hosted|-> node|eval_f1|train_runtime" "$pvc/pod0.log" | head -n 12
    grep -h -i "error" "$pvc"/pod*.log | head -n 5
    ls "$pvc/output" | tr '\n' ' '; echo
    [ -f "$pvc/output/model.safetensors" ] && grep -q '"global_step": *40' "$pvc/output/trainer_state.json" || rc=1
    return $rc
  }
  step pytorchjob-4pods pytorchjob
  head -n 20 "$pvc/pods/pod1.env" | grep -E "^PET_|^PYTHON" | sed 's/^/   pod 1 env: /'
fi
echo "image_smoke: $fails step(s) failed"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# Runs the built container images the way a cluster would (not in CTest: needs root, podman and the images from
# `sudo scripts/build-image.sh --mpi`; results in docs/containers.md):
#   1. localhost/coretrain --help
#   2. localhost/coretrain qa --demo ... --max_steps 5                  (one process, as the non-root user)
#   3. mpiexec -n 2 coretrain qa --demo ...                              (two ranks in one container, shared memory)
#   4. an MPIJob played by hand: two "worker pods" (coretrain-mpi containers running the non-root sshd on port 2222,
#      ssh key mounted read-only at /home/coretrain/.ssh as the MPI Operator's Secret is) in two network namespaces
#      joined by a veth, and a "launcher" container running `mpirun -n 2 -ppn 1 coretrain qa --demo ...` with
#      HYDRA_HOST_FILE / HYDRA_LAUNCH_EXTRA_ARGS as the operator sets them: Hydra reaches the workers over ssh.
# usage: sudo tests/deploy/image_smoke.sh [--tag localhost/coretrain] [--skip-mpijob]
set -uo pipefail
tag=localhost/coretrain skip_mpijob=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift ;;
    --skip-mpijob) skip_mpijob=1 ;;
    *) echo "usage: $0 [--tag IMAGE] [--skip-mpijob]" >&2; exit 2 ;;
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

if [ $skip_mpijob -eq 0 ]; then
  # Names and addresses of this script only (other tests use ctA/ctB and 10.77.0.0/24).
  nsA=ctdeployA nsB=ctdeployB ipA=10.79.0.1 ipB=10.79.0.2 job=coretrain-qa-mpi
  keys=$(mktemp -d /tmp/image-smoke-keys.XXXXXX)
  cleanup() {
    "${P[@]}" rm -f -t 2 "$job-worker-0" "$job-worker-1" >/dev/null 2>&1
    ip netns del $nsA 2>/dev/null; ip netns del $nsB 2>/dev/null
    rm -rf "$keys"
  }
  trap cleanup EXIT
  cleanup; keys=$(mktemp -d /tmp/image-smoke-keys.XXXXXX)
  # The Secret the operator mounts: id_rsa, id_rsa.pub, authorized_keys, owned by root, default mode 0644.
  ssh-keygen -q -t rsa -b 2048 -N "" -f "$keys/id_rsa" && cp "$keys/id_rsa.pub" "$keys/authorized_keys"
  chmod 0644 "$keys"/*; chmod 0755 "$keys"
  ip netns add $nsA; ip netns add $nsB
  ip link add vdA type veth peer name vdB
  ip link set vdA netns $nsA; ip link set vdB netns $nsB
  ip netns exec $nsA ip addr add $ipA/24 dev vdA; ip netns exec $nsB ip addr add $ipB/24 dev vdB
  for n in $nsA $nsB; do ip netns exec $n ip link set lo up; done
  ip netns exec $nsA ip link set vdA up; ip netns exec $nsB ip link set vdB up
  hosts=(--add-host "$job-worker-0:$ipA" --add-host "$job-worker-1:$ipB" --add-host "$job-launcher:$ipA")
  # Hostfile lines as the operator writes them for MPICH (<worker>.<job>.<ns>.svc:<slots>; short names here).
  printf '%s:1\n%s:1\n' "$job-worker-0" "$job-worker-1" > "$keys/hostfile"
  for i in 0 1; do
    ns=$nsA; [ $i -eq 1 ] && ns=$nsB
    "${P[@]}" run -d "${U[@]}" --name "$job-worker-$i" --hostname "$job-worker-$i" "${hosts[@]}" \
      --network ns:/run/netns/$ns --shm-size 256m -v "$keys:/home/coretrain/.ssh:ro" \
      --entrypoint /usr/sbin/sshd "$tag-mpi" -De -f /home/coretrain/.sshd_config >/dev/null
  done
  sleep 2
  step mpijob-2pods "${P[@]}" run --rm "${U[@]}" --hostname "$job-launcher" "${hosts[@]}" \
    --network ns:/run/netns/$nsA -v "$keys:/home/coretrain/.ssh:ro" -v "$keys/hostfile:/etc/mpi/hostfile:ro" \
    -e K_MPI_JOB_ROLE=launcher -e HYDRA_HOST_FILE=/etc/mpi/hostfile \
    -e "HYDRA_LAUNCH_EXTRA_ARGS=-o ConnectionAttempts=10" \
    --entrypoint mpirun "$tag-mpi" -n 2 -ppn 1 -genv OMP_NUM_THREADS 1 coretrain "${DEMO[@]}"
  ip netns exec $nsA ip -s link show vdA | sed -n '3,6p' | sed 's/^/   veth vdA: /'
  for i in 0 1; do "${P[@]}" logs "$job-worker-$i" 2>&1 | tail -n 3 | sed "s/^/   worker-$i sshd: /"; done
  "${P[@]}" rm -f -t 2 "$job-worker-0" "$job-worker-1" >/dev/null 2>&1

  # 5. What `coretrain run` starts in each PyTorchJob pod once the rendezvous is done: one rank per "pod", torchrun
  #    env (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=worker 0's name, MASTER_PORT), Gloo between
  #    the pods; the two containers are started together, each in its namespace with the pod's hostname.
  pj=coretrain-qa
  phosts=(--add-host "$pj-worker-0:$ipA" --add-host "$pj-worker-1:$ipB")
  envlaunch() {
    local pids=() rc=0 i ns
    for i in 0 1; do
      ns=$nsA; [ $i -eq 1 ] && ns=$nsB
      "${P[@]}" run --rm "${U[@]}" --name "$pj-worker-$i" --hostname "$pj-worker-$i" "${phosts[@]}" \
        --network ns:/run/netns/$ns --shm-size 256m -e RANK=$i -e WORLD_SIZE=2 -e LOCAL_RANK=0 \
        -e LOCAL_WORLD_SIZE=1 -e MASTER_ADDR=$pj-worker-0 -e MASTER_PORT=29500 -e OMP_NUM_THREADS=1 \
        -e CCL_WORKER_COUNT=1 "$tag" "${DEMO[@]}" > "/tmp/image-smoke.$$.rank$i" 2>&1 &
      pids+=($!)
    done
    for i in 0 1; do wait "${pids[$i]}" || rc=1; done
    cat "/tmp/image-smoke.$$.rank0"; grep -- "error" "/tmp/image-smoke.$$.rank1"
    rm -f "/tmp/image-smoke.$$.rank"*
    return $rc
  }
  step envlaunch-2pods envlaunch
fi
echo "image_smoke: $fails step(s) failed"
[ $fails -eq 0 ]

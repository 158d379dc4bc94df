#!/bin/bash
# optimizer_sharing_ab.sh CORETRAIN RANKS THREADS_PER_RANK [shape flags]: coretrain DDP (BERT-base QA, bf16,
# `coretrain run` launch, 1 warm-up + 3 timed steps) twice: the node's ranks sharing the optimizer state (the
# default, train/node_shard.h) and every rank updating everything (CORETRAIN_REPLICATED_OPTIMIZER=1). Prints,
# for each: the bench's step line, the node's peak memory (bench/node_memory.sh) and the per-rank optimizer time
# and parameter count from ddp_timing.json.
set -u
bin=${1:?usage: optimizer_sharing_ab.sh CORETRAIN RANKS THREADS_PER_RANK [shape flags]}
ranks=${2:?ranks} per=${3:?threads per rank}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
for mode in shared replicated; do
  log=$(mktemp)
  if [ "$mode" = replicated ]; then export CORETRAIN_REPLICATED_OPTIMIZER=1; else unset CORETRAIN_REPLICATED_OPTIMIZER; fi
  "$here/node_memory.sh" "$py" "$here/ddp_vs_torch.py" --coretrain "$bin" --launcher run --ranks "$ranks" \
    --threads_per_rank "$per" --batch 2 --steps 3 --warmup 1 --only a --bf16 --keep "$@" >"$log" 2>&1
  echo "== $mode (exit $?)"
  grep -E '^\| \(a\)|^node_memory:' "$log"
  dir=$(sed -n 's/^kept //p' "$log")
  if [ -n "$dir" ]; then
    "$py" - "$dir" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/**/ddp_timing.json", recursive=True):
    j = json.load(open(f))
    if j["world_size"] > 1:
        print("optimizer ms/step per rank", [round(1e3 * r["optimizer_s"] / j["steps"], 1) for r in j["ranks"]])
        print("parameters updated per rank", [r["updated_params"] for r in j["ranks"]])
PY
    rm -rf "$dir"
  else
    tail -5 "$log"
  fi
  rm -f "$log"
done

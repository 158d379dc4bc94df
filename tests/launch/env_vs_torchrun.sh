#!/usr/bin/env bash
# The environment `coretrain run` gives each worker, set against what PyTorch 1.13's torchrun (Debian's, through
# tests/comm/torchrun113.py) gives the same worker for the same launch (--nnodes 1, 2 workers, static rendezvous,
# OMP_NUM_THREADS unset): the same variables with the same values, except
#   MASTER_PORT                 each launcher gets its own free port here;
#   TORCHELASTIC_ERROR_FILE     a per-launch temporary folder; both end in <run_id>_<id>/attempt_0/<local_rank>/error.json;
#   CORETRAIN_RDZV_ROUND        coretrain's own (the rendezvous round; keys store prefixes);
#   TORCH_NCCL_ASYNC_ERROR_HANDLING  the 2.x name of 1.13's NCCL_ASYNC_ERROR_HANDLING (coretrain sets both);
#   OMP_NUM_THREADS             torchrun: 1 whenever nproc > 1; coretrain: the agent's CPUs / nproc (1 here too,
#                               with 2 CPUs and 2 workers, so the values are compared).
# Skips (77) without torch.
source "$(dirname "$0")/../train/ddp_lib.sh"
BIN=$1
ct_setup env_vs_torchrun "$BIN"
HERE=$(cd "$(dirname "$0")" && pwd)
"$PY" -c 'import torch' 2>/dev/null || { echo "SKIP: python3-torch is not importable"; exit 77; }
unset OMP_NUM_THREADS
cat > "$TMP/dump.sh" <<'EOS'
#!/bin/sh
env | sort > "$1/env.$RANK"
EOS
chmod +x "$TMP/dump.sh"
mkdir -p "$TMP/torch" "$TMP/ct"
pick_port
timeout -k 5 60 "$PY" "$HERE/../comm/torchrun113.py" --nnodes 1 --nproc_per_node 2 --master_port "$PORT" \
  --no_python "$TMP/dump.sh" "$TMP/torch" > "$TMP/torch.log" 2>&1 || fail "torchrun failed" "$TMP/torch.log"
pick_port
timeout -k 5 60 "$BIN" run --nnodes 1 --nproc-per-node 2 --master-port "$PORT" \
  "$TMP/dump.sh" "$TMP/ct" > "$TMP/ct.log" 2>&1 || fail "coretrain run failed" "$TMP/ct.log"
env | sort > "$TMP/parent"
"$PY" - "$TMP" <<'EOS'
import re, sys
tmp = sys.argv[1]
def read(p):
    return dict(l.rstrip("\n").split("=", 1) for l in open(p) if "=" in l)
parent = read(f"{tmp}/parent")
ok = True
for r in (0, 1):
    t, c = read(f"{tmp}/torch/env.{r}"), read(f"{tmp}/ct/env.{r}")
    def added(e):  # what the launcher set or changed
        return {k: v for k, v in e.items() if parent.get(k) != v and k not in ("_", "OLDPWD", "PWD", "SHLVL")}
    t, c = added(t), added(c)
    for k in sorted(set(t) | set(c)):
        if k in ("CORETRAIN_RDZV_ROUND", "TORCH_NCCL_ASYNC_ERROR_HANDLING") and k not in t:
            continue
        if k == "MASTER_PORT" and k in t and k in c:
            continue
        if k == "TORCHELASTIC_ERROR_FILE":
            pat = rf"/none_[^/]+/attempt_0/{r}/error\.json$"
            if not (re.search(pat, t.get(k, "")) and re.search(pat, c.get(k, ""))):
                print(f"rank {r}: {k}: torch {t.get(k)!r} coretrain {c.get(k)!r}"); ok = False
            continue
        if t.get(k) != c.get(k):
            print(f"rank {r}: {k}: torch {t.get(k)!r} coretrain {c.get(k)!r}"); ok = False
    print(f"rank {r}: {len(t)} variables from torchrun, {len(c)} from coretrain run")
sys.exit(0 if ok else 1)
EOS
[ $? -eq 0 ] || fail "the environments differ"
echo "PASS: env_vs_torchrun"

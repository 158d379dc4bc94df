#!/bin/sh
# node_suite.sh OUTDIR [CORETRAIN]: the same-run comparisons against PyTorch, sized for a bigger node (AVX-512 / AMX,
# 8+ cores) and run in one go: one log per part in OUTDIR, each part under its own time limit, so a slow or failing
# part leaves the others' figures (a lent machine's time is short). The peer is whatever `python3` imports as torch
# (PYTHON to choose); no MPI needed (the DDP part uses `coretrain run`).
#
#   bench/node_suite.sh /tmp/node                      # all cores, 8 ranks
#   RANKS=4 PARTS=machine,step bench/node_suite.sh /tmp/node build/release/apps/coretrain
#
# Parts (PARTS, comma-separated; default all, in this order):
#   machine  lscpu, `coretrain bench matmul` at 1 thread and at all threads (the peaks the MFU figures divide by)
#   step     bench/step_vs_torch.py: BERT-base QA step, seq 384, batch 8, f32 and bf16
#   ddp      bench/ddp_vs_torch.py: RANKS ranks x (threads / RANKS) against 1 x threads and PyTorch DDP (Gloo),
#            launched by `coretrain run` (no MPI needed)
#   zero     RANKS x (threads / RANKS) coretrain DDP in bf16 twice, the node's ranks sharing the optimizer state
#            (default) and each updating everything (CORETRAIN_REPLICATED_OPTIMIZER=1), under bench/node_memory.sh:
#            the step, the per-rank optimizer time (ddp_timing.json) and the node's peak memory of both
#   e2e      bench/e2e_vs_torch.py --bf16: SQuAD-shaped train and eval against PyTorch padded and dynamic
#   glue     bench/tasks_vs_torch.py --tasks mrpc: the MRPC-shaped glue run against PyTorch
#   deberta  bench/step_vs_torch.py --model_type deberta-v2 (deberta-v3-base's shape, seq 512), bf16, with BERT's MFU
# Limits (seconds, per part): LIMIT_<PART>, e.g. LIMIT_E2E=300. Threads: THREADS (default: all CPUs).
# On a 16-core Emerald Rapids node (2026-11-28) the parts took: machine 1 s, step 71, ddp 116, glue 83, deberta
# 54-60, e2e ~70 in f32 alone and more than 130 with --bf16 (six runs): the defaults below add up to ~11.5 minutes,
# so where one command may run 10, split it: PARTS=machine,step,ddp,deberta, then PARTS=e2e,glue,zero (zero: two
# 8-rank runs of 4 steps, ~2 minutes there, not yet timed on such a node).
# QUICK=1: tiny shapes everywhere, to check the suite runs on a machine before spending a big one's time on it.
# SIZES (e2e/glue): E2E_STEPS (3), E2E_EVAL_PARAGRAPHS (20), GLUE_STEPS (5).
set -u
out=${1:?usage: node_suite.sh OUTDIR [CORETRAIN]}
bin=${2:-build/release/apps/coretrain}
py=${PYTHON:-python3}
threads=${THREADS:-$(nproc)}
ranks=${RANKS:-8}
parts=${PARTS:-machine,step,ddp,zero,e2e,glue,deberta}
[ -x "$bin" ] || { echo "node_suite.sh: no coretrain binary at '$bin' (build it, or pass its path)" >&2; exit 2; }
[ "$ranks" -ge 2 ] && [ $((threads % ranks)) -eq 0 ] ||
  { echo "node_suite.sh: RANKS=$ranks must be >= 2 and divide THREADS=$threads" >&2; exit 2; }
mkdir -p "$out"
export OMP_NUM_THREADS="$threads" PYTHONUNBUFFERED=1

# part NAME DEFAULT_LIMIT CMD...: runs CMD under its limit into OUTDIR/NAME.log, and one summary line per part.
part() {
  name=$1 limit=$2
  shift 2
  case ",$parts," in *",$name,"*) ;; *) return 0 ;; esac
  eval "limit=\${LIMIT_$(echo "$name" | tr a-z A-Z):-$limit}"
  start=$(date +%s)
  { echo "\$ $*"; echo "# $(date -u +%FT%TZ), limit ${limit}s, load $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$out/$name.log"
  timeout -k 10 "$limit" "$@" >>"$out/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc after $(($(date +%s) - start)) s$([ $rc -eq 124 ] && echo ' (time limit)')" |
    tee -a "$out/summary.txt"
}

here=$(cd "$(dirname "$0")" && pwd)
: >"$out/summary.txt"
part machine 30 sh -c "lscpu; nproc; free -g; OMP_NUM_THREADS=1 '$bin' bench matmul --reps 5; \
  '$bin' bench matmul --reps 10"
per=$((threads / ranks))
tiny="" quick=""
if [ "${QUICK:-0}" = 1 ]; then tiny="--layers 2 --hidden 128 --heads 2 --intermediate 512 --seq 128" quick=--quick; fi
# shellcheck disable=SC2086  # $tiny and $quick are lists of flags
part step 120 "$py" "$here/step_vs_torch.py" --coretrain "$bin" --threads "$threads" --batch 8 \
  --steps 2 --warmup 1 $tiny
# shellcheck disable=SC2086
part ddp 140 "$py" "$here/ddp_vs_torch.py" --coretrain "$bin" --launcher run --ranks "$ranks" \
  --threads_per_rank "$per" --batch 2 --steps 2 --warmup 1 $tiny
# shellcheck disable=SC2086
part zero 150 "$here/optimizer_sharing_ab.sh" "$bin" "$ranks" "$per" $tiny
# shellcheck disable=SC2086
part e2e 240 "$py" "$here/e2e_vs_torch.py" --coretrain "$bin" --threads "$threads" --bf16 $quick \
  --steps "${E2E_STEPS:-3}" --eval_paragraphs "${E2E_EVAL_PARAGRAPHS:-20}"
# shellcheck disable=SC2086
part glue 110 "$py" "$here/tasks_vs_torch.py" --coretrain "$bin" --threads "$threads" --tasks mrpc $quick \
  --steps "${GLUE_STEPS:-5}"
# shellcheck disable=SC2086
part deberta 110 "$py" "$here/step_vs_torch.py" --coretrain "$bin" --threads "$threads" --model_type deberta-v2 \
  --vocab 128100 --seq 512 --batch 8 --steps 2 --warmup 1 --precisions bf16 --bert-mfu $tiny

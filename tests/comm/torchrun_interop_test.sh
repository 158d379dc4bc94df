#!/bin/bash
# torchrun_interop_test.sh CORETRAIN: `coretrain qa` launched by PyTorch's own torchrun (Debian's python3-torch
# 1.13, through torchrun113.py, which mends its Python 3.11 breakage), gloo backend, 2 workers, both rendezvous:
#   static (default; --master_port P): TORCHELASTIC_USE_AGENT_STORE=True, torchrun's agent hosts a c10d 1.13
#     TCPStore at 127.0.0.1:P and both our workers are its clients (rank 0 must not host: the port is taken);
#   --standalone (c10d rendezvous): rank 0 hosts our store at the MASTER_ADDR:MASTER_PORT torchrun picked.
# Each must exit 0 with both workers' per-rank logs (--redirects 3, the value 1.13 cannot parse on 3.11 as
# shipped), rank 0's log naming 2 ranks and both in its rank map, rank 1 silent about errors, global_step ==
# max_steps, and the losses of 1 process x batch 16 within 1e-4 (2 ranks x 8 train the same trajectory only
# if both ranks agree on the data, the weights and every reduction). Skips (77) without torch.
source "$(dirname "$0")/../train/ddp_lib.sh"
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
"$PY" -c 'import torch.distributed.run' 2> /dev/null \
  || { echo "SKIP: torch.distributed.run does not import with $PY (needs Debian's python3-torch)"; exit 77; }
ct_setup torchrun_interop "$BIN"
GROUPS_=""
kill_groups() {
  for g in $GROUPS_; do kill -9 -- "-$g" 2> /dev/null || true; done
  ct_cleanup
}
trap kill_groups EXIT  # torchrun's workers are its children: end each launch's whole process group
STEPS=6
COMMON=(qa --demo --demo_train_paragraphs 40 --demo_eval_paragraphs 10 --max_steps $STEPS --logging_steps 1
        --disable_tqdm --no_cuda --ddp_backend gloo --do_train --do_eval --pad_to_max_length true)

# ---- reference: 1 process x batch 16
t0=$(now)
RC=0
timeout -k 5 "$LIMIT" "$BIN" "${COMMON[@]}" --per_device_train_batch_size 16 --output_dir "$TMP/one" \
  > "$TMP/one.log" 2>&1 || RC=$?
[ "$RC" -eq 0 ] || fail "the 1-process run exited $RC" "$TMP/one.log"
echo "1 process: $(elapsed_since "$t0") s"

# launch NAME TORCHRUN-ARGS...: 2 workers x batch 8 under torchrun; sets OUT, LOG, R0, R1.
launch() {
  local name=$1
  shift
  OUT=$TMP/$name LOG=$TMP/$name.log
  rm -rf "$OUT" "$TMP/$name.logs"
  setsid timeout -k 5 "$LIMIT" "$PY" "$HERE/torchrun113.py" --nnodes 1 --nproc_per_node 2 "$@" \
    --log_dir "$TMP/$name.logs" --redirects 3 --no_python "$BIN" "${COMMON[@]}" --per_device_train_batch_size 8 \
    --output_dir "$OUT" > "$LOG" 2>&1 &
  local pid=$!
  GROUPS_="$GROUPS_ $pid"
  wait_rc $pid
  R0=$(find "$TMP/$name.logs" -path '*/attempt_0/0/stderr.log' 2> /dev/null | head -n 1)
  R1=$(find "$TMP/$name.logs" -path '*/attempt_0/1/stderr.log' 2> /dev/null | head -n 1)
}

check_run() {
  local name=$1
  [ "$RC" -eq 0 ] || fail "$name: torchrun exited $RC" "$LOG" "$R0" "$R1"
  [ -n "$R0" ] && [ -n "$R1" ] || fail "$name: no per-rank logs under $TMP/$name.logs (--redirects 3)" "$LOG"
  grep -q "^info: gloo: 2 rank(s) on 1 node(s) .*launched by env" "$R0" \
    || fail "$name: rank 0's log does not say 'gloo: 2 rank(s) on 1 node(s) ... launched by env'" "$R0"
  for r in 0 1; do
    grep -q "^info: rank $r -> node 0 " "$R0" || fail "$name: rank 0's rank map has no rank $r" "$R0"
  done
  grep -qi "error" "$R1" && fail "$name: rank 1 reported an error" "$R1"
  local step
  step=$(json "$OUT/trainer_state.json" 'j["global_step"]')
  [ "$step" = "$STEPS" ] || fail "$name: global_step is $step, expected $STEPS" "$R0"
  "$PY" - "$OUT/trainer_state.json" "$TMP/one/trainer_state.json" "$name" <<'EOF' \
    || fail "$name: the 2-worker losses differ from the 1-process ones (see above)" "$R0"
import json, sys
two, one = (json.load(open(p)) for p in sys.argv[1:3])
a = [(e["step"], e["loss"]) for e in two["log_history"] if "loss" in e]
b = [(e["step"], e["loss"]) for e in one["log_history"] if "loss" in e]
print(sys.argv[3], "2 x 8 :", [l for _, l in a])
print(sys.argv[3], "1 x 16:", [l for _, l in b])
sys.exit(1 if len(a) != len(b) or not a or any(sa != sb or abs(la - lb) > 1e-4 for (sa, la), (sb, lb) in zip(a, b)) else 0)
EOF
}

# ---- static rendezvous: torchrun's agent store (1.13), our workers its clients. A lost race for the port
# (the agent cannot bind it) is retried with another.
for attempt in 1 2 3; do
  pick_port
  t0=$(now)
  launch static --master_port "$PORT"
  [ "$RC" -ne 0 ] && grep -qi "address already in use" "$LOG" && continue
  break
done
check_run static
echo "torchrun static (agent store, port $PORT): $(elapsed_since "$t0") s"

# ---- --standalone: rank 0 hosts our store
t0=$(now)
launch standalone --standalone
check_run standalone
echo "torchrun --standalone: $(elapsed_since "$t0") s"
echo PASS

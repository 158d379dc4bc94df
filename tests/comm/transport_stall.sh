#!/bin/sh
# transport_stall.sh CHECK_BINARY: a member that never joins. Member 0 of a 2-rank group enters an allreduce alone
# (ct_transport_check ... stall) with a 500 ms timeout; it must fail within seconds with one line naming the op, the
# transport, the group and the silent rank: under mpiexec (MpiTransport) and under env launch (GlooTransport).
set -u
bin=$1
out=$(mktemp /tmp/ct-stall.XXXXXX)
trap 'rm -f "$out"' EXIT
fails=0

timeout -k 5 60 mpiexec -n 2 "$bin" 1 stall > "$out" 2>&1
grep -q "mpi allreduce timed out after 500 ms in mpi group \[0,1\] (me: rank 0); no answer from rank(s) 1" "$out" \
  || { echo "FAIL (mpi): expected the timeout line naming rank 1, got:"; cat "$out"; fails=1; }

port=$((21000 + $$ % 11000))
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout -k 5 60 "$bin" 1 stall >> "$out" 2>&1 &
done
wait
grep -q "gloo allreduce failed in gloo group \[0,1\] (me: rank 0) after [0-9]* ms (timeout 500 ms; no answer from rank(s) 1 (one or more)): " "$out" \
  || { echo "FAIL (gloo): expected the timeout line, got:"; cat "$out"; fails=1; }
[ "$fails" -eq 0 ] && { cat "$out"; echo PASS; }
exit "$fails"

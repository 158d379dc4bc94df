#!/usr/bin/env bash
# Parse time of a SQuAD-train-sized Parquet file (87,599 rows, ~14 MB, snappy, dictionary, 1,000-row groups):
# coretrain's reader (`coretrain bench parquet`) beside hyparquet (npm) on the same file, in one run.
#   bench/parquet_vs_hyparquet.sh CORETRAIN_BIN [OUT_DIR]      (needs node + $PQGEN packages, see the .mjs)
set -eu
BIN=$1
OUT=${2:-/tmp/ct_parquet_bench}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
node "$HERE/parquet_squad_file.mjs" "$OUT/squad_train.parquet"
"$BIN" bench parquet "$OUT/squad_train.parquet" --squad

#!/usr/bin/env bash
# Installs every Debian package coretrain builds, tests and benchmarks with. Idempotent: a machine that already
# has them all is left alone (no apt-get update, no network).
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config clang-format
  libdnnl-dev            # matmul primitives (f32, bf16)
  ocl-icd-opencl-dev     # Debian's dnnl-config.cmake calls find_package(OpenCL REQUIRED); only a Recommends of libdnnl-dev
  libmpich-dev mpich     # mpirun launch + inter-node transport
  libgloo-dev            # inter-node transport for env-var (torchrun-style) launch
  libutf8proc-dev        # Unicode normalization for the tokenizer
  nlohmann-json3-dev libcli11-dev libhwloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-numpy   # golden fixtures, torch cross-checks and the PyTorch side of benchmarks
  libopenblas0-openmp    # gives Debian's torch an optimized BLAS (without it torch falls back to reference BLAS, ~2 GFLOP/s)
  iproute2               # network namespaces for multi-node tests
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

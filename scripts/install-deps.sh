#!/usr/bin/env bash
# Installs every Debian package coretrain builds, tests and benchmarks with. Idempotent: a machine that already
# has them all is left alone (no apt-get update, no network).
#   scripts/install-deps.sh               everything (make build / test / demo / bench)
#   scripts/install-deps.sh --build-only  only what compiling the coretrain binary needs (container image build
#                                         stage, deploy/Dockerfile: no test, benchmark or Python packages)
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config clang-format
  libdnnl-dev            # matmul primitives (f32, bf16)
  ocl-icd-opencl-dev     # Debian's dnnl-config.cmake calls find_package(OpenCL REQUIRED); only a Recommends of libdnnl-dev
  libmpich-dev mpich     # mpirun launch + inter-node transport
  libgloo-dev            # inter-node transport for env-var (torchrun-style) launch
  libutf8proc-dev        # Unicode normalization for the tokenizer
  libonig-dev            # regexes of tokenizer.json (Split, Replace), the engine HF's tokenizers uses
  libsnappy-dev libzstd-dev liblz4-dev libbrotli-dev zlib1g-dev   # Parquet page codecs (Hub datasets)
  libcurl4-openssl-dev   # Hub client (models by repo id from huggingface.co / HF_ENDPOINT)
  nlohmann-json3-dev libcli11-dev libhwloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-numpy   # golden fixtures, torch cross-checks and the PyTorch side of benchmarks
  libopenblas0-openmp    # gives Debian's torch an optimized BLAS (without it torch falls back to reference BLAS, ~2 GFLOP/s)
  iproute2               # network namespaces for multi-node tests
  python3-yaml           # tests/deploy: parses the Kubernetes manifests in deploy/k8s/
  python3-jinja2         # regenerating the chat-template goldens (tests/text/tools/make_chat_template_golden.py)
)
# --build-only: the subset `cmake --build ... --target coretrain` with CORETRAIN_BUILD_TESTS=OFF needs.
build_only_pkgs=(
  build-essential cmake pkg-config
  libdnnl-dev ocl-icd-opencl-dev
  libmpich-dev mpich
  libgloo-dev libutf8proc-dev libonig-dev libsnappy-dev libzstd-dev liblz4-dev libbrotli-dev zlib1g-dev
  libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libhwloc-dev
)
case "${1:-}" in
  "") ;;
  --build-only) pkgs=("${build_only_pkgs[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build-only]" >&2; exit 2 ;;
esac
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

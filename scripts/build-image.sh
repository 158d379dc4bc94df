#!/usr/bin/env bash
# Builds the coretrain container image(s) from deploy/Dockerfile with podman, on a machine without registry access
# (the recipe of docs/containers.md): a Debian 12 base made with mmdebstrap and imported as
# localhost/debian:bookworm, `podman --runtime runc build` with ulimits the machine allows. Idempotent: the base
# is made once, podman's layer cache skips unchanged steps. Prints the build time and the image size.
#
#   sudo scripts/build-image.sh [--mpi] [--worktree] [--march x86-64-v3] [--base IMAGE] [--tag NAME]
#
#   --mpi        also build the MPI Operator image (target `mpi`, sshd + ssh client): localhost/coretrain-mpi
#   --worktree   build from the working tree as it is (default: the committed HEAD, via git archive, so other
#                people's uncommitted edits in the same tree do not end up in the image)
#   --march ISA  -march for the C++ code (default x86-64-v3; see deploy/Dockerfile)
#   --base IMG   base image (default localhost/debian:bookworm, made here; on a machine with registry access:
#                debian:bookworm-slim)
#   --tag NAME   image name (default localhost/coretrain)
#
# Needs (not in scripts/install-deps.sh: the image is not part of make test):
#   apt-get install -y --no-install-recommends podman buildah runc mmdebstrap uidmap slirp4netns fuse-overlayfs
set -euo pipefail
cd "$(dirname "$0")/.."

mpi=0 worktree=0 march=x86-64-v3 base=localhost/debian:bookworm tag=localhost/coretrain
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=1 ;;
    --worktree) worktree=1 ;;
    --march) march=$2; shift ;;
    --base) base=$2; shift ;;
    --tag) tag=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

for tool in podman runc mmdebstrap; do
  command -v "$tool" >/dev/null || {
    echo "build-image: $tool missing; install the tools with:" >&2
    echo "  apt-get install -y --no-install-recommends podman buildah runc mmdebstrap uidmap slirp4netns fuse-overlayfs" >&2
    exit 1
  }
done
[ "$(id -u)" -eq 0 ] || { echo "build-image: run as root (the checked recipe; see docs/containers.md)" >&2; exit 1; }

# crun refuses this machine's hybrid cgroup v1/v2 layout; the default ulimits cannot be raised here.
P=(podman --runtime runc)
U=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

if [ "$base" = localhost/debian:bookworm ] && ! "${P[@]}" image exists "$base"; then
  echo "build-image: making the Debian 12 base $base (mmdebstrap, minbase)"
  tar=$(mktemp /tmp/debian-base.XXXXXX.tar)
  mmdebstrap --variant=minbase bookworm "$tar"
  "${P[@]}" import "$tar" "$base" >/dev/null
  rm -f "$tar"
fi

ctx=.
if [ $worktree -eq 0 ]; then
  ctx=$(mktemp -d /tmp/coretrain-image-ctx.XXXXXX)
  trap 'rm -rf "$ctx"' EXIT
  git archive HEAD | tar -x -C "$ctx"
  echo "build-image: context = HEAD $(git rev-parse --short HEAD) (committed state; --worktree for the working tree)"
fi

build() {  # target, image name
  local t0=$SECONDS
  "${P[@]}" build "${U[@]}" --build-arg BASE="$base" --build-arg MARCH="$march" --target "$1" -t "$2" \
    -f "$ctx/deploy/Dockerfile" "$ctx"
  local size
  size=$("${P[@]}" image inspect --format '{{.Size}}' "$2")
  printf 'build-image: %s (target %s, -march=%s): built in %d s, size %s bytes (%.0f MB)\n' \
    "$2" "$1" "$march" $((SECONDS - t0)) "$size" "$(awk -v s="$size" 'BEGIN{print s/1e6}')"
}
build runtime "$tag"
[ $mpi -eq 0 ] || build mpi "$tag-mpi"
"${P[@]}" images --filter reference="$tag*"

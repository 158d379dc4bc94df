#!/usr/bin/env bash
# Proves README's two commands work on a fresh Debian 12 machine: builds a bare bookworm root with mmdebstrap
# (only git, make and ca-certificates on top of apt), puts a clean clone of a committed revision in it and runs
# `make test` and `make demo` there under chroot. scripts/install-deps.sh (run by make) is the thing under test, so
# nothing else is installed in the root beforehand.
#
# Usage: sudo scripts/fresh-machine-check.sh [--only test|demo] [--commit REV] [--root DIR] [--keep]
#                                            [--mirror URL] [--security-mirror URL] [--jobs N]
# On a shared machine run it as `nice -n 19 scripts/fresh-machine-check.sh` (the build inherits the niceness).
# Takes ~15 min on an idle 2-core machine (35 under load), mostly the build; docs/fresh-machine.md records runs.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: fresh-machine-check.sh [options]       (must run as root)
  --only test|demo      run only `make test` or only `make demo` (default: both, test first)
  --commit REV          check this committed revision instead of HEAD (uncommitted changes are never used)
  --root DIR            build the root in DIR (must be absent or empty; default: a temp dir under /var/tmp)
  --keep                keep the root afterwards (default: remove it)
  --mirror URL          Debian mirror (default: the one the host's apt sources use for bookworm)
  --security-mirror URL Debian security mirror (default: the host's, else <mirror>-security)
  --jobs N              pass JOBS=N to make (default: the Makefile's, nproc)
EOF
}

die() {
  echo "fresh-machine-check: $*" >&2
  exit 2
}

# ---- arguments -------------------------------------------------------------------------------------------------
only="" commit="HEAD" root="" keep=0 mirror="" security_mirror="" jobs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="${2:?--only needs test or demo}"; shift 2 ;;
    --commit) commit="${2:?--commit needs a revision}"; shift 2 ;;
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --keep) keep=1; shift ;;
    --mirror) mirror="${2:?--mirror needs a URL}"; shift 2 ;;
    --security-mirror) security_mirror="${2:?--security-mirror needs a URL}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
case "$only" in
  "") targets=(test demo) ;;
  test | demo) targets=("$only") ;;
  *) die "--only takes test or demo, got '$only'" ;;
esac
[ -z "$jobs" ] || [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a positive integer, got '$jobs'"
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, mount and chroot need it)"

# The repository this script lives in. safe.directory: running as root on a checkout owned by someone else would
# otherwise make git refuse it ("dubious ownership").
git_host() { git -c safe.directory='*' "$@"; }
repo="$(git_host -C "$(dirname "$(readlink -f "$0")")/.." rev-parse --show-toplevel)"
rev="$(git_host -C "$repo" rev-parse --verify --quiet "${commit}^{commit}")" || die "no such commit: $commit"

# ---- apt mirror: the host's ------------------------------------------------------------------------------------
# Prints "URI SUITE" for every enabled binary ("deb") entry of the host's apt sources, one-line and deb822 format.
host_apt_entries() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # deb [options] URI SUITE COMPONENTS...; the options may hold spaces.
    awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ } print $i, $(i + 1) }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # One paragraph per entry; Types/URIs/Suites are space-separated lists.
    awk 'BEGIN { RS = ""; FS = "\n" }
         { types = uris = suites = ""; enabled = 1
           for (l = 1; l <= NF; l++) {
             if ($l ~ /^#/) continue
             split($l, kv, ":"); key = tolower(kv[1]); val = substr($l, index($l, ":") + 1)
             if (key == "types") types = " " val " "
             else if (key == "uris") uris = val
             else if (key == "suites") suites = val
             else if (key == "enabled" && val ~ /no/) enabled = 0 }
           if (!enabled || types !~ /[ \t]deb[ \t]/) next
           nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
           for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) if (u[i] != "" && s[j] != "") print u[i], s[j] }' "$f"
  done
}
# First host URI serving SUITE, if any.
host_mirror_for() { host_apt_entries | awk -v s="$1" '$2 == s { print $1; exit }'; }
[ -n "$mirror" ] || mirror="$(host_mirror_for bookworm)"
[ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
mirror="${mirror%/}"
[ -n "$security_mirror" ] || security_mirror="$(host_mirror_for bookworm-security)"
[ -n "$security_mirror" ] || security_mirror="${mirror}-security"
security_mirror="${security_mirror%/}"

# ---- bookkeeping: per-step results, printed on every exit ------------------------------------------------------
# mmdebstrap wants an absent or empty target.
[ -z "$root" ] || [ ! -e "$root" ] || [ -z "$(ls -A "$root")" ] || die "--root $root exists and is not empty"
workdir="$(mktemp -d "${TMPDIR:-/var/tmp}/coretrain-fresh.XXXXXX")"
logdir="$workdir/logs"
mkdir -p "$logdir"
[ -n "$root" ] || root="$workdir/root"
mkdir -p "$root"
root="$(realpath "$root")" # mountinfo shows canonical paths; the safety checks below compare against them
mounts=()                  # mount points in the order they were made; unmounted in reverse
summary=()                 # one line per step
current_step=""            # the step running, for the summary when a signal or error stops it
failed=0
started="$(date +%s)"

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# Mount points at or below the root (5th field of mountinfo).
mounts_under_root() { awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo; }

cleanup() {
  local rc=$? i
  set +e
  # Reverse order: /run, /dev/shm, /dev/pts, /dev, /sys, /proc, then the root's bind onto itself. Lazily when busy
  # (a process left behind in the root, or mounts a test made inside, e.g. ip netns under /run).
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || echo "warning: could not unmount ${mounts[i]}" >&2
  done
  if [ -n "$(mounts_under_root)" ]; then
    # Never rm -rf over a live /dev or /proc.
    echo "warning: still mounted under $root, not removing it:" >&2
    mounts_under_root >&2
  elif [ "$keep" -eq 1 ]; then
    echo "root kept: $root (chroot $root /bin/bash; mount /proc etc. again to run the build there)"
  else
    rm -rf --one-file-system "$root"
  fi
  [ "$rc" -eq 0 ] || summary+=("stopped early (exit $rc)${current_step:+ during: $current_step}")
  echo
  echo "==== fresh-machine-check summary ($(date -u '+%Y-%m-%d %H:%M UTC'), commit ${rev:0:12}) ===="
  printf '  %s\n' "${summary[@]}"
  echo "  total $(fmt_secs $(($(date +%s) - started)))   logs: $logdir"
  if [ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]; then
    echo "RESULT: PASS"
  else
    echo "RESULT: FAIL"
    [ "$rc" -ne 0 ] || rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# step NAME LOGFILE CMD...: runs CMD with output to the terminal and LOGFILE, records PASS/FAIL and the time.
step() {
  local name="$1" log="$2" t0 rc
  shift 2
  echo
  echo "==== $name ===="
  t0="$(date +%s)"
  current_step="$name"
  # tee -i: on Ctrl-C the log keeps what the command prints while it stops (apt finishes its dpkg run first).
  if "$@" 2>&1 | tee -i "$log"; then rc=0; else rc=$?; fi
  current_step=""
  local line
  line="$(printf '%-4s %-22s %8s' "$([ "$rc" -eq 0 ] && echo PASS || echo FAIL)" "$name" "$(fmt_secs $(($(date +%s) - t0)))")"
  [ "$rc" -eq 0 ] || { line+="  (exit $rc)"; failed=1; }
  summary+=("$line")
  return "$rc"
}

echo "fresh-machine-check: commit $rev of $repo"
echo "  root $root, mirror $mirror, security $security_mirror, targets: ${targets[*]}"

# ---- 1. a bare Debian 12 root ----------------------------------------------------------------------------------
if ! command -v mmdebstrap >/dev/null; then
  echo "installing mmdebstrap on the host"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap; }
fi
# --variant=apt: Essential packages plus apt, i.e. less than a minimal install. The three sources are the ones a
# Debian 12 installer writes (release, updates, security).
step "bootstrap (mmdebstrap)" "$logdir/bootstrap.log" \
  mmdebstrap --variant=apt --include=git,make,ca-certificates bookworm "$root" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security_mirror bookworm-security main"

# ---- 2. a clean clone: committed state only, never the working tree -------------------------------------------
git_host clone --quiet --no-hardlinks --no-checkout "$repo" "$root/root/coretrain"
git_host -C "$root/root/coretrain" checkout --quiet --detach "$rev" ||
  die "commit $rev is not reachable from a branch or tag of $repo, so the clone does not have it"
summary+=("PASS clone                   commit $(git_host -C "$root/root/coretrain" log -1 --format='%h %s' | cut -c1-60)")

# ---- 3. what a booted machine has and a bare root lacks -------------------------------------------------------
# The root bound onto itself: inside the chroot "/" must be a mount point, because `ip netns exec` remounts "/" as
# a slave and mounts its own /sys (without it the netns tests fail: '"mount --make-rslave /" failed: Invalid
# argument').
mount --bind "$root" "$root"
mounts+=("$root")
mount --make-private "$root" # nothing mounted inside (e.g. by ip netns) propagates back to the host
mount --bind /proc "$root/proc"
mounts+=("$root/proc")
mount --bind /sys "$root/sys"
mounts+=("$root/sys")
mount --bind /dev "$root/dev" # non-recursive: /dev/pts and /dev/shm are mounted below on their own
mounts+=("$root/dev")
mount --bind /dev/pts "$root/dev/pts"
mounts+=("$root/dev/pts")
# The shared-memory transport's segments live here; a fresh tmpfs so they never mix with the host's.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
mounts+=("$root/dev/shm")
# A booted machine has a tmpfs /run (ip netns keeps its namespaces in /run/netns; they stay off the root's disk).
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$root/run"
mounts+=("$root/run")
mkdir -m 1777 "$root/run/lock"
# Name resolution as on the host ("localhost" must resolve: the TCP store connects to it). --remove-destination:
# never write through a symlink the root may have into the host's own files.
cp --remove-destination /etc/hosts "$root/etc/hosts"
cp --remove-destination /etc/resolv.conf "$root/etc/resolv.conf"

# ---- 4. README's commands, as root in the root ----------------------------------------------------------------
# env -i: nothing from this shell (CC, OMP_*, CORETRAIN_*, ...) leaks in; a fresh login has none of it. As root,
# install-deps.sh calls apt-get without sudo.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM="${TERM:-dumb}" \
    LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /root/coretrain && exec "$@"' bash "$@"
}
make_args=()
[ -z "$jobs" ] || make_args+=("JOBS=$jobs")
for t in "${targets[@]}"; do
  step "make $t" "$logdir/make-$t.log" in_root make "$t" "${make_args[@]}" || true
  # The numbers worth keeping: ctest's tally, skips and total time; the demo's held-out scores.
  case "$t" in
    test) pattern='tests passed|Total Test time' ;;
    demo) pattern='^demo: exact_match' ;;
  esac
  while IFS= read -r l; do summary+=("       $l"); done < <(grep -E "$pattern" "$logdir/make-$t.log" || true)
  if [ "$t" = test ]; then
    skipped="$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$logdir/make-$t.log" || true)"
    summary+=("       skipped (a test's own reason, see the log): $skipped")
  fi
done

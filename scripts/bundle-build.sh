#!/bin/sh
# bundle-build.sh OUT.tar.xz [BUILD_DIR]: a release build made here, packed to run on a machine that has none of
# the Debian packages (a benchmark node lent for minutes, another distribution): apps/coretrain, every gtest
# binary, and the shared libraries they load except glibc's and libstdc++/libgcc_s (the target's own, newer ones
# serve; carrying ours would shadow them for PyTorch in the same environment). Inside the tarball:
#
#   coretrain            wrapper: sets LD_LIBRARY_PATH to the bundle's lib/ and runs bin/coretrain
#   run-tests.sh REPO    runs every gtest binary against the checkout at REPO (on the target), one line each,
#                        printing the oneDNN ISA they ran at; the binaries look for their data and for coretrain
#                        at the absolute paths of this machine's build, so it links those to REPO and the wrapper
#
#   scripts/bundle-build.sh /tmp/ct.tar.xz                  # here; then, there:
#   mkdir -p /tmp/ct && tar -C /tmp/ct -xJf ct.tar.xz && /tmp/ct/run-tests.sh "$PWD"
#   sh bench/node_suite.sh OUTDIR /tmp/ct/coretrain          # the benchmarks, with the peer that machine has
#
# The build is -march=native by default (CORETRAIN_NATIVE): bundle it only for a CPU with this one's
# instructions, or configure with the `portable` preset first.
set -eu
out=${1:?usage: bundle-build.sh OUT.tar.xz [BUILD_DIR]}
build=$(cd "${2:-build/release}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$build/apps/coretrain" ] || { echo "bundle-build.sh: no $build/apps/coretrain (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib"
bins="$build/apps/coretrain $(find "$build/tests" -name 'ct_*_tests' -type f -perm -u+x 2>/dev/null | sort)"
# shellcheck disable=SC2086  # a list of paths without spaces (build trees here have none)
cp $bins "$tmp/bin/"
strip "$tmp"/bin/*
# shellcheck disable=SC2086
ldd $bins | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | while read -r so; do
  case "$(basename "$so")" in
  libc.so.* | libm.so.* | libresolv.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | \
    libstdc++.so.* | libgcc_s.so.*) ;;
  *) cp -L "$so" "$tmp/lib/" ;;
  esac
done
printf '%s\n%s\n' "$src" "$build" >"$tmp/built_at"
cat >"$tmp/coretrain" <<'EOF'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/bin/coretrain" "$@"
EOF
cat >"$tmp/run-tests.sh" <<'EOF'
#!/bin/sh
# run-tests.sh REPO [gtest flags]: every gtest binary of the bundle against the checkout at REPO.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "${1:?usage: run-tests.sh REPO [gtest flags]}" && pwd)
shift
src=$(sed -n 1p "$here/built_at")
build=$(sed -n 2p "$here/built_at")
if [ "$src" != "$repo" ]; then
  [ -e "$src" ] && { echo "run-tests.sh: $src exists and is not $repo; run where it is free" >&2; exit 2; }
  mkdir -p "$(dirname "$src")" && ln -s "$repo" "$src"
fi
mkdir -p "$build/apps" && [ -e "$build/apps/coretrain" ] || ln -s "$here/coretrain" "$build/apps/coretrain"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$repo" || exit 2
rc=0
for t in "$here"/bin/ct_*_tests; do
  start=$(date +%s)
  "$t" --gtest_brief=1 "$@" >"/tmp/$(basename "$t").log" 2>&1
  r=$?
  [ $r -eq 0 ] || rc=1
  log="/tmp/$(basename "$t").log"
  echo "$(basename "$t"): exit $r, $(($(date +%s) - start)) s, $(grep -m1 'oneDNN ISA' "$log")," \
    "$(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$log" | tr -s ' ' | tr '\n' ' ')"
  [ $r -eq 0 ] || grep -E '^\[  FAILED  \]' "$log" | head -20
done
exit $rc
EOF
chmod +x "$tmp/coretrain" "$tmp/run-tests.sh"
tar -C "$tmp" -cJf "$out" .
echo "bundle-build.sh: $out ($(du -h "$out" | cut -f1)): $(ls "$tmp/bin" | wc -l) binaries, $(ls "$tmp/lib" | wc -l) libraries"

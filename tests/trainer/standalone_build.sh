#!/usr/bin/env bash
# ctest "trainer standalone build" (label slow): trainer/ builds against LibTorch alone.
# 1. No trainer/ file includes emulator/ headers.
# 2. trainer/ copied alone out of the tree configures (zlib disabled: LibTorch + CLI11/fmt
#    headers, nothing else), so its CMakeLists needs nothing outside the folder.
# 3. The in-tree trainer/ configured standalone (zlib disabled) into a temp folder in the build
#    dir builds pjemu-trainer; ccache (base_dir = the checkout) reuses the root build's objects
#    when the temp folder sits as deep as the root build's trainer/ folder, so this is a rebuild
#    of the zlib-dependent file and a link, not 15 LibTorch compiles.
# 4. The binary runs --help, does not link libz, and names the missing zlib for a .gz folder.
# Prints the configure and build seconds. With a cold ccache (or none) step 3 compiles the ~16
# LibTorch translation units: minutes on 2 cores. PJEMU_TRAINER_ALONE_CONFIGURE_ONLY=1 stops
# after the standalone configure (steps 1-2 and 3's configure).
# usage: standalone_build.sh SOURCE_DIR BINARY_DIR   (env: PJEMU_JOBS, default 2)
set -euo pipefail
src=${1:?usage: standalone_build.sh SOURCE_DIR BINARY_DIR}
bindir=${2:?usage: standalone_build.sh SOURCE_DIR BINARY_DIR}
if grep -rnE '#\s*include\s+"emulator/' "$src/trainer"; then
  echo "FAIL: trainer/ includes emulator/ headers (it must build against LibTorch alone)"
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pjemu-trainer-alone-XXXXXX")
build=$(mktemp -d "$bindir/trainer-alone-XXXXXX")
trap 'rm -rf "$tmp" "$build"' EXIT
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON "${launcher[@]}")

mkdir -p "$tmp/src"
cp -r "$src/trainer" "$tmp/src/trainer"
if ! cmake -S "$tmp/src/trainer" -B "$tmp/copy-build" "${flags[@]}" >"$tmp/copy.log" 2>&1; then
  cat "$tmp/copy.log"; echo "FAIL: trainer/ alone (copied out of the tree) does not configure"
  exit 1
fi

t0=$(date +%s.%N)
if ! cmake -S "$src/trainer" -B "$build" "${flags[@]}" >"$tmp/configure.log" 2>&1; then
  cat "$tmp/configure.log"; echo "FAIL: standalone configure"; exit 1
fi
t1=$(date +%s.%N)
grep "pjemu-trainer:" "$tmp/configure.log"
if ! grep -q "zlib: no" "$tmp/configure.log"; then echo "FAIL: zlib was not disabled"; exit 1; fi
if [ "${PJEMU_TRAINER_ALONE_CONFIGURE_ONLY:-0}" = 1 ]; then
  printf 'configure %.1f s; build skipped (PJEMU_TRAINER_ALONE_CONFIGURE_ONLY=1)\n' "$(echo "$t1 - $t0" | bc)"
  echo "PASS: trainer/ configures standalone"
  exit 0
fi
if ! cmake --build "$build" -j "${PJEMU_JOBS:-2}" --target pjemu-trainer >"$tmp/build.log" 2>&1; then
  tail -50 "$tmp/build.log"; echo "FAIL: standalone build"; exit 1
fi
t2=$(date +%s.%N)
bin="$build/bin/pjemu-trainer"
help=$("$bin" --help) || { echo "FAIL: --help exits non-zero"; exit 1; }
grep -qi "usage: pjemu-trainer" <<<"$help" || { echo "FAIL: --help: $help"; exit 1; }
# Direct dependencies only (LibTorch itself may pull libz in).
if readelf -d "$bin" | grep NEEDED | grep -q "libz\.so"; then
  echo "FAIL: the zlib-less build links libz"; exit 1
fi
# A .gz-only data folder: a one-line error naming zlib, exit 1 (bad input, not retryable).
mkdir -p "$tmp/gz"
printf '\x1f\x8b\x08\x00' >"$tmp/gz/train-images-idx3-ubyte.gz"
set +e
err=$(cd "$tmp" && "$bin" --data-dir "$tmp/gz" --dir "$tmp/logs" 2>&1 >/dev/null)
rc=$?
set -e
echo "$err"
if [ "$rc" != 1 ] || ! grep -q "without zlib" <<<"$err"; then
  echo "FAIL: expected exit 1 and a 'without zlib' error, got $rc"; exit 1
fi
printf 'configure %.1f s, build %.1f s (ccache: %s)\n' "$(echo "$t1 - $t0" | bc)" \
  "$(echo "$t2 - $t1" | bc)" "${launcher[*]:-off}"
echo "PASS: trainer/ builds standalone"

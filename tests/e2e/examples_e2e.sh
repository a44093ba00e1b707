#!/usr/bin/env bash
# e2e: the Training Operator's own examples (fixtures/examples, YAML verbatim) on images built
# like their Dockerfiles (tests/images/build_images.py smoke-dist elastic-echo), loaded from
# their docker-save archives: smoke-dist (Master 1 + Worker 3, send/recv) and elastic echo
# (c10d, 2 workers) Succeed with the image's own python and torch.
# Usage: examples_e2e.sh PJEMU. Exits 77 (skipped) without root or the packages the images are
# made of.
# Disk: the images are built in the test's own folder and gone when it ends (each archive is
# 1.4 GiB uncompressed, the store's layers 1.5 GiB): one archive at a time, each removed once
# loaded (the second reuses the first's layers by blob), so the test peaks at about 3.5 GiB.
set -euo pipefail
pjemu=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (container filesystems)"; exit 77; }
export PJEMU_ALLOW_REGISTRIES=127.0.0.1,localhost
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
images=$work/images store=$work/store
# build_and_load NAME: builds the image NAME into $images, loads its archive, removes the archive.
build_and_load() {
  local rc=0
  /usr/bin/python3 "$root/tests/images/build_images.py" "$images" "$1" || rc=$?
  [ "$rc" = 77 ] && { echo "skipped: the images' packages are missing"; exit 77; }
  [ "$rc" = 0 ] || { echo "FAIL: build_images.py $1 exited $rc"; exit 1; }
  "$pjemu" image load -i "$images/$1.tar" --image-store "$store"
  rm -f "$images/$1.tar"
}
build_and_load smoke-dist
build_and_load elastic-echo
rm -rf "$images"
expect() { grep -qF -- "$2" "$1" || { cat "$1"; echo "FAIL: expected \"$2\""; exit 1; }; }

"$pjemu" run -f "$root/fixtures/examples/pytorch_job_sendrecv.yaml" --image-store "$store" \
  --all-logs --timeout 4m >"$work/sendrecv.out" 2>&1 || { cat "$work/sendrecv.out"; exit 1; }
expect "$work/sendrecv.out" "rank 0: send/recv smoke test passed"
expect "$work/sendrecv.out" "pytorchjob/pytorch-dist-basic-sendrecv Succeeded"

"$pjemu" run -f "$root/fixtures/examples/echo.yaml" --image-store "$store" \
  --all-logs --timeout 4m >"$work/echo.out" 2>&1 || { cat "$work/echo.out"; exit 1; }
expect "$work/echo.out" "echo: rank=0 world_size="  # nproc_per_node auto: the CPUs
[ "$(grep -c "echo: rank=" "$work/echo.out")" -ge 2 ] || { cat "$work/echo.out"; echo "FAIL: fewer than 2 ranks"; exit 1; }
expect "$work/echo.out" "pytorchjob/elastic-example-echo Succeeded"
echo PASS

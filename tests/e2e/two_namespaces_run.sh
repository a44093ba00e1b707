#!/bin/bash
# Two copies of the seed job, same name and port, in two namespaces, run at the same time on
# the embedded cluster (`pjemu run`) and both succeed; the summary lists both with an accuracy.
# Usage: two_namespaces_run.sh PJEMU
set -uo pipefail
PJEMU=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$("$PJEMU" run -f "$root/fixtures/jobs/seed-in-two-namespaces.yaml" \
  --image-map "$root/tests/e2e/fast-trainer-images.yaml" --timeout 5m 2>&1)
rc=$?
echo "$out" | tail -15
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; exit 1; }
for ns in kubeflow default; do
  grep -Eq "$ns/pytorch-simple +Succeeded .*0\.[0-9]{4}" <<<"$out" ||
    { echo "FAIL: no Succeeded summary row with an accuracy for $ns/pytorch-simple"; exit 1; }
done
echo "two namespaces: both Succeeded"

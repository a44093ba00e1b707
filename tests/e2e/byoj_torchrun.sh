#!/bin/bash
# Bring your own job: a user's image (tests/e2e/byoj/src mapped by byoj/images.yaml) running
# `torchrun train.py` in a Master 1 + Worker 1 job with nprocPerNode 2 forms one world of 4 over
# gloo, with a ConfigMap mounted and in envFrom, a Secret in env, a memory emptyDir at /dev/shm,
# and the master resolved by name through the pod's /etc/hosts.
# Usage: byoj_torchrun.sh PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
PJEMU=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$("$PJEMU" run -f "$here/byoj/torchrun-world4.yaml" --image-map "$here/byoj/images.yaml" \
  --all-logs --timeout 4m 2>&1)
rc=$?
echo "$out" | tail -30
[ "$rc" = 0 ] || { echo "FAIL: pjemu run exited $rc"; exit 1; }
for r in 0 1 2 3; do
  grep -Eq "rank $r of 4: sum 6, lr 0.01, epochs 3, token set, master torchrun-world4-master-0 at (127\.42|10\.244)\.[0-9.]+, python /usr/bin/python3" <<<"$out" ||
    { echo "FAIL: no line for rank $r of a world of 4 with the ConfigMap, Secret and master address"; exit 1; }
done
grep -Eq "default/torchrun-world4 +Succeeded" <<<"$out" || { echo "FAIL: job not Succeeded"; exit 1; }
echo "torchrun world of 4: every rank reported"

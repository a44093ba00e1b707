#!/bin/bash
# Elastic training under real torchrun (c10d rendezvous) scaled with `kubectl scale` against
# `pjemu serve`: one worker forms a world of 1, scaling to 2 re-forms it as a world of 2, scaling
# back to 1 re-forms a world of 1 on the remaining worker; then the job is told to stop through
# its ConfigMap volume (updated in place, as the kubelet's atomic writer does) and Succeeds.
# Usage: kubectl_elastic_scale.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"
die() { echo "FAIL: $*" >&2; tail -30 "$work/serve.log" >&2; exit 1; }
# wait_log POD REGEX SECONDS: until the pod's log has a line matching REGEX after the first
# $skip matching lines (a world seen again after a re-form).
wait_log() {
  local pod=$1 re=$2 secs=$3 skip=${4:-0}
  for _ in $(seq $((secs * 5))); do
    [ "$(kc logs "$pod" 2>/dev/null | grep -cE -- "$re")" -gt "$skip" ] && return 0
    sleep 0.2
  done
  kc logs "$pod" >&2
  die "$pod: no log line /$re/ (after $skip) within ${secs}s"
}

start_serve --image-map "$here/byoj/images.yaml"

kc create -f "$here/byoj/elastic.yaml" >/dev/null || die "create"
start=$(date +%s)
wait_log elastic-worker-0 "elastic rank 0: world 1 " 90
echo "world of 1 after $(($(date +%s) - start))s"
kc scale pytorchjob/elastic --replicas 2 || die "scale to 2"
wait_log elastic-worker-0 "elastic rank [01]: world 2 " 90
wait_log elastic-worker-1 "elastic rank [01]: world 2 " 30
echo "world of 2 after $(($(date +%s) - start))s"
kc scale pytorchjob/elastic --replicas 1 || die "scale to 1"
for _ in $(seq 150); do kc get pod elastic-worker-1 >/dev/null 2>&1 || break; sleep 0.2; done
kc get pod elastic-worker-1 >/dev/null 2>&1 && die "elastic-worker-1 still exists after scaling to 1"
wait_log elastic-worker-0 "elastic rank 0: world 1 " 120 1
echo "world of 1 again after $(($(date +%s) - start))s"
kc patch configmap elastic-control --type merge -p '{"data":{"stop":"now"}}' >/dev/null || die "patch"
out=$(kc wait --for=condition=Succeeded pytorchjob/elastic --timeout=90s 2>&1) || die "wait: $out"
wait_log elastic-worker-0 "stop seen in world 1" 5
echo "elastic 1 -> 2 -> 1: Succeeded after $(($(date +%s) - start))s"

#!/bin/bash
# A user's own script with a real kubectl against `pjemu serve`: `kubectl create configmap
# --from-file` of the code and the hyper-parameters, `kubectl create secret generic`, then a
# job that mounts the code at /workspace (a stock python image) and reads both. The job waits
# for its Secret (CreateContainerConfigError, the kubelet's message), which is created last.
# Usage: kubectl_own_job.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve

printf 'lr = 0.01\n' >"$work/params.ini"
kc create configmap train --from-file="$here/byoj/src/train.py" --from-file="$here/byoj/src/hparams.py" ||
  fail "create configmap train"
kc create configmap train-params --from-file=params.ini="$work/params.ini" --from-literal=EPOCHS=3 ||
  fail "create configmap train-params"
out=$(kc get configmap train -o jsonpath='{.data.hparams\.py}' 2>&1)
grep -q "def load(path):" <<<"$out" || fail "configmap data not served back: $out"
kc create -f "$here/byoj/own-job-from-configmap.yaml" || fail "create job"

for _ in $(seq 100); do
  reason=$(kc get pod own-job-master-0 -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' 2>/dev/null)
  [ "$reason" = CreateContainerConfigError ] && break
  sleep 0.1
done
msg=$(kc get pod own-job-master-0 -o jsonpath='{.status.containerStatuses[0].state.waiting.message}' 2>&1)
[ "$msg" = 'secret "train-token" not found' ] || fail "waiting message: want secret \"train-token\" not found, got: $msg"
kc create secret generic train-token --from-literal=token=s3cr3t || fail "create secret"

out=$(kc wait --for=condition=Succeeded pytorchjob/own-job --timeout=120s 2>&1) || fail "wait: $out"
logs=$(kc logs own-job-master-0 2>&1; kc logs own-job-worker-0 2>&1)
for r in 0 1; do
  grep -Eq "rank $r of 2: sum 1, lr 0.01, epochs 3, token set, master own-job-master-0 at (127\.42|10\.244)\.[0-9.]+, python /usr/bin/python3" <<<"$logs" ||
    fail "rank $r line missing in logs:"$'\n'"$logs"
done
out=$(kc get secrets,configmaps 2>&1)
grep -Eq "^secret/train-token +Opaque +1 " <<<"$out" || fail "kubectl get secrets table: $out"
[ "$failures" = 0 ] || { tail -20 "$work/serve.log"; exit 1; }
echo "own job from a ConfigMap: both ranks ran the mounted script"

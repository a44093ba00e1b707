#!/bin/bash
# The seeds' workflow, verbatim, with a real kubectl against `pjemu serve` (real controller,
# scheduler, kubelet and pjemu-trainer): create, get, get -o yaml, get pods -l (also with the
# legacy pytorch_job_name label), logs -f streaming until the master completes, wait
# --for=condition=Succeeded, describe with events, delete -f leaving nothing behind.
# Usage: serve_seed_workflow.sh KUBECTL PJEMU
set -uo pipefail
K=$1 PJEMU=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"
expect() {  # expect DESCRIPTION OUTPUT REGEX...: every regex must match a line of OUTPUT
  local desc=$1 out=$2
  shift 2
  for re in "$@"; do
    grep -Eq -- "$re" <<<"$out" || fail "$desc: no line matches /$re/ in:"$'\n'"$out"
  done
}

start_serve --image-map "$root/tests/e2e/fast-trainer-images.yaml"
echo "== $("$K" version --client --short 2>/dev/null || "$K" version --client 2>/dev/null | head -1)"

MANIFEST=$root/fixtures/seeds/pytorch-simple.yaml
out=$(kc create -f "$MANIFEST" 2>&1) || fail "create: $out"
expect "create" "$out" "^pytorchjob.kubeflow.org/pytorch-simple created$"
out=$(kc get pytorchjobs -n kubeflow 2>&1)
expect "get pytorchjobs" "$out" "^NAME +STATE +AGE$" "^pytorch-simple +(Created|Running) +[0-9]+s$"
out=$(kc get -o yaml pytorchjobs pytorch-simple -n kubeflow 2>&1)
expect "get -o yaml" "$out" "^kind: PyTorchJob$" "^  name: pytorch-simple$" "image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"

for _ in $(seq 300); do
  kc get pod pytorch-simple-master-0 -n kubeflow -o jsonpath='{.status.phase}' 2>/dev/null | grep -q Running && break
  sleep 0.1
done
kc logs -f pytorch-simple-master-0 -n kubeflow >"$work/logs" 2>&1 &
logs_pid=$!
out=$(kc get pods -l training.kubeflow.org/job-name=pytorch-simple -n kubeflow 2>&1)
expect "get pods -l" "$out" "^NAME +READY +STATUS +RESTARTS +AGE$" "^pytorch-simple-master-0 " "^pytorch-simple-worker-0 "
out=$(kc get pods -l pytorch_job_name=pytorch-simple -n kubeflow -o name 2>&1)
expect "legacy label" "$out" "^pod/pytorch-simple-master-0$" "^pod/pytorch-simple-worker-0$"

out=$(kc wait --for=condition=Succeeded pytorchjob/pytorch-simple -n kubeflow --timeout=180s 2>&1) ||
  fail "wait: $out"
expect "wait" "$out" "pytorchjob.kubeflow.org/pytorch-simple condition met"
for _ in $(seq 100); do kill -0 "$logs_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$logs_pid" 2>/dev/null && fail "logs -f still streaming after the master completed"
expect "logs -f" "$(cat "$work/logs")" "^Using distributed PyTorch with gloo backend$" \
  "^World Size: 2\. Rank: 0$" "^Train Epoch: 1 \[0/60000 \(0%\)\]	loss=2\.[0-9]{4}$" "^accuracy=0\.[0-9]{4}$"

out=$(kc get pytorchjobs -n kubeflow 2>&1)
expect "get after" "$out" "^pytorch-simple +Succeeded +[0-9]+s$"
out=$(kc get pods -n kubeflow 2>&1)
expect "pods completed" "$out" "^pytorch-simple-master-0 +0/1 +Completed +0 "
out=$(kc describe pytorchjob pytorch-simple -n kubeflow 2>&1)
expect "describe" "$out" "^Events:" "SuccessfulCreatePod" "SuccessfulCreateService" "PyTorchJobSucceeded|JobSucceeded"

out=$(kc delete -f "$MANIFEST" 2>&1) || fail "delete: $out"
expect "delete" "$out" "pytorchjob.kubeflow.org \"pytorch-simple\" deleted"
out=$(kc get pods,services -n kubeflow 2>&1)
expect "nothing left" "$out" "^No resources found"

echo "serve seed workflow: $failures failure(s)"
[ "$failures" = 0 ]

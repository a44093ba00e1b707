#!/bin/bash
# Kubeflow Trainer v2 through the other clients a user brings: on one `pjemu serve`, the
# migration guide's TrainJob (torch-distributed, numNodes 2 x numProcPerNode 2, torchrun DDP)
# submitted twice at once, by kubectl 1.20 (the oldest kubectl: create, the server's columns of
# `get trainjobs`, `wait --for=condition=complete`, logs) and by the official Python client
# (trainjob_python.py: CustomObjectsApi create and watch, the JobSet, BatchV1Api's Job, the pods
# and their logs); each ends Complete with one world of 4.
# Usage: trainjob_clients.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
. "$(dirname "$0")/../support/serve_kubectl.sh"
fixture=fixtures/trainer-v2

start_serve --image-map $fixture/images.yaml
/usr/bin/python3 "$(dirname "$0")/trainjob_python.py" "$work/kubeconfig" $fixture/trainjob.yaml \
  >"$work/python.out" 2>&1 &
python_pid=$!

sed 's/name: pytorch-simple/name: by-kubectl/' $fixture/trainjob.yaml | kc create -f - >/dev/null 2>&1 ||
  fail "kubectl create -f trainjob"
out=$(kc wait --for=condition=complete trainjob/by-kubectl --timeout=240s 2>&1)
expect_match "kubectl wait --for=condition=complete" "condition met" "$out"
out=$(kc get trainjobs 2>&1)
expect_match "get trainjobs: the server's columns" "^NAME +STATE +AGE" "$out"
expect_match "get trainjobs: by-kubectl Complete" "^by-kubectl +Complete +" "$out"
out=$(kc get jobs 2>&1)
expect_match "get jobs: the JobSet's Job" "^by-kubectl-node-0 +Complete +2/2 +" "$out"
logs=""
for pod in $(kc get pods -l jobset.sigs.k8s.io/jobset-name=by-kubectl -o name 2>&1); do
  logs+=$(kc logs "$pod" 2>&1)$'\n'
done
for r in 0 1 2 3; do
  expect_match "kubectl 1.20: rank $r in a world of 4" "rank $r: WORLD_SIZE=4 world 4, rank sum 6" "$logs"
done

wait $python_pid
rc=$?
cat "$work/python.out"
[ "$rc" = 0 ] || fail "the Python client's TrainJob (exit $rc)"
[ "$failures" = 0 ] || { tail -30 "$work/serve.log"; exit 1; }
echo "TrainJob: one world of 4 through kubectl 1.20 and the Python client"

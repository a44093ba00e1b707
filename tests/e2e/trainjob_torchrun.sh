#!/bin/bash
# Kubeflow Trainer v2 as a user meets it: the migration guide's TrainJob (fixtures/trainer-v2:
# torch-distributed, numNodes 2, numProcPerNode 2, the seed's image mapped onto a torchrun DDP
# script) on `pjemu run` (progress and summary), then on `pjemu serve` with kubectl: the default
# ClusterTrainingRuntime is there, the TrainJob reaches Complete (AllJobsCompleted) with ONE
# world of 4 (every rank prints WORLD_SIZE=4 and checks an all_reduce), its JobSet, Job and pods
# are named and labelled as upstream, jobsStatus is copied, and a reserved PET_* env is refused
# by the webhook naming the field.
# Usage: trainjob_torchrun.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
. "$(dirname "$0")/../support/serve_kubectl.sh"
fixture=fixtures/trainer-v2

out=$("$PJEMU" run -f $fixture/trainjob.yaml --image-map $fixture/images.yaml --all-logs \
  --timeout 4m 2>&1)
rc=$?
echo "$out" | tail -15
[ "$rc" = 0 ] || fail "pjemu run exited $rc"
for r in 0 1 2 3; do
  expect_match "pjemu run: rank $r in a world of 4" "rank $r: WORLD_SIZE=4 world 4, rank sum 6" "$out"
done
expect_match "pjemu run: summary" "default/pytorch-simple +Complete" "$out"

start_serve --image-map $fixture/images.yaml
out=$(kc get clustertrainingruntimes 2>&1)
expect_match "default runtime installed" "^torch-distributed " "$out"
kc create -f $fixture/trainjob.yaml >/dev/null 2>&1 || fail "create trainjob"
out=$(kc wait --for=condition=complete trainjob/pytorch-simple --timeout=180s 2>&1)
expect_match "wait --for=condition=complete" "condition met" "$out"
out=$(kc get trainjob pytorch-simple -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason};{end} {.status.jobsStatus[0].name} {.status.jobsStatus[0].succeeded}' 2>&1)
expect_match "Complete from the JobSet, jobsStatus" "^Complete=True/AllJobsCompleted; node 1$" "$out"
out=$(kc get trainjobs 2>&1)
expect_match "get trainjobs: State column" "^pytorch-simple +Complete +" "$out"
out=$(kc get jobset pytorch-simple -o 'jsonpath={.status.terminalState} {.status.restarts} {.metadata.ownerReferences[0].kind}' 2>&1)
[ "$out" = "Completed 0 TrainJob" ] || fail "jobset: want 'Completed 0 TrainJob', got '$out'"
out=$(kc get job pytorch-simple-node-0 -o 'jsonpath={.metadata.labels.jobset\.sigs\.k8s\.io/replicatedjob-name} {.metadata.labels.jobset\.sigs\.k8s\.io/job-index} {.spec.completionMode} {.status.succeeded}' 2>&1)
[ "$out" = "node 0 Indexed 2" ] || fail "job: want 'node 0 Indexed 2', got '$out'"
out=$(kc get svc pytorch-simple -o 'jsonpath={.spec.clusterIP}' 2>&1)
[ "$out" = None ] || fail "headless service: want clusterIP None, got '$out'"
names=$(kc get pods -l jobset.sigs.k8s.io/jobset-name=pytorch-simple \
  -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.hostname}.{.spec.subdomain}{"\n"}{end}' 2>&1)
for i in 0 1; do
  expect_match "pod $i: name and hostname.subdomain" \
    "^pytorch-simple-node-0-$i-[a-z0-9]{5} pytorch-simple-node-0-$i\.pytorch-simple$" "$names"
done
logs=""
for pod in $(awk '{print $1}' <<<"$names"); do logs+=$(kc logs "$pod" 2>&1)$'\n'; done
for r in 0 1 2 3; do
  expect_match "serve: rank $r in a world of 4" "rank $r: WORLD_SIZE=4 world 4, rank sum 6" "$logs"
done
env=$(kc get pod "$(head -1 <<<"$names" | awk '{print $1}')" \
  -o 'jsonpath={range .spec.containers[0].env[*]}{.name}={.value};{end}' 2>&1)
expect_match "PET_* env" "PET_NNODES=2;PET_NPROC_PER_NODE=2;PET_NODE_RANK=;PET_MASTER_ADDR=pytorch-simple-node-0-0.pytorch-simple;PET_MASTER_PORT=29500;" "$env"
grep -Eq "(^|;)(MASTER_ADDR|RANK|WORLD_SIZE)=" <<<"$env" && fail "v1 env injected: $env"

out=$(sed 's/numProcPerNode: 2/numProcPerNode: 2\n    env: [{name: PET_NNODES, value: "4"}]/; s/name: pytorch-simple/name: reserved/' \
  $fixture/trainjob.yaml | kc create -f - 2>&1)
expect_match "reserved env refused naming the field" \
  'denied the request: spec.trainer.env: Invalid value: .*must not have reserved envs, invalid envs configured: \[PET_NNODES\]' "$out"

[ "$failures" = 0 ] || { tail -30 "$work/serve.log"; exit 1; }
echo "TrainJob: one world of 4 on pjemu run and pjemu serve, JobSet/Job/pods as upstream"

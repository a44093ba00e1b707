#!/bin/bash
# Seed 004 with a real kubectl against `pjemu serve`: T9k's tutorial job (fixtures/t9k/job.yaml:
# a PVC, a PyTorchTrainingJob with torchrun, procPerNode "4", a TensorBoard) is created with
# `kubectl create -f`, followed as the tutorial's README says (`kubectl get -f job.yaml -o wide`,
# `kubectl logs -l tensorstack.dev/owner-name=...`), reaches phase Succeeded with T9k's
# conditions, tasks, aggregate and events, trains the project's own script to an accuracy, and
# leaves its TensorBoard logs on the PVC. A job with a bad field is refused naming the field.
# Usage: t9k_tutorial.sh KUBECTL PJEMU
set -uo pipefail
. "$(dirname "$0")/byoj/needs-sandbox.sh"
K=$1 PJEMU=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"
job=$root/fixtures/t9k/job.yaml
name=torch-mnist-trainingjob

start_serve --image-map "$root/fixtures/image-maps/t9k-tutorial.yaml"

out=$(kc create -f "$job" 2>&1) || fail "create: $out"
expect_match "create" "pytorchtrainingjob.batch.tensorstack.dev/$name created" "$out"
out=$(kc get pj 2>&1)
expect_match "get pj (short name)" "^$name +(Pending|Running|Succeeded) " "$out"

phase=
for _ in $(seq 1500); do
  phase=$(kc get pytorchtrainingjob $name -o 'jsonpath={.status.phase}' 2>/dev/null)
  case $phase in Succeeded|Failed) break ;; esac
  sleep 0.2
done
[ "$phase" = Succeeded ] || fail "phase: want Succeeded, got '$phase'"

out=$(kc get -f "$job" -o wide 2>&1)
expect_match "get -f job.yaml -o wide" "$name +Succeeded +[0-9a-z]+ +0 +0 +1 +0" "$out"
conds=$(kc get pj $name -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason};{end}' 2>&1)
for c in "Initialized=True/" "Completed=True/Succeeded" "Running=False/Succeeded" \
         "Failed=False/Succeeded" "ReplicaFailure=False/"; do
  grep -qF "$c;" <<<"$conds" || fail "condition $c missing: $conds"
done
pod=$(kc get pj $name -o 'jsonpath={.status.tasks[0].replicas[0].name}' 2>&1)
expect_match "tasks[0].replicas[0].name" "^$name-[0-9a-f]{5}-node-0$" "$pod"
expect_match "aggregate" '"succeeded":1' "$(kc get pj $name -o 'jsonpath={.status.aggregate}' 2>&1)"
events=$(kc get events --field-selector "involvedObject.name=$name" -o 'jsonpath={range .items[*]}{.reason}:{.message};{end}' 2>&1)
expect_match "Created event" "Created:A PyTorchTrainingJob has been created: $name;" "$events"
expect_match "Start event" "Start:The job has been initialized successfully.;" "$events"
expect_match "NewReplica event" "NewReplica:Create the replica\[$pod\] for the first time.;" "$events"
out=$(kc describe pj $name 2>&1)
expect_match "describe" "Phase: +Succeeded" "$out"

logs=$(kc logs -l "tensorstack.dev/owner-name=$name" --tail=-1 2>&1)
expect_match "logs -l owner-name: every rank joined" "Using distributed PyTorch with gloo backend" "$logs"
[ "$(grep -c "Using distributed PyTorch with gloo backend" <<<"$logs")" = 4 ] ||
  fail "want 4 ranks' lines (procPerNode \"4\"): $logs"
expect_match "logs: test accuracy" "test loss: [0-9.]+, test accuracy: 0\.[0-9]{4}" "$logs"
out=$(kc get tensorboards 2>&1)
expect_match "the job's TensorBoard" "^$name-[0-9a-f]{5} " "$out"

bad=$(sed -e 's/restartPolicy: ExitCode/restartPolicy: Sometimes/' -e "s/name: $name/name: bad-job/" "$job")
out=$(kc create -f - <<<"$bad" 2>&1)
expect_match "a bad restartPolicy is refused naming the field" \
  'spec.replicaSpecs\[0\].restartPolicy: Unsupported value: "Sometimes"' "$out"

[ "$failures" = 0 ] || { tail -30 "$work/serve.log"; exit 1; }
echo "t9k tutorial: $name Succeeded with T9k's conditions, tasks, events and logs"

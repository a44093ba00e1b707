#!/bin/bash
# Kueue through a real kubectl and the Python client against `pjemu serve --config
# fixtures/clusters/two-gpu-nodes.yaml` (two nodes, one pretend GPU each): the queue of
# fixtures/kueue/gpu-queue.yaml (2 GPUs) takes the five jobs of jobs-mixed.yaml (Job, JobSet,
# PyTorchJob, TrainJob, Job): the Python client watches the Workloads (never more than 2 GPUs
# admitted, the queue's order, all Finished); kubectl shows Kueue's columns and every job
# Complete/Succeeded; an urgent job preempts the newest of two running ones, which is requeued
# and completes; bad Kueue objects are refused with Kueue's messages.
# Usage: kueue_clients.sh KUBECONFIG PJEMU [PYTHON]
set -uo pipefail
K=$1 PJEMU=$2 PY=${3:-/usr/bin/python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve --config "$root/fixtures/clusters/two-gpu-nodes.yaml"
out=$(kc apply -f "$root/fixtures/kueue/gpu-queue.yaml" 2>&1) || fail "apply the queue: $out"

names=(q1-job q2-jobset q3-pytorchjob q4-trainjob q5-job)
"$PY" "$(dirname "$0")/kueue_python.py" "$work/kubeconfig" "${names[@]}" >"$work/python.log" 2>&1 &
py_pid=$!
sleep 1  # the watch is open
# One at a time, a second apart: the queue orders by creation time (seconds).
"$PY" -c 'import sys, yaml; [open(sys.argv[2] + "/job-%d.yaml" % i, "w").write(yaml.safe_dump(d)) for i, d in enumerate(yaml.safe_load_all(open(sys.argv[1])))]' \
  "$root/fixtures/kueue/jobs-mixed.yaml" "$work"
for i in 0 1 2 3 4; do
  out=$(kc create -f "$work/job-$i.yaml" 2>&1) || fail "create job $i: $out"
  sleep 1.1
done
out=$(kc get workloads 2>&1)
expect_match "workload columns" "^NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE" "$out"
expect_match "a workload per job" "^job-q1-job-[0-9a-f]{5} +team-queue +team +True" "$out"
wait "$py_pid" || fail "python client (below)"
cat "$work/python.log"
out=$(kc get jobs q1-job q5-job 2>&1)
expect_match "Jobs complete" "q5-job +Complete" "$out"
st=$(kc get jobset q2-jobset -o jsonpath='{.status.terminalState}')
[ "$st" = Completed ] || fail "jobset q2: terminalState '$st'"
st=$(kc get pytorchjob q3-pytorchjob -o jsonpath='{.status.conditions[-1:].type}')
[ "$st" = Succeeded ] || fail "pytorchjob q3: '$st'"
st=$(kc get trainjob q4-trainjob -o jsonpath='{.status.conditions[-1:].type}')
[ "$st" = Complete ] || fail "trainjob q4: '$st'"
out=$(kc get clusterqueue team -o wide 2>&1)
expect_match "clusterqueue columns" "^NAME +COHORT +STRATEGY +PENDING WORKLOADS +ADMITTED WORKLOADS" "$out"
expect_match "clusterqueue row" "^team +BestEffortFIFO +0 +0" "$out"
out=$(kc get localqueues 2>&1)
expect_match "localqueue row" "^team-queue +team +0 +0" "$out"
out=$(kc describe job q1-job 2>&1)
expect_match "the job's Kueue events" "Started .*Admitted by clusterQueue team" "$out"
expect_match "the flavor's node label on the pods" "nvidia.com/gpu.product=NVIDIA-H200" "$out"

# Preemption: two long jobs hold both GPUs; an urgent one takes the newer one's place.
"$PY" - "$work" <<'PY' || fail "preemption yaml"
import sys, yaml
work = sys.argv[1]
job = yaml.safe_load(open(work + "/job-0.yaml"))
for name in ("low-a", "low-b"):
    job["metadata"]["name"] = name
    job["spec"]["template"]["spec"]["containers"][0]["command"] = ["sleep", "15"]
    yaml.safe_dump(job, open(work + "/" + name + ".yaml", "w"))
urgent = yaml.safe_load(open(work + "/job-2.yaml"))
urgent["metadata"]["name"] = "urgent"
urgent["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"
yaml.safe_dump(urgent, open(work + "/urgent.yaml", "w"))
PY
for n in low-a low-b; do
  kc create -f "$work/$n.yaml" >/dev/null 2>&1 || fail "create $n"
  sleep 1.1
done
for _ in $(seq 100); do
  [ "$(kc get job low-b -o jsonpath='{.status.active}' 2>/dev/null)" = 1 ] && break
  sleep 0.2
done
kc create -f "$work/urgent.yaml" >/dev/null 2>&1 || fail "create urgent"
out=$(kc wait --for=condition=Succeeded pytorchjob/urgent --timeout=120s 2>&1) || fail "urgent: $out"
out=$(kc wait --for=condition=Complete job/low-a job/low-b --timeout=120s 2>&1) || fail "low jobs: $out"
wl=$(kc get workloads -o name | grep "job-low-b-")
out=$(kc get "$wl" -o jsonpath='{range .status.conditions[*]}{.type}={.status}/{.reason};{end}')
expect_match "low-b preempted, requeued, readmitted, finished" \
  "Evicted=False/QuotaReserved;Preempted=False/QuotaReserved;Requeued=True/Preempted;Finished=True/Succeeded" "$out"
out=$(kc describe job low-b 2>&1)
expect_match "low-b stopped by the preemption" "Stopped .*Preempted to accommodate a workload" "$out"
out=$(kc describe job low-a 2>&1)
grep -q "Preempted to accommodate" <<<"$out" && fail "low-a (older) was preempted"

# Bad objects, with Kueue's messages.
cat >"$work/bad-cq.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: h200
      resources: [{name: cpu, nominalQuota: "-1"}]
YAML
out=$(kc create -f "$work/bad-cq.yaml" 2>&1) && fail "negative quota accepted"
expect_match "negative quota" 'admission webhook "vclusterqueue.kb.io" denied the request: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].nominalQuota: Invalid value: "-1": must be greater than or equal to 0' "$out"
out=$(kc patch localqueue team-queue --type=merge -p '{"spec":{"clusterQueue":"other"}}' 2>&1) && fail "clusterQueue changed"
expect_match "immutable clusterQueue" 'spec.clusterQueue: Invalid value: "other": field is immutable' "$out"

# v1beta1, still served (deprecated) and converted: `cohort` is v1beta2's `cohortName`.
cat >"$work/v1beta1-cq.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: old-style}
spec:
  cohort: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: h200, resources: [{name: cpu, nominalQuota: 4}]}]
YAML
out=$(kc create -f "$work/v1beta1-cq.yaml" 2>&1) || fail "v1beta1 create: $out"
expect_match "v1beta1's deprecation warning" "Warning: This version is deprecated. Use v1beta2 instead." "$out"
out=$(kc get clusterqueues.v1beta2.kueue.x-k8s.io old-style -o jsonpath='{.apiVersion} {.spec.cohortName}' 2>&1)
[ "$out" = "kueue.x-k8s.io/v1beta2 org" ] || fail "stored as v1beta2: '$out'"
out=$(kc get clusterqueues.v1beta1.kueue.x-k8s.io old-style -o jsonpath='{.apiVersion} {.spec.cohort}' 2>/dev/null)
[ "$out" = "kueue.x-k8s.io/v1beta1 org" ] || fail "read as v1beta1: '$out'"

if [ "$failures" -gt 0 ]; then echo "kueue_clients: $failures failure(s)"; tail -20 "$work/serve.log"; exit 1; fi
echo "kueue_clients: all passed"

#!/bin/bash
# Nodes, placement and gangs through a real kubectl and the Python client against `pjemu serve
# --config fixtures/clusters/two-gpu-nodes.yaml --gang-scheduler-name scheduler-plugins`:
# seed 000 verbatim puts its Master and Worker on different nodes, each with its own (pretend)
# GPU, and succeeds; a pod that fits nowhere shows kube-scheduler's reasons; a gang that can
# never fit (minAvailable 10) stays Created with its PodGroup Pending and coscheduling's reason;
# the Python client sees the same nodes and PodGroup.
# Usage: serve_nodes_gangs.sh KUBECTL PJEMU [PYTHON]
set -uo pipefail
K=$1 PJEMU=$2 PY=${3:-/usr/bin/python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve --config "$root/fixtures/clusters/two-gpu-nodes.yaml" --gang-scheduler-name scheduler-plugins \
  --image-map "$root/tests/e2e/nodes-fast-nccl-on-cpu.yaml"

out=$(kc get nodes 2>&1)
expect_match "two nodes" "^gpu-node-a +Ready" "$out"
expect_match "two nodes" "^gpu-node-b +Ready" "$out"

SEED=$root/fixtures/seeds/pytorch_job_mnist_nccl.yaml
job=$(grep -m1 '^  name:' "$SEED" | awk '{print $2}' | tr -d '"')
ns=default
out=$(kc create -f "$SEED" 2>&1) || fail "create seed: $out"
out=$(kc wait --for=condition=Succeeded "pytorchjob/$job" -n "$ns" --timeout=240s 2>&1) || fail "seed wait: $out"
m=$(kc get pod "$job-master-0" -n "$ns" -o jsonpath='{.spec.nodeName}')
w=$(kc get pod "$job-worker-0" -n "$ns" -o jsonpath='{.spec.nodeName}')
echo "== seed 000: master on $m, worker on $w"
[ -n "$m" ] && [ -n "$w" ] && [ "$m" != "$w" ] || fail "master on '$m', worker on '$w': want two nodes"
out=$(kc describe pytorchjob "$job" -n "$ns" 2>&1)
expect_match "the seed's PodGroup deleted once it ended" "SuccessfulDeletePodGroup .*Deleted PodGroup: $job" "$out"

cat >"$work/nowhere.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: nowhere}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100}
  containers: [{name: c, image: docker.io/library/busybox:1.36, command: [sleep, "1"]}]
YAML
kc create -f "$work/nowhere.yaml" >/dev/null 2>&1 || fail "create nowhere"
want="0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
for _ in $(seq 50); do
  msg=$(kc get pod nowhere -o jsonpath='{.status.conditions[0].message}' 2>/dev/null)
  [ -n "$msg" ] && break
  sleep 0.1
done
[ "$msg" = "$want" ] || fail "nowhere: '$msg'"
out=$(kc describe pod nowhere 2>&1)
expect_match "describe nowhere" "Warning +FailedScheduling .*didn't match Pod's node affinity/selector" "$out"

cat >"$work/big.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: big-gang}
spec:
  runPolicy:
    schedulingPolicy: {minAvailable: 10}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: docker.io/library/busybox:1.36, command: [sleep, "5"]}]
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: docker.io/library/busybox:1.36, command: [sleep, "5"]}]
YAML
kc create -f "$work/big.yaml" >/dev/null 2>&1 || fail "create big-gang"
sleep 3
out=$(kc get pytorchjob big-gang 2>&1)
expect_match "big gang stays Created" "^big-gang +Created" "$out"
out=$(kc get podgroups.scheduling.x-k8s.io big-gang 2>&1)
expect_match "its PodGroup is Pending" "^big-gang +Pending +10 " "$out"
msg=$(kc get pod big-gang-master-0 -o jsonpath='{.status.conditions[0].message}' 2>&1)
expect_match "coscheduling's reason" "pre-filter pod big-gang-master-0 cannot find enough sibling pods, current pods number: 2, minMember of group: 10" "$msg"
out=$(kc describe pytorchjob big-gang 2>&1)
expect_match "the job's events say why" "Warning +Unschedulable .*Error pod big-gang-master-0 condition message: 0/2 nodes" "$out"

out=$("$PY" - "$work/kubeconfig" "$ns" "$job" <<'PYEOF' 2>&1
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
nodes = sorted(n.metadata.name for n in core.list_node().items)
print("nodes", " ".join(nodes))
m = core.read_namespaced_pod(sys.argv[3] + "-master-0", sys.argv[2]).spec.node_name
w = core.read_namespaced_pod(sys.argv[3] + "-worker-0", sys.argv[2]).spec.node_name
print("apart", m != w)
pg = client.CustomObjectsApi().get_namespaced_custom_object(
    "scheduling.x-k8s.io", "v1alpha1", "default", "podgroups", "big-gang")
print("podgroup", pg["status"]["phase"], pg["spec"]["minMember"])
PYEOF
)
expect_match "python: nodes" "^nodes gpu-node-a gpu-node-b$" "$out"
expect_match "python: apart" "^apart True$" "$out"
expect_match "python: podgroup" "^podgroup Pending 10$" "$out"

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; tail -20 "$work/serve.log"; exit 1; }

#!/bin/bash
# Client test: ConfigMaps, Secrets, PVCs, PVs and StorageClasses through one kubectl against
# `pjemu serve`: `create configmap --from-file`, `create secret generic --from-literal`, a
# Secret's stringData folded into base64 data, a PVC/PV/StorageClass applied, the
# `get secrets,pvc,pv,sc` tables, and the API server's refusals (bad config key, bad subPath,
# a job's pod refused with a FailedCreatePod event).
# Usage: kubectl_config_test.sh KUBECTL PJEMU
set -uo pipefail
K=$1 PJEMU=$2
if [ ! -x "$K" ]; then echo "SKIP: $K is not present"; exit 0; fi
. "$(dirname "$0")/../support/serve_kubectl.sh"
start_serve --output-dir "$work/state"
minor=$(kc version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -1)

# ConfigMap from a file, read back byte for byte.
printf 'import torch\nprint("lr", 0.1)\n' >"$work/train.py"
expect_match "create configmap" '^configmap/train created$' "$(cd "$work" && kc create configmap train --from-file=train.py 2>&1)"
[ "$(kc get configmap train -o jsonpath='{.data.train\.py}')" = "$(cat "$work/train.py")" ] \
  || fail "configmap data: $(kc get configmap train -o yaml 2>&1)"

expect_match "create namespace" '^namespace/team created$' "$(kc create namespace team 2>&1)"

# Secret from a literal, and one with stringData: base64 data, type Opaque.
expect_match "create secret" '^secret/tok created$' "$(kc create secret generic tok --from-literal=token=abc 2>&1)"
[ "$(kc get secret tok -o jsonpath='{.data.token}')" = "YWJj" ] || fail "secret data: $(kc get secret tok -o yaml 2>&1)"
cat >"$work/objects.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: alice}
data: {user: Ym9i, pass: cHc=}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/none
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-manual}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /tmp/pjemu-pv-manual}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
YAML
out=$(kc apply -f "$work/objects.yaml" 2>&1)
for o in secret/creds storageclass.storage.k8s.io/fast persistentvolume/pv-manual persistentvolumeclaim/data; do
  expect_match "apply $o" "^$o created$" "$out"
done
[ "$(kc get secret creds -o jsonpath='{.data.user} {.data.pass} {.type}')" = "YWxpY2U= cHc= Opaque" ] \
  || fail "stringData: $(kc get secret creds -o yaml 2>&1)"
[ "$(kc get sc fast -o jsonpath='{.reclaimPolicy} {.volumeBindingMode}')" = "Delete Immediate" ] \
  || fail "storageclass defaults: $(kc get sc fast -o yaml 2>&1)"

# The tables kubectl prints.
out=$(kc get secrets,pvc,pv,sc 2>&1)
expect_match "secrets header" '^NAME +TYPE +DATA +AGE$' "$out"
expect_match "secrets row" '^secret/tok +Opaque +1 +[0-9]+s$' "$out"
expect_match "pvc header" '^NAME +STATUS +VOLUME +CAPACITY +ACCESS MODES +STORAGECLASS +AGE' "$out"
expect_match "pvc row" '^persistentvolumeclaim/data +Pending +fast +[0-9]+s' "$out"
expect_match "pv header" '^NAME +CAPACITY +ACCESS MODES +RECLAIM POLICY +STATUS +CLAIM +STORAGECLASS +REASON +AGE' "$out"
expect_match "pv row" '^persistentvolume/pv-manual +2Gi +RWO +Retain +(Pending|Available) +manual +[0-9]+s' "$out"
expect_match "sc header" '^NAME +PROVISIONER +RECLAIMPOLICY +VOLUMEBINDINGMODE +ALLOWVOLUMEEXPANSION +AGE$' "$out"
expect_match "sc row" '^storageclass.storage.k8s.io/fast +example.com/none +Delete +Immediate +false +[0-9]+s$' "$out"
expect_match "configmaps" '^train +1 +[0-9]+s$' "$(kc get configmaps 2>&1)"

# Refusals, worded as the API server words them.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {"a b": x}\n' >"$work/bad.yaml"
expect_match "bad key" 'The ConfigMap "bad" is invalid: data\[a b\]: Invalid value: "a b": a valid config key must consist of alphanumeric characters' \
  "$(kc create -f "$work/bad.yaml" 2>&1)"
cat >"$work/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: c, image: busybox, volumeMounts: [{name: cfg, mountPath: /cfg, subPath: ../x}]}
  volumes: [{name: cfg, configMap: {name: train}}]
YAML
expect_match "bad subPath" "The Pod \"p\" is invalid: spec.containers\[0\].volumeMounts.subPath: Invalid value: \"../x\": must not contain '..'" \
  "$(kc create -f "$work/pod.yaml" 2>&1)"
# A job whose template mounts no volume: the webhook admits it, its pod is refused, and the
# operator says so in a FailedCreatePod event.
cat >"$work/job.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mounts}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - {name: pytorch, image: busybox, command: ["true"], volumeMounts: [{name: cfg, mountPath: /cfg}]}
YAML
expect_match "job with a bad mount" '^pytorchjob.kubeflow.org/mounts created$' "$(kc create -f "$work/job.yaml" 2>&1)"
for _ in $(seq 100); do
  out=$(kc get events --field-selector reason=FailedCreatePod 2>&1)
  grep -q FailedCreatePod <<<"$out" && break
  sleep 0.05
done
expect_match "FailedCreatePod" 'Error creating: Pod "mounts-master-0" is invalid: spec.containers\[0\].volumeMounts\[0\].name: Not found: "cfg"' "$out"
out=$(kc patch pvc data --type merge -p '{"spec":{"accessModes":["ReadWriteMany"]}}' 2>&1)
expect_match "pvc immutable" 'spec: Forbidden: spec is immutable after creation except resources.requests' "$out"

if [ "$failures" -ne 0 ]; then echo "kubectl 1.$minor: $failures failure(s)" >&2; exit 1; fi
echo "kubectl 1.$minor: all config and storage checks passed"

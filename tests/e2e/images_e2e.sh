#!/usr/bin/env bash
# e2e: jobs whose images exist only as `docker save` archives (loaded with `pjemu image load`)
# or only in a loopback registry, YAML unchanged, each running its image's own interpreter and
# files: a PyTorchJob on the loaded Python image; a PyTorchTrainingJob (T9k) pulling the
# four-layer image (whiteouts, opaque dir, User, WorkingDir, Entrypoint) with an
# imagePullSecret; a TrainJob pulling the Python image with the user's Docker config; and the
# kubelet's reasons for a missing image and for one pulled without credentials.
# Usage: images_e2e.sh PJEMU TEST_IMAGES_DIR. Exits 77 (skipped) without root, the images or
# the registry tools. Nothing leaves 127.0.0.1: PJEMU_ALLOW_REGISTRIES names it alone.
set -euo pipefail
pjemu=$1
images=$2
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (container filesystems)"; exit 77; }
for f in busybox.tar python.tar oci/layers oci/python; do
  [ -e "$images/$f" ] || { echo "skipped: no $images/$f (the images: fixture)"; exit 77; }
done
command -v docker-registry >/dev/null && command -v skopeo >/dev/null ||
  { echo "skipped: docker-registry or skopeo missing"; exit 77; }
export PJEMU_ALLOW_REGISTRIES=127.0.0.1,localhost
work=$(mktemp -d)
reg=$work/registry
cleanup() {
  "$here/../images/registry.sh" stop "$reg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect FILE TEXT: the run's output has TEXT
  grep -qF -- "$2" "$1" || { cat "$1"; fail "expected \"$2\""; }
}

echo "== a PyTorchJob on an image loaded from a docker-save archive"
store=$work/store
"$pjemu" image load -i "$images/python.tar" --image-store "$store"
"$pjemu" image ls --image-store "$store" | tee "$work/ls"
expect "$work/ls" "pjemu.test/python"
cat > "$work/pyjob.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: loaded-python}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: pjemu.test/python:3.11
              command: [python, -c]
              args:
                - |
                  import os, sys
                  print("exe", sys.executable, "rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])
                  print(open("/etc/os-release").readline().strip())
                  try:
                      import torch
                  except ImportError:
                      print("the image has no torch")
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: pjemu.test/python:3.11
              command: [python, -c, "import os; print('worker rank', os.environ['RANK'])"]
YAML
"$pjemu" run -f "$work/pyjob.yaml" --image-store "$store" --all-logs --timeout 2m >"$work/py.out" 2>&1 ||
  { cat "$work/py.out"; fail "pjemu run exited $?"; }
expect "$work/py.out" "exe /usr/bin/python rank 0 of 2"
expect "$work/py.out" 'PRETTY_NAME="pjemu test image'
expect "$work/py.out" "the image has no torch"
expect "$work/py.out" "pytorchjob/loaded-python Succeeded"

echo "== a loopback registry with htpasswd; images pulled, never loaded"
"$here/../images/registry.sh" start "$reg" --htpasswd pjemu:secret-pw >/dev/null
port=$(cat "$reg/port")
"$here/../images/registry.sh" push "$reg" "$images/oci/layers" pjemu/layers:1 --creds pjemu:secret-pw
"$here/../images/registry.sh" push "$reg" "$images/oci/python" pjemu/python:3.11 \
  --creds pjemu:secret-pw
auth=$(printf 'pjemu:secret-pw' | base64 -w0)
config="{\"auths\":{\"127.0.0.1:$port\":{\"auth\":\"$auth\"}}}"
pulled=$work/pulled

echo "== a PyTorchTrainingJob (T9k) with an imagePullSecret"
cat > "$work/t9k.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata: {name: regcred}
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: $(printf '%s' "$config" | base64 -w0)
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: PyTorchTrainingJob
metadata: {name: pulled-layers}
spec:
  replicaSpecs:
    - type: master
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          imagePullSecrets: [{name: regcred}]
          containers:
            - name: pytorch
              image: 127.0.0.1:$port/pjemu/layers:1
YAML
"$pjemu" run -f "$work/t9k.yaml" --image-store "$pulled" --all-logs --timeout 2m >"$work/t9k.out" 2>&1 ||
  { cat "$work/t9k.out"; fail "pjemu run (T9k) exited $?"; }
cat "$work/t9k.out"
expect "$work/t9k.out" "hello-from-image"
expect "$work/t9k.out" "Succeeded"

echo "== a TrainJob pulling with the user's Docker config (DOCKER_CONFIG)"
mkdir -p "$work/docker"
printf '%s' "$config" >"$work/docker/config.json"
cat > "$work/trainjob.yaml" <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: pulled-python}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    image: 127.0.0.1:$port/pjemu/python:3.11
    command: [python, -c, "import os, sys; print('trainjob node', os.environ.get('PET_NODE_RANK'), sys.executable)"]
YAML
DOCKER_CONFIG=$work/docker "$pjemu" run -f "$work/trainjob.yaml" --image-store "$pulled" --all-logs \
  --timeout 2m >"$work/tj.out" 2>&1 || { cat "$work/tj.out"; fail "pjemu run (TrainJob) exited $?"; }
expect "$work/tj.out" "trainjob node 1 /usr/bin/python"
expect "$work/tj.out" "trainjob/pulled-python Complete"
"$pjemu" image ls --image-store "$pulled" | tee "$work/ls2"
expect "$work/ls2" "127.0.0.1:$port/pjemu/layers"
expect "$work/ls2" "127.0.0.1:$port/pjemu/python"

echo "== a missing image and one without credentials: the kubelet's reasons, the pod Pending"
cat > "$work/bad.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata: {name: regcred}
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: $(printf '%s' "$config" | base64 -w0)
---
apiVersion: v1
kind: Pod
metadata: {name: missing}
spec:
  imagePullSecrets: [{name: regcred}]
  containers: [{name: c, image: "127.0.0.1:$port/pjemu/missing:1"}]
---
apiVersion: v1
kind: Pod
metadata: {name: nocreds}
spec:
  containers: [{name: c, image: "127.0.0.1:$port/pjemu/python:3.11", imagePullPolicy: Always}]
YAML
"$pjemu" serve --port 0 --insecure-http --kubeconfig "$work/kc" --image-store "$work/empty" \
  >"$work/serve.out" 2>&1 &
serve=$!
for _ in $(seq 100); do [ -s "$work/kc" ] && break; sleep 0.1; done
KUBECONFIG=$work/kc "$pjemu" create -f "$work/bad.yaml"
reason() {
  KUBECONFIG=$work/kc "$pjemu" get pod "$1" -o json |
    /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin)["status"].get("containerStatuses",[{}])[0].get("state",{}).get("waiting",{}); print(s.get("reason",""), "|", s.get("message",""))'
}
ok=""
for _ in $(seq 150); do
  m=$(reason missing); n=$(reason nocreds)
  case "$m" in ErrImagePull*|ImagePullBackOff*) case "$n" in ErrImagePull*|ImagePullBackOff*) ok=1; break;; esac;; esac
  sleep 0.2
done
echo "missing: $m"; echo "nocreds: $n"
kill "$serve"; wait "$serve" || true
[ -n "$ok" ] || fail "no ErrImagePull"
case "$m" in *"not found"*) ;; *) fail "missing: $m";; esac
case "$n" in *"401 Unauthorized"*|*"authorization"*) ;; *) fail "nocreds: $n";; esac
echo "PASS"

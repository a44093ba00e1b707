#!/usr/bin/env bash
# tests/images/registry_push_test.sh IMAGES_DIR: the test images (build_images.py's output in
# IMAGES_DIR) push with skopeo to a loopback registry with htpasswd auth (registry.sh), keep
# their manifest digests there, share busybox's layer with layers:1, need the credentials, and
# the registry listens on 127.0.0.1 only and is gone after `registry.sh stop`.
# Exit 77 (skipped) when docker-registry, skopeo or htpasswd is not installed.
set -euo pipefail
case ${1:-} in -h|--help) sed -n '2,/^set/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
images=${1:?usage: registry_push_test.sh IMAGES_DIR}
here=$(cd "$(dirname "$0")" && pwd)
for tool in /usr/bin/docker-registry skopeo htpasswd; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (tools/setup)"; exit 77; }
done
# No images: the fixture "images: build the test images" was skipped (a package missing), and
# ctest runs the tests that require a skipped fixture anyway.
for n in busybox layers; do
  [[ -f $images/oci/$n/index.json ]] || { echo "SKIP: no $images/oci/$n (not built)"; exit 77; }
done

# Both forms load into skopeo, with the same layers (DiffIDs) and the same run settings.
for n in busybox layers; do
  /usr/bin/python3 - "$images" "$n" <<'EOF' || exit 1
import json, subprocess, sys
images, name = sys.argv[1], sys.argv[2]
def config(transport):
    out = subprocess.run(["skopeo", "--insecure-policy", "inspect", "--config", transport],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)
oci = config("oci:%s/oci/%s" % (images, name))
saved = config("docker-archive:%s/%s.tar" % (images, name))
for key in ("rootfs", "config", "architecture", "os"):
    if oci.get(key) != saved.get(key):
        sys.exit("FAIL: %s: %s differs: oci %s, docker-archive %s"
                 % (name, key, oci.get(key), saved.get(key)))
print("%s: the OCI layout and the docker-save archive agree (%d layers)"
      % (name, len(oci["rootfs"]["diff_ids"])))
EOF
done

work=$(mktemp -d /tmp/pjemu-registry-test.XXXXXX)
cleanup() { "$here/registry.sh" stop "$work/registry" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
# skopeo reads no one's auth files or settings but these.
export HOME=$work/home XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"
creds=pjemu:registry-test-pass

fail() { echo "FAIL: $*"; tail -n 20 "$work/registry/registry.log" 2>/dev/null || true; exit 1; }
digest_of() {  # the manifest digest build_images.py wrote for image $1
  /usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$images/oci/$1/index.json"
}
field() {  # field NAME: a field of skopeo inspect's JSON on stdin (a list: space-separated)
  /usr/bin/python3 -c 'import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
print(v if isinstance(v, str) else " ".join(v))' "$1"
}
inspect() {  # inspect REF [skopeo options]: skopeo inspect of 127.0.0.1:PORT/REF
  local ref=$1; shift
  skopeo inspect --tls-verify=false "$@" "docker://$addr/$ref"
}

addr=$("$here/registry.sh" start "$work/registry" --htpasswd "$creds") || fail "registry.sh start"
[[ $addr == 127.0.0.1:* ]] || fail "registry.sh start printed '$addr'"
pid=$(cat "$work/registry/pid")
echo "registry at $addr (pid $pid)"
if command -v ss >/dev/null; then
  listening=$(ss -Hltnp | grep "pid=$pid," | awk '{print $4}' | sort -u)
  [[ -n $listening ]] || fail "ss shows no socket of pid $pid"
  if grep -qv '^127\.0\.0\.1:' <<<"$listening"; then fail "the registry listens on: $listening"; fi
  echo "listening on: $listening"
fi

"$here/registry.sh" push "$work/registry" "$images/oci/busybox" busybox:1.36 --creds "$creds" \
  || fail "push busybox"
"$here/registry.sh" push "$work/registry" "$images/oci/layers" layers:1 --creds "$creds" \
  || fail "push layers"

want=$(digest_of busybox)
busybox=$(inspect busybox:1.36 --creds "$creds") || fail "skopeo inspect busybox"
got=$(field Digest <<<"$busybox")
[[ $got == "$want" ]] || fail "busybox:1.36 has digest $got in the registry, $want built"
echo "busybox:1.36 $got"
want=$(digest_of layers)
layers=$(inspect layers:1 --creds "$creds") || fail "skopeo inspect layers"
got=$(field Digest <<<"$layers")
[[ $got == "$want" ]] || fail "layers:1 has digest $got in the registry, $want built"
echo "layers:1 $got"
busybox_layer=$(field Layers <<<"$busybox")
layers_first=$(field Layers <<<"$layers" | awk '{print $1}')
[[ $busybox_layer == "$layers_first" ]] ||
  fail "layers:1 starts with $layers_first, busybox:1.36 is $busybox_layer"
[[ $(field Layers <<<"$layers" | wc -w) == 4 ]] || fail "layers:1 has not 4 layers"

if inspect busybox:1.36 --no-creds >"$work/anon.out" 2>&1; then
  fail "the registry answered without credentials"
fi
grep -qiE 'unauthorized|authentication required' "$work/anon.out" ||
  fail "anonymous: $(cat "$work/anon.out")"
if inspect busybox:1.36 --creds pjemu:wrong >/dev/null 2>&1; then
  fail "the registry took a wrong password"
fi

"$here/registry.sh" stop "$work/registry" || fail "registry.sh stop"
state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null || true)
[[ -z $state || $state == Z ]] || fail "docker-registry (pid $pid) is still running after stop"
[[ ! -e $work/registry/pid ]] || fail "registry.sh stop left $work/registry/pid"
echo "PASS"

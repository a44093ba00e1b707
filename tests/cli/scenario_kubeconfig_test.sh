#!/bin/bash
# `pjemu scenario run --kubeconfig K` with a kubeconfig that does not work: a missing file, an
# unknown --context, a CA that did not sign the server's certificate, a refused connection and
# a token the server refuses (401) each give exactly one line on stderr, nothing on stdout, and
# exit 2, before any scenario runs; a working one runs (a failing expectation fails, exit 1;
# Ctrl-C ends it with 130, its namespace deleted).
# The server is `pjemu serve --token` (HTTPS).
# Usage: scenario_kubeconfig_test.sh PJEMU   (from the repository root)
set -uo pipefail
PJEMU=$1
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve --token "right-token"
grep -q "serving the Kubernetes API on https://" "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

# A CA of its own (what the server's certificate was not signed by).
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/other.key" -out "$work/other.crt" \
  -subj /CN=other -days 1 2>/dev/null || fail "openssl could not make a CA"
sed "s|certificate-authority-data: .*|certificate-authority-data: $(base64 -w0 "$work/other.crt")|" \
  "$work/kubeconfig" >"$work/wrong-ca"
sed 's|server: .*|server: "https://127.0.0.1:1"|' "$work/kubeconfig" >"$work/refused"
sed 's|token: .*|token: "wrong-token"|' "$work/kubeconfig" >"$work/bad-token"

check() {  # check NAME PATTERN ARGS...: one stderr line matching PATTERN, no stdout, exit 2
  local name=$1 pattern=$2
  shift 2
  "$PJEMU" scenario run "$@" scenarios/oom-real.yaml >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" = 2 ] || fail "$name: exit $rc, want 2"
  [ -s "$work/out" ] && fail "$name: stdout: $(cat "$work/out")"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$name: want one line, got: $(cat "$work/err")"
  grep -Eq -- "$pattern" "$work/err" || fail "$name: want /$pattern/, got: $(cat "$work/err")"
  echo "$name: $(cat "$work/err")"
}
check "missing file" '^error: kubeconfig .*/missing: no such file$' --kubeconfig "$work/missing"
check "unknown context" 'context "elsewhere" not found in contexts' \
  --kubeconfig "$work/kubeconfig" --context elsewhere
check "wrong CA" 'TLS handshake: certificate verify failed' --kubeconfig "$work/wrong-ca"
check "refused" 'https://127.0.0.1:1 was refused or failed: Connection refused' \
  --kubeconfig "$work/refused"
check "401" 'refused the kubeconfig.s credentials \(401 Unauthorized\)' --kubeconfig "$work/bad-token"
# And the good one reaches the cluster (a virtual-time file: skipped, exit 0).
"$PJEMU" scenario run --kubeconfig "$work/kubeconfig" --output-dir "$work/o" \
  scenarios/eviction.yaml >"$work/out" 2>&1 || fail "good kubeconfig: $(cat "$work/out")"
grep -q '^scenarios/eviction.yaml: skipped: emulator only: virtual time' "$work/out" ||
  fail "good kubeconfig: $(cat "$work/out")"
# A remote run judges its expectations: oom-real expecting Succeeded fails (exit 1, FAIL, the
# file:line message), and its namespace is gone afterwards all the same.
sed 's/^  - condition: Failed$/  - condition: Succeeded/' scenarios/oom-real.yaml >"$work/wrong.yaml"
"$PJEMU" scenario run --kubeconfig "$work/kubeconfig" --output-dir "$work/o" "$work/wrong.yaml" \
  >"$work/out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "failing scenario: exit $rc, want 1: $(cat "$work/out")"
grep -q "wrong.yaml: FAIL" "$work/out" || fail "failing scenario: no FAIL line: $(cat "$work/out")"
grep -q "wrong.yaml:[0-9]*: expected condition Succeeded, got Failed" "$work/out" ||
  fail "failing scenario: no file:line message: $(cat "$work/out")"
"$PJEMU" get namespaces --kubeconfig "$work/kubeconfig" | grep -E '^pjemu-' | grep -qv Terminating &&
  fail "failing scenario: its namespace was left"
# Ctrl-C during a remote run: exit 130, and the scenario's namespace is deleted all the same.
cat >"$work/long.yaml" <<'YAML'
name: a job that sleeps
options: {time: real, timeout: 2m}
jobs:
  - inline:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: sleeper}
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            template:
              spec:
                containers: [{name: pytorch, image: busybox, command: [sleep, "60"]}]
expect:
  - condition: Succeeded
YAML
"$PJEMU" scenario run --kubeconfig "$work/kubeconfig" --output-dir "$work/o" "$work/long.yaml" \
  >"$work/out" 2>&1 &
run_pid=$!
for _ in $(seq 100); do
  "$PJEMU" get pods -A --kubeconfig "$work/kubeconfig" 2>/dev/null | grep -q sleeper-master-0 && break
  sleep 0.1
done
kill -INT "$run_pid"
wait "$run_pid"
rc=$?
[ "$rc" = 130 ] || fail "interrupted run: exit $rc, want 130: $(cat "$work/out")"
# Deleted: gone, or Terminating while its pods' grace period runs (the namespace lifecycle).
"$PJEMU" get namespaces --kubeconfig "$work/kubeconfig" | grep -E '^pjemu-' | grep -qv Terminating &&
  fail "interrupted run: its namespace was left"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))

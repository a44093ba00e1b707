#!/bin/bash
# Remote runs against a stand-in cluster: `pjemu serve --token` (HTTPS, its own --data-dir and
# kubeconfig), reached only through its API by `pjemu scenario run --kubeconfig`. Each FILE must
# either PASS or, when it needs what only the emulator can do, be skipped with its reason (the
# "skipped: REASON" line and JUnit <skipped message="REASON"/>); with --all-skipped every FILE
# must be skipped. Afterwards no scenario namespace is left on the cluster.
# PJEMU_TEST_SERVE_ARGS: more flags for serve (e.g. --min-request-timeout 1: its watches end
# every 1-2 s, as a real API server's do after 30-60 minutes, and the run must not notice).
# Usage: remote_run_test.sh PJEMU [--all-skipped] FILE...   (from the repository root)
set -uo pipefail
PJEMU=$1
shift
all_skipped=0
if [ "${1:-}" = --all-skipped ]; then all_skipped=1; shift; fi
. "$(dirname "$0")/../support/serve_kubectl.sh"

# shellcheck disable=SC2086  # PJEMU_TEST_SERVE_ARGS is a list of words
start_serve --token "t-$RANDOM$RANDOM" --data-dir "$work/data" \
  --image-map tests/e2e/fast-trainer-images.yaml ${PJEMU_TEST_SERVE_ARGS:-}
grep -q "serving the Kubernetes API on https://" "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

"$PJEMU" scenario run --kubeconfig "$work/kubeconfig" --junit "$work/junit.xml" \
  --output-dir "$work/out" "$@" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
cat "$work/out.txt" "$work/err.txt"
[ "$rc" = 0 ] || fail "exit $rc, want 0"
for f in "$@"; do
  line=$(grep -E "^$f: (PASS|FAIL|skipped: )" "$work/out.txt")
  case "$line" in
    "$f: PASS"*) [ "$all_skipped" = 0 ] || fail "$f ran, want it skipped" ;;
    "$f: skipped: "?*)
      reason=${line#"$f: skipped: "}
      grep -qF "file=\"$f\"" "$work/junit.xml" || fail "$f: not in the JUnit XML"
      grep -A1 -F "file=\"$f\"" "$work/junit.xml" | grep -qF "<skipped message=\"${reason//\'/\&apos;}\"/>" ||
        fail "$f: JUnit has no <skipped message=\"$reason\"/>" ;;
    *) fail "$f: no PASS or skipped line: $line" ;;
  esac
done
# A deleted namespace is Terminating while its contents go (as on a cluster): give it time.
for _ in $(seq 120); do
  left=$("$PJEMU" get namespaces --kubeconfig "$work/kubeconfig" -o name 2>&1 | grep -c 'namespace/pjemu-')
  [ "$left" = 0 ] && break
  sleep 0.5
done
[ "$left" = 0 ] || fail "$left scenario namespace(s) left: $("$PJEMU" get namespaces --kubeconfig "$work/kubeconfig" 2>&1)"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))

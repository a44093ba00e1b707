#!/bin/bash
# `pjemu scenario compare` against the stand-in cluster (`pjemu serve --token`): oom-real runs on
# both and agrees (exit 0, "agree"; its HTML report says AGREE and shows both timelines), a
# virtual-time file is skipped with its reason, and without a cluster it is one line and exit 2.
# Usage: remote_compare_test.sh PJEMU   (from the repository root)
set -uo pipefail
PJEMU=$1
. "$(dirname "$0")/../support/serve_kubectl.sh"

start_serve --token "t-$RANDOM" --data-dir "$work/data"
grep -q "serving the Kubernetes API on https://" "$work/serve.log" || { cat "$work/serve.log"; exit 1; }

"$PJEMU" scenario compare --kubeconfig "$work/kubeconfig" --output-dir "$work/out" \
  scenarios/oom-real.yaml scenarios/eviction.yaml >"$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
[ "$rc" = 0 ] || fail "exit $rc, want 0"
grep -qx "scenarios/oom-real.yaml: agree (report $work/out/compare-oom-real.html)" "$work/out.txt" ||
  fail "oom-real: no agree line"
report=$work/out/compare-oom-real.html
grep -q '<p class="verdict pass">AGREE</p>' "$report" || fail "report: no AGREE"
[ "$(grep -c '<div class="side">' "$report")" = 2 ] || fail "report: not two timelines"
grep -qx "scenarios/eviction.yaml: skipped: emulator only: virtual time (options.time: virtual)" \
  "$work/out.txt" || fail "eviction: no skipped line"
"$PJEMU" scenario compare scenarios/oom-real.yaml >"$work/out.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "no cluster: exit $rc, want 2"
[ "$(wc -l <"$work/out.txt")" = 1 ] || fail "no cluster: want one line: $(cat "$work/out.txt")"
[ "$failures" = 0 ] && echo "all passed"
exit $((failures > 0))

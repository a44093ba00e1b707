# Sourced by the shell tests that drive `pjemu serve` (with a real kubectl: set K first; and
# PJEMU). Gives $work (a temp folder, removed at exit after serve is stopped), a HOME in it, kc
# (kubectl against the served cluster), start_serve [SERVE ARGS...], which starts serve on a
# free port with its kubeconfig in $work and returns once it listens, and fail MESSAGE, which
# counts into $failures (the test ends with its own summary).
work=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home
mkdir -p "$HOME"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_match() {  # expect_match WHAT PATTERN OUTPUT: the extended regex matches OUTPUT
  grep -Eq -- "$2" <<<"$3" || fail "$1: expected /$2/ in: $3"
}
kc() { "$K" --kubeconfig "$work/kubeconfig" --cache-dir "$work/cache" "$@"; }
start_serve() {
  "$PJEMU" serve --port 0 --kubeconfig "$work/kubeconfig" "$@" >"$work/serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 100); do grep -q "serving the Kubernetes API" "$work/serve.log" && return 0; sleep 0.1; done
  cat "$work/serve.log"
  exit 1
}

#!/bin/bash
# Cluster DNS and ClusterIP Services under isolation, with the newest kubectl against `pjemu
# serve`: a client pod resolves a Service by `<svc>`, `<svc>.<ns>`, its FQDN, and a pod by
# `<hostname>.<subdomain>` (getent, as glibc resolves through the pod's resolv.conf); the
# ClusterIP is allocated from 10.96.0.0/12 and a TCP connection to it reaches the endpoint pod's
# targetPort; a Service created after the pod started resolves within a second (the latency is
# printed); the pod's /etc/hosts no longer lists Services; dnsmasq dies with a SIGKILLed pjemu.
# Skipped (77) without root, network namespaces, dnsmasq or nft (serve then says "DNS off").
# Usage: cluster_dns_e2e.sh PJEMU
set -uo pipefail
PJEMU=$1
K=$(command -v kubectl) || { echo "SKIP: no kubectl"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: not root (pod networks need it)"; exit 77; }
for tool in ip dnsmasq nft; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null ||
    { echo "SKIP: no $tool"; exit 77; }
done
. "$(dirname "$0")/../e2e/byoj/needs-sandbox.sh"
. "$(dirname "$0")/../support/serve_kubectl.sh"

# Its pods' files in $work: serve is SIGKILLed below and cannot remove a temporary state folder.
start_serve --output-dir "$work/state"
if grep -Eq "DNS off|isolation off.*network" "$work/serve.log"; then
  echo "SKIP: $(grep -E 'DNS off|isolation off' "$work/serve.log")"
  exit 77
fi

kc apply -f - <<'YAML' >/dev/null || fail "apply"
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  hostname: web-0
  subdomain: webs
  containers:
    - name: main
      image: busybox
      command: [/usr/bin/python3, -m, http.server, "8080"]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: webs}
spec: {clusterIP: None, selector: {app: web}, ports: [{port: 8080}]}
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  containers:
    - name: main
      image: busybox
      command: [sleep, "600"]
YAML
kc wait --for=condition=Ready pod/web pod/client --timeout=60s >/dev/null || fail "pods not Ready"
cluster_ip=$(kc get svc web -o 'jsonpath={.spec.clusterIP}')
expect_match "web's clusterIP" '^10\.(9[6-9]|10[0-9]|11[01])\.[0-9]+\.[0-9]+$' "$cluster_ip"
web_ip=$(kc get pod web -o 'jsonpath={.status.podIP}')

for name in web web.default web.default.svc.cluster.local; do
  out=$(kc exec client -- getent hosts "$name" 2>&1)
  expect_match "getent hosts $name" "^$cluster_ip " "$out"
done
out=$(kc exec client -- getent hosts web-0.webs 2>&1)
expect_match "getent hosts web-0.webs" "^$web_ip +web-0\.webs\.default\.svc\.cluster\.local" "$out"
out=$(kc exec client -- getent hosts webs 2>&1)
expect_match "getent hosts webs (headless)" "^$web_ip " "$out"
out=$(kc exec client -- cat /etc/hosts 2>&1)
grep -q "web" <<<"$out" && fail "/etc/hosts still lists Services: $out"

# TCP to ClusterIP:80 reaches web's 8080 (the server may take a moment to listen).
out=
for _ in 1 2 3 4 5; do
  out=$(kc exec client -- /usr/bin/python3 -c \
    "import urllib.request; print(urllib.request.urlopen('http://web/', timeout=2).status)" 2>&1)
  [ "$out" = 200 ] && break
  sleep 0.3
done
[ "$out" = 200 ] || fail "GET http://web/ (ClusterIP $cluster_ip:80 -> $web_ip:8080): $out"

# A Service created after the pod started: the pod polls its name every 5 ms.
kc exec client -- /usr/bin/python3 -c '
import socket, time
end = time.time() + 20
while time.time() < end:
    try:
        socket.gethostbyname("late"); print("%.3f" % time.time()); break
    except OSError:
        time.sleep(0.005)
else:
    print("never")' >"$work/late" 2>&1 &
poller=$!
sleep 0.5
t0=$(date +%s.%N)
kc create service clusterip late --tcp=80:8080 >/dev/null || fail "create service late"
t_created=$(date +%s.%N)
wait $poller
t1=$(cat "$work/late")
if [ "$t1" = never ] || [ -z "$t1" ]; then
  fail "late Service never resolved: $t1"
else
  ms=$(awk -v a="$t_created" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
  took=$(awk -v a="$t0" -v b="$t_created" 'BEGIN { printf "%d", (b - a) * 1000 }')
  # Negative: the pod resolved it before kubectl (which took $took ms) had even exited.
  echo "DNS update latency: the pod resolves the new Service ${ms} ms after kubectl create" \
    "returned (kubectl create took ${took} ms)"
  [ "$ms" -lt 1000 ] || fail "late Service resolved ${ms} ms after it was created (want < 1000)"
fi

# dnsmasq never outlives pjemu, even a SIGKILLed one.
kill -KILL "$serve_pid" && wait "$serve_pid" 2>/dev/null
dns_dir=/run/pjemu-$serve_pid-dns
serve_pid=
sleep 0.3
if pgrep -f -- "--hostsdir=$dns_dir/" >/dev/null; then
  fail "dnsmasq outlived a SIGKILLed pjemu: $(pgrep -af -- "--hostsdir=$dns_dir/")"
  kill -KILL $(pgrep -f -- "--hostsdir=$dns_dir/")
fi

if [ "$failures" -gt 0 ]; then
  echo "--- serve.log"; tail -20 "$work/serve.log"
  exit 1
fi
echo "PASS"

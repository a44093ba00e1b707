#!/usr/bin/env python3
"""`pjemu serve --token` against hostile clients: requests without, with a wrong and
with the right bearer token; traversal in log requests and container names through the real
kubelet; then the token must appear nowhere in the server's output or state folder (only in
the kubeconfig written for the user). Bounded in time.

Usage: serve_token_test.py <pjemu binary>
"""
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import time

TOKEN = "pjemu-Secret-" + os.urandom(8).hex()
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def call(port, method, path, token=None, body=None, auth=None):
    ctx = ssl._create_unverified_context()  # the server's certificate is self-signed
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
    headers = {"Content-Type": "application/json"}
    if auth is not None:
        headers["Authorization"] = auth
    elif token is not None:
        headers["Authorization"] = "Bearer " + token
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers=headers)
    res = conn.getresponse()
    data = res.read()
    conn.close()
    return res.status, data


def main():
    pjemu = sys.argv[1]
    work = tempfile.mkdtemp(prefix="pjemu-token-test-")
    kubeconfig = os.path.join(work, "kubeconfig")
    out_dir = os.path.join(work, "state")
    stdout = open(os.path.join(work, "serve.out"), "w")
    stderr = open(os.path.join(work, "serve.err"), "w")
    server = subprocess.Popen(
        [pjemu, "serve", "--port", "0", "--token", TOKEN, "--kubeconfig", kubeconfig,
         "--output-dir", out_dir], stdout=stdout, stderr=stderr)
    try:
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline and server.poll() is None:
            m = re.search(r"https://127\.0\.0\.1:(\d+)", open(stdout.name).read())
            port = int(m.group(1)) if m else None
            time.sleep(0.1)
        if port is None:
            print("serve did not start:\n" + open(stderr.name).read())
            return 1
        ns = "/api/v1/namespaces"
        check(call(port, "GET", ns)[0] == 401, "no token: 401")
        check(call(port, "GET", ns, token=TOKEN[:-1] + "x")[0] == 401, "a wrong token: 401")
        check(call(port, "GET", ns, token=TOKEN[:-1])[0] == 401, "a token prefix: 401")
        check(call(port, "GET", ns, token=TOKEN + "x")[0] == 401, "a longer token: 401")
        check(call(port, "GET", ns, token="")[0] == 401, "an empty token: 401")
        check(call(port, "GET", ns, auth="Basic " + TOKEN)[0] == 401, "Basic auth: 401")
        check(call(port, "GET", ns, auth="bearer " + TOKEN)[0] == 200,
              "a lower-case scheme: 200 (kube-apiserver compares the scheme without case; the "
              "Python client's in-cluster config sends \"bearer\")")
        check(call(port, "GET", ns, auth="Bearer  " + TOKEN)[0] == 401,
              "two spaces: 401 (the token is the second space-separated part, empty)")
        status, body = call(port, "GET", "/api/v1/namespaces/default/pods?x=" + TOKEN)
        check(status == 401, "the token in the URL is no authentication")
        check(call(port, "GET", ns, token=TOKEN)[0] == 200, "the right token: 200")
        check(call(port, "GET", "/healthz")[0] == 200, "/healthz needs no token")

        pods = "/api/v1/namespaces/default/pods"
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"restartPolicy": "Never", "containers": [
                   {"name": "c", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}
        check(call(port, "POST", pods, token=TOKEN, body=pod)[0] == 201, "a pod is created")
        for container in ["../../../../etc/passwd", "c/../../../../../etc/passwd", "..", "c/."]:
            status, body = call(port, "GET", pods + "/p/log?container=" + container, token=TOKEN)
            check(400 <= status < 500 and b"root:" not in body,
                  f"log of container {container!r} is refused (got {status})")
        for target in [pods + "/..%2f..%2fetc/log", pods + "/%2e%2e/log",
                       "/api/v1/namespaces/..%2f..%2f/pods/p/log"]:
            status, body = call(port, "GET", target, token=TOKEN)
            check(400 <= status < 500 and b"root:" not in body,
                  f"GET {target} is refused (got {status})")
        evil = dict(pod, metadata={"name": "evil"})
        evil["spec"] = {"containers": [{"name": "../../../../tmp/pjemu-evil", "image": "busybox"}]}
        check(call(port, "POST", pods, token=TOKEN, body=evil)[0] == 422,
              "a container name with ../ never reaches the kubelet (422)")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        stdout.close()
        stderr.close()

    found = []
    for root, _, files in os.walk(work):
        for name in files:
            path = os.path.join(root, name)
            if path == kubeconfig:
                continue
            try:
                if TOKEN.encode() in open(path, "rb").read():
                    found.append(path)
            except OSError:
                pass
    check(not found, "the token appears in no output or state file " + str(found))
    check(TOKEN in open(kubeconfig).read(), "the kubeconfig carries the token for the user")
    check(not os.path.exists("/tmp/pjemu-evil"), "nothing was written through a traversal")
    if FAILURES:
        print(f"{len(FAILURES)} failures; output in {work}")
        return 1
    subprocess.run(["rm", "-rf", work], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

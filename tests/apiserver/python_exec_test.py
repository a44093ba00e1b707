#!/usr/bin/env python3
"""The official Python client (Debian's python3-kubernetes) against `pjemu serve` over HTTPS:
kubernetes.stream.stream(connect_get_namespaced_pod_exec) over WebSocket (v4.channel.k8s.io)
shows the container's environment, keeps stdout and stderr apart and reports exit code 3 on
the error channel; connect_get_namespaced_pod_attach follows the container's output; kubernetes.stream.portforward reaches a pod's HTTP server (python3 -m
http.server on a free port) and gets its answer; a port nothing listens on gets the error
channel's message. Bounded in time.

Usage: python_exec_test.py <pjemu binary>
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from served import FAILURES, check, served, wait_for  # noqa: E402
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402
from kubernetes.stream import portforward, stream  # noqa: E402

NS = "default"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pod(name, command, env=None):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "main", "image": "python:3.11", "command": command,
                                     "env": env or []}]}}


def running(core, name):
    try:
        return core.read_namespaced_pod(name, NS).status.phase == "Running"
    except ApiException:
        return False


def http_get(core, name, port):
    """One GET / through a port-forward; the response's bytes ('' when it failed)."""
    pf = portforward(core.connect_get_namespaced_pod_portforward, name, NS, ports=str(port))
    sock = pf.socket(port)
    sock.settimeout(10)
    data = b""
    try:
        # To a closed port the forward may end before the request is written (a broken pipe).
        sock.sendall(b"GET / HTTP/1.0\r\nHost: pod\r\n\r\n")
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    sock.close()
    return data.decode(errors="replace"), pf.error(port)


def main():
    with served(sys.argv[1]) as kubeconfig:
        config.load_kube_config(config_file=kubeconfig)
        core = client.CoreV1Api()
        port = free_port()
        core.create_namespaced_pod(NS, pod("web", ["python3", "-m", "http.server", str(port),
                                                   "--bind", "127.0.0.1"],
                                           [{"name": "FOO", "value": "bar"}]))
        check(wait_for(lambda: running(core, "web")), "pod web runs")

        out = stream(core.connect_get_namespaced_pod_exec, "web", NS, command=["env"],
                     stderr=True, stdin=False, stdout=True, tty=False)
        check("FOO=bar" in out.splitlines(), "exec env shows the container's FOO=bar: " + out[:200])

        resp = stream(core.connect_get_namespaced_pod_exec, "web", NS,
                      command=["sh", "-c", "echo out; echo err >&2; exit 3"],
                      stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
        resp.run_forever(timeout=10)
        check(resp.read_stdout() == "out\n", "exec stdout on channel 1")
        check(resp.read_stderr() == "err\n", "exec stderr on channel 2")
        check(resp.returncode == 3, "exec exit code 3 from the error channel: %r" % resp.returncode)
        resp.close()

        out = stream(core.connect_get_namespaced_pod_exec, "web", NS,
                     command=["sh", "-c", "tty; echo to-stderr >&2"],
                     stderr=False, stdin=False, stdout=True, tty=True)
        check(out.startswith("/dev/pts/") and "to-stderr" in out,
              "exec with tty: a terminal, stderr merged: %r" % out)

        try:
            stream(core.connect_get_namespaced_pod_exec, "web", NS, command=["env"],
                   container="nope", stderr=True, stdin=False, stdout=True, tty=False)
            check(False, "exec into an unknown container is refused")
        except ApiException as e:
            check("400" in str(e.reason),
                  "exec into an unknown container is refused: %s" % e.reason)

        answer = ""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "Directory listing" not in answer:
            answer, _ = http_get(core, "web", port)
            if "Directory listing" not in answer:
                time.sleep(0.2)
        check(answer.startswith("HTTP/1.0 200"), "port-forward: HTTP status: " + answer[:40])
        check("Directory listing" in answer, "port-forward reaches the pod's http.server")

        # attach follows the container's output: http.server logs each request to stderr.
        attached = stream(core.connect_get_namespaced_pod_attach, "web", NS, stderr=True,
                          stdin=False, stdout=True, tty=False, _preload_content=False)
        http_get(core, "web", port)
        logged = ""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "GET / HTTP/1.0" not in logged:
            attached.update(timeout=1)
            logged += attached.read_stderr(timeout=0.1) if attached.peek_stderr() else ""
        check("GET / HTTP/1.0" in logged, "attach shows the container's stderr: %r" % logged[:200])
        attached.close()

        closed = free_port()
        answer, error = http_get(core, "web", closed)
        check(answer == "", "port-forward to a closed port gives no data")
        check(error is not None and "error forwarding port %d to pod web" % closed in error,
              "port-forward to a closed port: the error channel says so: %r" % error)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

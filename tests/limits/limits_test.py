#!/usr/bin/env python3
"""Hostile clients against the API server: oversized bodies (413), URLs (414) and
headers (431), path traversal in names and paths, slowloris (idle, slow headers, slow body) and
10k watch connections. Runs pjemu-apiserver-testd with short timeouts; bounded in time.

Usage: limits_test.py <pjemu-apiserver-testd> [--watches N]
"""
import argparse
import json
import resource
import selectors
import socket
import subprocess
import sys
import time

MIB = 1024 * 1024
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def connect(port, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(port, method, target, body=b"", headers=None, timeout=20):
    """One request on a fresh connection; returns (status, headers, body)."""
    s = connect(port, timeout)
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body or method in ("POST", "PUT", "PATCH"):
        if "Content-Type" not in (headers or {}):
            lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    try:
        s.sendall(head + body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed before reading everything: read the answer
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    if not data.startswith(b"HTTP/1.1 "):
        return 0, "", data
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(data[9:12]), head.decode("latin-1"), rest


def closed_within(sock, seconds, dribble=None):
    """True when the server closes `sock` within `seconds`; `dribble()` is called every 0.2 s
    (sending one more byte) until then. Returns (closed, elapsed, bytes received)."""
    start = time.monotonic()
    got = b""
    sock.settimeout(0.2)
    while time.monotonic() - start < seconds:
        if dribble:
            try:
                dribble()
            except (BrokenPipeError, ConnectionResetError):
                return True, time.monotonic() - start, got
        try:
            chunk = sock.recv(4096)
            if not chunk:
                return True, time.monotonic() - start, got
            got += chunk
        except socket.timeout:
            pass
        except ConnectionResetError:
            return True, time.monotonic() - start, got
    return False, time.monotonic() - start, got


def pod(name, containers=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": containers or [{"name": "c", "image": "busybox"}]}}


def test_sizes(port):
    jobs = "/api/v1/namespaces/default/configmaps"
    # A body of exactly the limit is read (and then judged: here it is a valid ConfigMap).
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": ""}}
    base = len(json.dumps(cm).encode())
    cm["data"]["a"] = "x" * (3 * MIB - base)
    body = json.dumps(cm).encode()
    check(len(body) == 3 * MIB, "the test body is exactly 3 MiB")
    status, _, _ = request(port, "POST", jobs, body)
    check(status != 413, f"a 3 MiB body is read (got {status})")
    status, _, rest = request(port, "POST", jobs, body + b" ")
    check(status == 413, f"a body of 3 MiB + 1 byte gets 413 (got {status})")
    try:
        st = json.loads(rest)
        check(st.get("kind") == "Status" and st.get("reason") == "RequestEntityTooLarge",
              "the 413 is a Status with reason RequestEntityTooLarge")
    except ValueError:
        check(False, "the 413 body is JSON")
    status, _, _ = request(port, "GET", "/version?x=" + "a" * (MIB + 10))
    check(status == 414, f"a 1 MiB URL gets 414 (got {status})")
    status, _, _ = request(port, "GET", "/version", headers={"X-Big": "b" * (MIB + 10)})
    check(status == 431, f"1 MiB of headers gets 431 (got {status})")
    deep = b'{"metadata":{"name":"deep"},"data":' + b"[" * (3 * MIB - 100)
    status, _, _ = request(port, "POST", jobs, deep)
    check(status == 400, f"a body nested 3 million levels deep gets 400 (got {status})")
    deep = b'[{"op":"add","path":"/x","value":' + b"[" * 20000 + b"]" * 20000 + b"}]"
    status, _, _ = request(port, "PATCH", jobs + "/big", deep,
                           headers={"Content-Type": "application/json-patch+json"})
    check(status == 400, f"a JSON patch nested 20000 levels deep gets 400 (got {status})")
    status, _, _ = request(port, "GET", "/version")
    check(status == 200, "the server still answers")


def test_traversal(port):
    base = "/api/v1/namespaces/default/pods"
    for target in ["/api/v1/namespaces/../pods", "/api/v1/namespaces/%2e%2e/pods",
                   base + "/..", base + "/%2e%2e", base + "/..%2f..%2fetc%2fpasswd",
                   base + "/a%2fb", base + "/x/../../../../etc/passwd",
                   base + "/../log", base + "/%2e%2e/log?container=..%2f..%2fetc",
                   "/api/v1/namespaces/default/pods/..%5c..%5cx/log",
                   base + "/%25%32%65"]:
        status, _, rest = request(port, "GET", target)
        check(400 <= status < 500, f"GET {target} is refused (got {status})")
        check(b"root:" not in rest, f"GET {target} shows no file")
    bad_names = ["../x", "..", "a/b", "a\\b", "x" * 254, "UPPER", "a\x00b", "-a", "a..b/.."]
    for name in bad_names:
        status, _, _ = request(port, "POST", base, json.dumps(pod(name)).encode())
        check(status in (400, 422), f"a pod named {name[:20]!r} is refused (got {status})")
    for cname in ["../../../../tmp/pjemu-traversal", "..", "a/b", "", "C"]:
        status, _, rest = request(port, "POST", base,
                                  json.dumps(pod("p" + str(len(cname)), [
                                      {"name": cname, "image": "busybox"}])).encode())
        check(status == 422, f"a container named {cname!r} is refused (got {status})")
    status, _, _ = request(port, "POST", base, json.dumps(pod("dup", [
        {"name": "c", "image": "a"}, {"name": "c", "image": "b"}])).encode())
    check(status == 422, f"duplicate container names are refused (got {status})")
    status, _, _ = request(port, "POST", "/api/v1/namespaces",
                           json.dumps({"metadata": {"name": "../ns"}}).encode())
    check(status == 422, f"a namespace named ../ns is refused (got {status})")


def test_slowloris(port, idle_s, header_s, body_s):
    # Idle: a connection that never sends is closed after idle_timeout.
    idle = connect(port)
    closed, took, got = closed_within(idle, idle_s + 3)
    check(closed and got == b"", f"an idle connection is closed after {took:.1f}s "
          f"(idle timeout {idle_s}s)")
    # Slow headers: one byte every 0.2 s never completes the header block.
    slow = connect(port)
    slow.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")
    closed, took, got = closed_within(slow, header_s + 3, lambda: slow.sendall(b"X"))
    check(closed and got == b"", f"a slowloris header is cut off after {took:.1f}s "
          f"(header timeout {header_s}s)")
    # Slow body: the header is complete, the body trickles.
    body = connect(port)
    body.sendall(b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    closed, took, got = closed_within(body, body_s + 3, lambda: body.sendall(b" "))
    check(closed, f"a slow body is cut off after {took:.1f}s (body timeout {body_s}s)")
    # A well-behaved client is served while slow ones hold connections.
    holders = [connect(port) for _ in range(50)]
    for h in holders:
        h.sendall(b"GET /version HTTP/1.1\r\n")
    start = time.monotonic()
    status, _, _ = request(port, "GET", "/version")
    check(status == 200 and time.monotonic() - start < 2,
          "a normal request is answered at once beside 50 slow connections")
    for h in holders:
        h.close()


def test_watches(port, count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, count + 1000)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    if want < count + 100:
        count = want - 200
        print(f"note: RLIMIT_NOFILE hard limit {hard}: {count} watches")
    start = time.monotonic()
    target = "/api/v1/namespaces/default/pods?watch=true&allowWatchBookmarks=false"
    req = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(req)
        socks.append(s)
    opened = time.monotonic() - start
    sel = selectors.DefaultSelector()
    heads = {}
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        heads[s] = b""
    status = {}
    deadline = time.monotonic() + 60
    while len(status) < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            try:
                chunk = s.recv(4096)
            except (BlockingIOError, ConnectionResetError):
                chunk = b""
            heads[s] += chunk
            if b"\r\n" in heads[s] or not chunk:
                status[s] = int(heads[s][9:12]) if heads[s].startswith(b"HTTP/1.1 ") else 0
                sel.unregister(s)
    ok = [s for s in socks if status.get(s) == 200]
    limited = [s for s in socks if status.get(s) == 429]
    check(len(status) == len(socks), f"all {count} watch connections answered "
          f"({len(status)}; opened in {opened:.1f}s, answered by {time.monotonic() - start:.1f}s)")
    check(len(ok) + len(limited) == len(socks),
          f"each got 200 or 429 ({len(ok)} watches, {len(limited)} TooManyRequests)")
    check(len(ok) == min(count, 8000), f"max_watches (8000) watches are served (got {len(ok)})")
    s_status, _, _ = request(port, "GET", "/healthz")
    check(s_status == 200, "the server answers while the watches are open")
    # A change reaches the first and the last watchers.
    created, _, _ = request(port, "POST", "/api/v1/namespaces/default/pods",
                            json.dumps(pod("watched")).encode())
    check(created == 201, "a pod is created while the watches are open")
    for s in ok[:5] + ok[-5:]:
        s.setblocking(True)
        s.settimeout(15)
        data = heads[s]
        try:
            while b"watched" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        check(b'"ADDED"' in data and b"watched" in data, "a watcher gets the ADDED event")
    for s in socks:
        s.close()
    # The server notices the closed watches: a new one is accepted again.
    deadline = time.monotonic() + 20
    again = 0
    while time.monotonic() < deadline:
        s = connect(port)
        s.sendall(req)
        head = s.recv(64)
        s.close()
        again = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else 0
        if again == 200:
            break
        time.sleep(0.5)
    check(again == 200, "after the clients leave, watches are accepted again")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("testd")
    parser.add_argument("--watches", type=int, default=10000)
    args = parser.parse_args()
    idle_s, header_s, body_s = 1.5, 1.0, 1.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # testd inherits it
    server = subprocess.Popen(
        [args.testd, "--port", "0", "--idle-timeout-ms", str(int(idle_s * 1000)),
         "--header-timeout-ms", str(int(header_s * 1000)),
         "--body-timeout-ms", str(int(body_s * 1000))],
        stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            print("testd did not start: " + line)
            return 1
        port = int(line.split()[1])
        start = time.monotonic()
        test_sizes(port)
        test_traversal(port)
        test_slowloris(port, idle_s, header_s, body_s)
        test_watches(port, args.watches)
        check(server.poll() is None, "the server is still running")
        print(f"took {time.monotonic() - start:.1f}s")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Load test: N concurrent clients doing mixed get/list/watch/create/update for a bounded time
against one pjemu-apiserver-testd. Checks that nothing is lost (every created job is listed at
the end and was seen by a watch started before the load), that no request failed except the
expected 409s of stale updates, and prints latency percentiles.
Usage: load_test.py TESTD [--clients 50] [--seconds 10]"""
import argparse
import http.client
import json
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testd_helper import TestServer  # noqa: E402

JOBS = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs"


def job(name):
    container = {"name": "pytorch", "image": "pytorch-mnist:1"}
    replica = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name},
            "spec": {"pytorchReplicaSpecs": {"Master": replica}}}


class Client(threading.Thread):
    def __init__(self, index, port, deadline, results):
        super().__init__()
        self.index, self.port, self.deadline, self.results = index, port, deadline, results
        self.rng = random.Random(index)
        self.created, self.latencies, self.errors, self.conflicts = [], [], [], 0

    def request(self, conn, method, path, body=None):
        start = time.monotonic()
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        self.latencies.append(time.monotonic() - start)
        return resp.status, data

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        n = 0
        while time.monotonic() < self.deadline:
            op = self.rng.random()
            try:
                if op < 0.3:
                    name = "load-%d-%d" % (self.index, n)
                    n += 1
                    status, data = self.request(conn, "POST", JOBS, job(name))
                    if status == 201:
                        self.created.append(name)
                    else:
                        self.errors.append(("create", status, data[:200]))
                elif op < 0.55:
                    status, data = self.request(conn, "GET", JOBS + "?limit=500")
                    if status != 200 or "items" not in json.loads(data):
                        self.errors.append(("list", status, data[:200]))
                elif op < 0.8:
                    if not self.created:
                        continue
                    status, data = self.request(conn, "GET", JOBS + "/" + self.rng.choice(self.created))
                    if status != 200:
                        self.errors.append(("get", status, data[:200]))
                elif op < 0.9:
                    if not self.created:
                        continue
                    # A stale update: 409 Conflict is the expected answer.
                    name = self.rng.choice(self.created)
                    obj = job(name)
                    obj["metadata"]["resourceVersion"] = "1"
                    status, data = self.request(conn, "PUT", JOBS + "/" + name, obj)
                    if status == 409 and json.loads(data)["reason"] == "Conflict":
                        self.conflicts += 1
                    else:
                        self.errors.append(("update", status, data[:200]))
                else:
                    watch = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                    watch.request("GET", JOBS + "?watch=true&timeoutSeconds=1")
                    resp = watch.getresponse()
                    count = 0
                    for line in resp:
                        if json.loads(line)["type"] in ("ADDED", "MODIFIED"):
                            count += 1
                    watch.close()
                    if resp.status != 200:
                        self.errors.append(("watch", resp.status, b""))
            except Exception as e:  # noqa: BLE001 - every failure is reported
                self.errors.append(("exception", repr(e), b""))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.close()


class Watcher(threading.Thread):
    """One watch from the version listed before the load; records every ADDED name."""
    def __init__(self, port, rv):
        super().__init__(daemon=True)
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.conn.request("GET", JOBS + "?watch=true&resourceVersion=" + rv)
        self.resp = self.conn.getresponse()
        self.added = set()
        self.lock = threading.Lock()

    def run(self):
        try:
            for line in self.resp:
                event = json.loads(line)
                if event["type"] == "ADDED":
                    with self.lock:
                        self.added.add(event["object"]["metadata"]["name"])
        except Exception:  # noqa: BLE001 - closed at the end of the test
            pass


def open_idle_watches(port, count):
    """Watches on pods, which the load never touches: they stay idle for the whole test."""
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\n"
                  b"Host: 127.0.0.1\r\n\r\n")
        socks.append(s)
    for s in socks:
        s.settimeout(30)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                raise RuntimeError("an idle watch was closed: %r" % head)
            head += chunk
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("an idle watch was refused: %r" % head[:200])
    return socks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("testd")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--idle-watches", type=int, default=0)
    args = parser.parse_args()
    with TestServer(args.testd, "--threads", "2") as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        conn.request("GET", JOBS)
        rv = json.loads(conn.getresponse().read())["metadata"]["resourceVersion"]
        idle = open_idle_watches(server.port, args.idle_watches)
        watcher = Watcher(server.port, rv)
        watcher.start()
        deadline = time.monotonic() + args.seconds
        clients = [Client(i, server.port, deadline, None) for i in range(args.clients)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        created = set(n for c in clients for n in c.created)
        conn.request("GET", JOBS)
        listed = set(i["metadata"]["name"] for i in json.loads(conn.getresponse().read())["items"])
        for _ in range(100):
            with watcher.lock:
                if created <= watcher.added:
                    break
            time.sleep(0.1)
        with watcher.lock:
            missed = created - watcher.added
        errors = [e for c in clients for e in c.errors]
        latencies = sorted(l for c in clients for l in c.latencies)
        conflicts = sum(c.conflicts for c in clients)
        pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000
        print("load: %d idle watches open throughout" % len(idle))
        print("load: %d clients, %.0f s: %d requests (%.0f/s), %d jobs created, %d expected "
              "conflicts; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms"
              % (args.clients, args.seconds, len(latencies), len(latencies) / args.seconds,
                 len(created), conflicts, pct(0.5), pct(0.99), latencies[-1] * 1000))
        ok = True
        if errors:
            print("FAIL: %d unexpected errors, first: %r" % (len(errors), errors[:3]))
            ok = False
        if created != listed:
            print("FAIL: created %d jobs but %d are listed (lost: %r)"
                  % (len(created), len(listed), sorted(created - listed)[:5]))
            ok = False
        if missed:
            print("FAIL: the watch missed %d created jobs: %r" % (len(missed), sorted(missed)[:5]))
            ok = False
        if not created:
            print("FAIL: nothing was created")
            ok = False
        watcher.conn.close()
        for sock in idle:
            sock.close()
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A tiny OCI registry with distribution's token auth, for tests/image/registry_test.cc.

Serves DIR/manifests/<tag> and DIR/blobs/<digest> under /v2/<name>/..., answering requests
without a valid `Authorization: Bearer` with a 401 Bearer challenge whose realm is its own
/token endpoint (Basic credentials --user/--password required there when given). Blob GETs
redirect to a second listener (the "CDN") that refuses any request carrying Authorization.
The repository `toomany` answers 429 with a registry error body. GET /stats gives counters.
Binds 127.0.0.1 only; writes "<port> <cdn port>" to --ports-file once listening.
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import threading

STATS = {"token_requests": 0, "token_scopes": [], "cdn_requests": 0,
         "cdn_auth_headers": 0, "manifest_requests": 0}
LOCK = threading.Lock()


def bump(key, by=1):
    with LOCK:
        STATS[key] += by


class Registry(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body=b"", headers=None, head=False):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def errors(self, code, err, message, headers=None):
        body = json.dumps({"errors": [{"code": err, "message": message}]}).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        self.send(code, body, h, head=self.command == "HEAD")

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        a = self.server.args
        path = self.path.split("?")[0]
        if path == "/stats":
            with LOCK:
                return self.send(200, json.dumps(STATS).encode())
        if path == "/token":
            return self.token()
        if not path.startswith("/v2/"):
            return self.send(404)
        auth = self.headers.get("Authorization", "")
        name = path[4:].split("/manifests/")[0].split("/blobs/")[0]
        if not auth.startswith("Bearer tok-"):
            challenge = ('Bearer realm="http://127.0.0.1:%d/token",service="fake-registry",'
                         'scope="repository:%s:pull"' % (self.server.server_port, name))
            if auth:
                challenge += ',error="invalid_token"'
            return self.errors(401, "UNAUTHORIZED", "authentication required",
                               {"WWW-Authenticate": challenge})
        if path == "/v2/":
            return self.send(200, b"{}", {"Content-Type": "application/json"})
        if name == "toomany":
            return self.errors(429, "TOOMANYREQUESTS", "slow down", {"Retry-After": "30"})
        if "/manifests/" in path:
            bump("manifest_requests")
            ref = path.split("/manifests/")[1]
            file = os.path.join(a.dir, "blobs" if ref.startswith("sha256:") else "manifests", ref)
            if not os.path.exists(file):
                return self.errors(404, "MANIFEST_UNKNOWN", "manifest unknown")
            data = open(file, "rb").read()
            doc = json.loads(data)
            media = doc.get("mediaType") or (
                "application/vnd.docker.distribution.manifest.v1+prettyjws"
                if doc.get("schemaVersion") == 1 else "application/json")
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            return self.send(200, data, {"Content-Type": media, "Docker-Content-Digest": digest},
                             head=self.command == "HEAD")
        if "/blobs/" in path:
            digest = path.split("/blobs/")[1]
            if not os.path.exists(os.path.join(a.dir, "blobs", digest)):
                return self.errors(404, "BLOB_UNKNOWN", "blob unknown to registry")
            return self.send(307, b"", {
                "Location": "http://127.0.0.1:%d/blobs/%s" % (self.server.cdn_port, digest)})
        return self.send(404)

    def token(self):
        a = self.server.args
        bump("token_requests")
        query = self.path.split("?", 1)[1] if "?" in self.path else ""
        with LOCK:
            STATS["token_scopes"].append(query)
        if a.user:
            want = "Basic " + base64.b64encode(("%s:%s" % (a.user, a.password)).encode()).decode()
            if self.headers.get("Authorization", "") != want:
                return self.errors(401, "UNAUTHORIZED", "bad credentials")
        with LOCK:
            n = STATS["token_requests"]
        body = json.dumps({"token": "tok-%d" % n, "expires_in": 300}).encode()
        self.send(200, body, {"Content-Type": "application/json"})


class Cdn(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        bump("cdn_requests")
        if self.headers.get("Authorization"):
            bump("cdn_auth_headers")
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        file = os.path.join(self.server.args.dir, "blobs", self.path.split("/blobs/")[1])
        data = open(file, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--ports-file", required=True)
    p.add_argument("--user", default="")
    p.add_argument("--password", default="")
    args = p.parse_args()
    cdn = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cdn)
    cdn.args = args
    registry = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    registry.args = args
    registry.cdn_port = cdn.server_port
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    tmp = args.ports_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (registry.server_port, cdn.server_port))
    os.rename(tmp, args.ports_file)
    registry.serve_forever()


if __name__ == "__main__":
    main()

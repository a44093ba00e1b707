#!/usr/bin/env python3
"""In-cluster clients: a pod whose script calls the official Python client's
config.load_incluster_config() (Debian's python3-kubernetes, as operators and Katib collectors
do) reads its own pod through `pjemu serve --token` (HTTPS), with the service-account token,
ca.crt and namespace the kubelet projects at /var/run/secrets/kubernetes.io/serviceaccount and
KUBERNETES_SERVICE_HOST/PORT. Also: the `default` ServiceAccount and kube-root-ca.crt of every
namespace (a new one's too), automountServiceAccountToken: false, a pod of a ServiceAccount that
does not exist yet waiting for it, and the pod's token refused once the pod is gone.
Needs the sandbox (root) to see the volume at its path: exit 77 otherwise.

Usage: python_incluster_test.py <pjemu binary>
"""
import base64
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from served import FAILURES, check, served, wait_for  # noqa: E402
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

TOKEN = "incluster-test-token"
SCRIPT = r"""
import os, sys
from kubernetes import client, config
config.load_incluster_config()
ns = open('/var/run/secrets/kubernetes.io/serviceaccount/namespace').read()
pod = client.CoreV1Api().read_namespaced_pod(os.environ['HOSTNAME'], ns)
print('READ', pod.metadata.name, pod.metadata.uid, pod.spec.service_account_name or '-', flush=True)
print('HOST', os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_SERVICE_PORT'], flush=True)
print('TOKEN', open('/var/run/secrets/kubernetes.io/serviceaccount/token').read(), flush=True)
"""
NO_MOUNT = r"""
import os
print('MOUNTED' if os.path.exists('/var/run/secrets/kubernetes.io/serviceaccount') else 'NOMOUNT',
      os.environ.get('KUBERNETES_SERVICE_HOST', '-'), flush=True)
"""


def pod(name, script, **spec):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(restart_policy="Never", containers=[client.V1Container(
            name="main", image="python:3.11", command=["python3", "-c", script])], **spec))


def phase(core, ns, name):
    try:
        return core.read_namespaced_pod(name, ns).status.phase
    except ApiException:
        return None


def log_of(core, ns, name):
    return core.read_namespaced_pod_log(name, ns)


def request(server, ca_file, token, path):
    ctx = ssl.create_default_context(cafile=ca_file)
    req = urllib.request.Request(server + path, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def run(core, server, ca_file, ca_pem):
    names = lambda ns: [s.metadata.name for s in core.list_namespaced_service_account(ns).items]
    check(wait_for(lambda: "default" in names("default")), "namespace default has its default SA")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team")))
    check(wait_for(lambda: "default" in names("team")), "a new namespace gets its default SA")

    def root_ca():
        try:
            return core.read_namespaced_config_map("kube-root-ca.crt", "team").data["ca.crt"]
        except ApiException:
            return None
    check(wait_for(lambda: root_ca() == ca_pem), "kube-root-ca.crt holds the kubeconfig's CA")

    core.create_namespaced_pod("team", pod("reader", SCRIPT))
    check(wait_for(lambda: phase(core, "team", "reader") in ("Succeeded", "Failed"), 60),
          "the in-cluster reader finished")
    text = log_of(core, "team", "reader")
    uid = core.read_namespaced_pod("reader", "team").metadata.uid
    check("READ reader %s" % uid in text, "load_incluster_config() read its own pod: %s" % text[-600:])
    check(phase(core, "team", "reader") == "Succeeded", "the reader Succeeded")
    token = [l.split(" ", 1)[1] for l in text.splitlines() if l.startswith("TOKEN ")]
    check(len(token) == 1, "the pod saw its token")
    if token:
        claims = json.loads(base64.urlsafe_b64decode(token[0].split(".")[1] + "=="))
        check(claims["sub"] == "system:serviceaccount:team:default", "sub: %s" % claims["sub"])
        check(claims["kubernetes.io"]["pod"] == {"name": "reader", "uid": uid}, "bound to the pod")
        check(request(server, ca_file, token[0], "/api/v1/namespaces/team/pods") == 200,
              "the pod's token is a bearer credential of serve")
        check(request(server, ca_file, token[0][:-4] + "AAAA", "/api/v1/namespaces/team/pods") == 401,
              "a changed signature is refused")
        core.delete_namespaced_pod("reader", "team", grace_period_seconds=0)
        check(wait_for(lambda: phase(core, "team", "reader") is None), "the reader is deleted")
        check(request(server, ca_file, token[0], "/api/v1/namespaces/team/pods") == 401,
              "the token of a deleted pod is refused")

    core.create_namespaced_pod("team", pod("nomount", NO_MOUNT, automount_service_account_token=False))
    check(wait_for(lambda: phase(core, "team", "nomount") == "Succeeded", 60), "nomount Succeeded")
    # The API server as pods reach it: the host's loopback, or the pod network's gateway.
    check(log_of(core, "team", "nomount").startswith(("NOMOUNT 127.0.0.1", "NOMOUNT 10.244.0.1")),
          "automountServiceAccountToken: false mounts nothing, the env is still set: %s"
          % log_of(core, "team", "nomount"))

    core.create_namespaced_pod("team", pod("custom", SCRIPT, service_account_name="trainer"))

    def failed_mount():
        events = core.list_namespaced_event("team").items
        return [e.message for e in events
                if e.involved_object.name == "custom" and e.reason == "FailedMount"]
    check(wait_for(lambda: failed_mount() != []), "a missing ServiceAccount holds the pod")
    check(any('serviceaccounts "trainer" not found' in m for m in failed_mount()),
          "FailedMount names it: %s" % failed_mount())
    check(phase(core, "team", "custom") == "Pending", "the pod is Pending meanwhile")
    core.create_namespaced_service_account(
        "team", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="trainer")))
    check(wait_for(lambda: phase(core, "team", "custom") == "Succeeded", 60),
          "the pod runs once its ServiceAccount exists")
    check("READ custom" in log_of(core, "team", "custom") and
          " trainer\n" in log_of(core, "team", "custom"), "and reads itself as trainer")


def main():
    if os.geteuid() != 0:
        print("skipped: the service-account volume needs the sandbox (root)")
        return 77
    with served(sys.argv[1], ["--token", TOKEN]) as kubeconfig:
        config.load_kube_config(config_file=kubeconfig)
        cfg = client.Configuration.get_default_copy()
        ca_pem = open(cfg.ssl_ca_cert).read()
        run(client.CoreV1Api(), cfg.host, cfg.ssl_ca_cert, ca_pem)
    print("python in-cluster test: %d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

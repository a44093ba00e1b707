#!/usr/bin/python3
"""Client test: the official Python client (python3-kubernetes 22.6) against
pjemu-apiserver-testd: CustomObjectsApi create/get/list/watch/patch/replace/delete of a
PyTorchJob, typed CoreV1Api pods and events, and a pod log read and followed, ConfigMaps and
Secrets (stringData folded into data).
Usage: python_client_test.py TESTD"""
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testd_helper import TestServer  # noqa: E402

from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

G, V, P = "kubeflow.org", "v1", "pytorchjobs"
HERE = os.path.dirname(os.path.abspath(__file__))


def job(name):
    container = {"name": "pytorch", "image": "pytorch-mnist:1", "command": ["python3", "mnist.py"]}
    replica = {"replicas": 1, "restartPolicy": "OnFailure",
               "template": {"spec": {"containers": [container]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "labels": {"app": "mnist"}},
            "spec": {"pytorchReplicaSpecs": {"Master": replica, "Worker": replica}}}


def expect_api_error(status, reason, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        assert e.status == status, (e.status, e.body)
        assert json.loads(e.body)["reason"] == reason, e.body
        return json.loads(e.body)
    raise AssertionError("expected HTTP %d %s" % (status, reason))


def main(testd):
    with TestServer(testd, "--log-file", os.path.join(HERE, "data", "master.log")) as server:
        config.load_kube_config(config_file=server.kubeconfig)
        co = client.CustomObjectsApi()
        core = client.CoreV1Api()
        ns = "default"

        created = co.create_namespaced_custom_object(G, V, ns, P, job("mnist"))
        assert created["metadata"]["name"] == "mnist" and created["metadata"]["uid"], created
        body = expect_api_error(409, "AlreadyExists", co.create_namespaced_custom_object,
                                G, V, ns, P, job("mnist"))
        assert body["message"] == 'pytorchjobs.kubeflow.org "mnist" already exists', body
        got = co.get_namespaced_custom_object(G, V, ns, P, "mnist")
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        listed = co.list_namespaced_custom_object(G, V, ns, P, label_selector="app=mnist")
        assert [i["metadata"]["name"] for i in listed["items"]] == ["mnist"], listed
        assert listed["metadata"]["resourceVersion"]
        everywhere = co.list_cluster_custom_object(G, V, P)
        assert len(everywhere["items"]) == 1
        expect_api_error(404, "NotFound", co.get_namespaced_custom_object, G, V, ns, P, "nosuch")

        # Watch (no resourceVersion: the existing job comes first as ADDED), then a patch.
        events = []
        ready = threading.Event()

        def watcher():
            w = watch.Watch()
            for ev in w.stream(co.list_namespaced_custom_object, G, V, ns, P, timeout_seconds=20):
                events.append((ev["type"], ev["object"]["metadata"]["name"],
                               ev["object"]["metadata"].get("labels", {})))
                ready.set()
                if ev["type"] == "MODIFIED":
                    w.stop()
        t = threading.Thread(target=watcher)
        t.start()
        assert ready.wait(10), "watch delivered nothing"
        # A dict goes out as a merge patch (application/merge-patch+json).
        patched = co.patch_namespaced_custom_object(G, V, ns, P, "mnist",
                                                    {"metadata": {"labels": {"tier": "gold"}}})
        assert patched["metadata"]["labels"]["tier"] == "gold"
        t.join(20)
        assert not t.is_alive(), "watch did not see the patch"
        assert events[0][:2] == ("ADDED", "mnist"), events
        assert events[-1][0] == "MODIFIED" and events[-1][2].get("tier") == "gold", events

        stale = dict(got)
        stale["spec"]["runPolicy"] = {"backoffLimit": 2}
        body = expect_api_error(409, "Conflict", co.replace_namespaced_custom_object,
                                G, V, ns, P, "mnist", stale)
        assert "the object has been modified" in body["message"], body
        fresh = co.get_namespaced_custom_object(G, V, ns, P, "mnist")
        fresh["spec"]["runPolicy"] = {"backoffLimit": 2}
        replaced = co.replace_namespaced_custom_object(G, V, ns, P, "mnist", fresh)
        assert replaced["spec"]["runPolicy"]["backoffLimit"] == 2
        assert replaced["metadata"]["generation"] == 2
        status = co.patch_namespaced_custom_object_status(
            G, V, ns, P, "mnist",
            {"status": {"conditions": [{"type": "Created", "status": "True"}]}})
        assert status["status"]["conditions"][0]["type"] == "Created"

        # Typed core API: a pod, its log, events.
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "mnist-master-0",
                            "labels": {"training.kubeflow.org/job-name": "mnist"}},
               "spec": {"containers": [{"name": "pytorch", "image": "pytorch-mnist:1"}]}}
        core.create_namespaced_pod(ns, pod)
        pods = core.list_namespaced_pod(ns, label_selector="training.kubeflow.org/job-name in (mnist,foo)")
        assert [p.metadata.name for p in pods.items] == ["mnist-master-0"], pods
        log = core.read_namespaced_pod_log("mnist-master-0", ns)
        assert log.splitlines()[0] == "Using distributed PyTorch with gloo backend", log
        assert len(log.splitlines()) == 4, log
        tail = core.read_namespaced_pod_log("mnist-master-0", ns, container="pytorch", tail_lines=1,
                                            timestamps=True)
        assert tail == "2024-01-01T00:00:04.000000000Z accuracy=0.9500\n", repr(tail)

        lines = []
        got_line = threading.Event()

        def follower():
            for line in watch.Watch().stream(core.read_namespaced_pod_log, "mnist-master-0", ns):
                lines.append(line)
                got_line.set()
        f = threading.Thread(target=follower)
        f.start()
        assert got_line.wait(10), "log follow delivered nothing"
        core.patch_namespaced_pod_status("mnist-master-0", ns, {"status": {"phase": "Succeeded"}})
        f.join(20)
        assert not f.is_alive(), "log follow did not end when the container stopped"
        assert len(lines) == 4 and lines[-1] == "accuracy=0.9500", lines

        core.create_namespaced_event(ns, {
            "metadata": {"name": "mnist.17a8b2c3d4e5f601"},
            "involvedObject": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                               "name": "mnist", "namespace": ns, "uid": created["metadata"]["uid"]},
            "reason": "PyTorchJobCreated", "message": "PyTorchJob mnist is created.",
            "type": "Normal", "source": {"component": "pytorchjob-controller"}})
        evs = core.list_namespaced_event(ns, field_selector="involvedObject.kind=PyTorchJob,involvedObject.name=mnist")
        assert [e.reason for e in evs.items] == ["PyTorchJobCreated"], evs

        # ConfigMaps and Secrets as the typed client writes and reads them.
        core.create_namespaced_config_map(ns, {"metadata": {"name": "hparams"},
                                               "data": {"train.py": "print(1)\n"}})
        assert core.read_namespaced_config_map("hparams", ns).data == {"train.py": "print(1)\n"}
        core.create_namespaced_secret(ns, {"metadata": {"name": "tok"},
                                           "stringData": {"token": "abc"}})
        secret = core.read_namespaced_secret("tok", ns)
        assert secret.data == {"token": "YWJj"} and secret.type == "Opaque", secret
        assert secret.string_data is None, secret
        body = expect_api_error(422, "Invalid", core.create_namespaced_config_map, ns,
                                {"metadata": {"name": "bad"}, "data": {"a b": "x"}})
        assert body["details"]["causes"][0]["field"] == "data[a b]", body

        co.delete_namespaced_custom_object(G, V, ns, P, "mnist")
        expect_api_error(404, "NotFound", co.get_namespaced_custom_object, G, V, ns, P, "mnist")
        print("python client: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])

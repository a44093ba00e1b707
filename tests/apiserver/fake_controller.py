#!/usr/bin/python3
"""Plays the training-operator and kubelet for the apiserver client tests, through the REST API.

  fake_controller.py SERVER created NS NAME   pods <name>-master-0/-worker-0 (Running), their
                                              services, events, job conditions Created+Running
  fake_controller.py SERVER finish NS NAME    pods Completed, job Succeeded (Running=False), event

SERVER is http://127.0.0.1:PORT (no token). The real controller and kubelet replace this in
`pjemu serve`; seed_workflow.sh calls it through SEED_HOOK.
"""
import datetime
import json
import sys
import time
import urllib.error
import urllib.request


def call(server, method, path, body=None, content_type="application/json"):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server + path, data=data, method=method)
    req.add_header("Content-Type", content_type)
    req.add_header("Accept", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        sys.exit("fake_controller: %s %s -> %d %s" % (method, path, e.code, e.read().decode()))


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def owner(job):
    return [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": job["metadata"]["name"],
             "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]


def event(server, ns, job, reason, message, kind="PyTorchJob", api_version="kubeflow.org/v1",
          name=None, uid=None):
    obj_name = name or job["metadata"]["name"]
    call(server, "POST", "/api/v1/namespaces/%s/events" % ns, {
        "apiVersion": "v1", "kind": "Event",
        # Named like client-go's recorder: <object>.<unix nanoseconds in hex>.
        "metadata": {"name": "%s.%x" % (obj_name, time.time_ns()), "namespace": ns},
        "involvedObject": {"apiVersion": api_version, "kind": kind, "name": obj_name,
                           "namespace": ns, "uid": uid or job["metadata"]["uid"]},
        "reason": reason, "message": message, "type": "Normal", "count": 1,
        "source": {"component": "pytorchjob-controller"},
        "firstTimestamp": now(), "lastTimestamp": now()})


def set_conditions(server, ns, name, conditions):
    call(server, "PATCH", "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs/%s/status" % (ns, name),
         {"status": {"conditions": conditions}}, "application/merge-patch+json")


def cond(kind, status, reason, message):
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastUpdateTime": now(), "lastTransitionTime": now()}


def created(server, ns, name):
    job = call(server, "GET", "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs/%s" % (ns, name))
    for i, rtype in enumerate(["master", "worker"]):
        pod_name = "%s-%s-0" % (name, rtype)
        labels = {"training.kubeflow.org/job-name": name,
                  "training.kubeflow.org/operator-name": "pytorchjob-controller",
                  "training.kubeflow.org/replica-type": rtype,
                  "training.kubeflow.org/replica-index": "0"}
        if rtype == "master":
            labels["training.kubeflow.org/job-role"] = "master"
        pod = call(server, "POST", "/api/v1/namespaces/%s/pods" % ns, {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod_name, "namespace": ns, "labels": labels,
                         "ownerReferences": owner(job)},
            "spec": {"containers": [{"name": "pytorch", "image": "pytorch-mnist:1"}],
                     "nodeName": "pjemu-node-0", "restartPolicy": "OnFailure"}})
        call(server, "PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (ns, pod_name), {"status": {
            "phase": "Running", "podIP": "10.244.0.%d" % (10 + i), "startTime": now(),
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "pytorch", "image": "pytorch-mnist:1",
                                   "imageID": "pytorch-mnist@sha256:0", "ready": True,
                                   "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": now()}}}]}},
             "application/merge-patch+json")
        call(server, "POST", "/api/v1/namespaces/%s/services" % ns, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": pod_name, "namespace": ns, "labels": labels,
                         "ownerReferences": owner(job)},
            "spec": {"clusterIP": "None", "selector": labels,
                     "ports": [{"name": "pytorchjob-port", "port": 23456}]}})
        event(server, ns, job, "SuccessfulCreatePod", "Created pod: " + pod_name)
        event(server, ns, job, "SuccessfulCreateService", "Created service: " + pod_name)
    set_conditions(server, ns, name, [
        cond("Created", "True", "PyTorchJobCreated", "PyTorchJob %s is created." % name),
        cond("Running", "True", "PyTorchJobRunning", "PyTorchJob %s is running." % name)])


def finish(server, ns, name):
    job = call(server, "GET", "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs/%s" % (ns, name))
    for rtype in ["master", "worker"]:
        pod_name = "%s-%s-0" % (name, rtype)
        call(server, "PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (ns, pod_name), {"status": {
            "phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [{"name": "pytorch", "image": "pytorch-mnist:1",
                                   "imageID": "pytorch-mnist@sha256:0", "ready": False,
                                   "restartCount": 0, "started": False,
                                   "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                            "startedAt": now(),
                                                            "finishedAt": now()}}}]}},
             "application/merge-patch+json")
    set_conditions(server, ns, name, [
        cond("Created", "True", "PyTorchJobCreated", "PyTorchJob %s is created." % name),
        cond("Running", "False", "PyTorchJobRunning", "PyTorchJob %s is running." % name),
        cond("Succeeded", "True", "PyTorchJobSucceeded",
             "PyTorchJob %s is successfully completed." % name)])
    event(server, ns, job, "PyTorchJobSucceeded", "PyTorchJob %s is successfully completed." % name)


if __name__ == "__main__":
    server, action, ns, name = sys.argv[1:5]
    {"created": created, "finish": finish}[action](server, ns, name)

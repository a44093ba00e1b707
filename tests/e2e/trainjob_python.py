#!/usr/bin/python3
"""A TrainJob through the official Python client (Debian's python3-kubernetes), as the Kubeflow
SDK's Kubernetes backend sends it: CustomObjectsApi creates the fixture's TrainJob (renamed
by-python), a watch follows it to Complete (AllJobsCompleted), then the JobSet it owns, the
Indexed Job (BatchV1Api), the pods by the JobSet's label and their logs: one world of 4.
Usage: trainjob_python.py KUBECONFIG TRAINJOB_YAML"""
import sys

import yaml
from kubernetes import client, config, watch

G, V = "trainer.kubeflow.org", "v1alpha1"
NAME, NS = "by-python", "default"
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + "python client: " + what, flush=True)
    if not cond:
        FAILURES.append(what)


def wait_complete(co):
    """The TrainJob's conditions from a watch, until one is final (or 240 s)."""
    w = watch.Watch()
    for ev in w.stream(co.list_namespaced_custom_object, G, V, NS, "trainjobs",
                       field_selector="metadata.name=" + NAME, timeout_seconds=240):
        conds = {c["type"]: c for c in ev["object"].get("status", {}).get("conditions", [])
                 if c.get("status") == "True"}
        if "Complete" in conds or "Failed" in conds:
            w.stop()
            return conds
    return {}


def main(kubeconfig, fixture):
    config.load_kube_config(config_file=kubeconfig)
    co, batch, core = client.CustomObjectsApi(), client.BatchV1Api(), client.CoreV1Api()
    body = yaml.safe_load(open(fixture))
    body["metadata"]["name"] = NAME
    created = co.create_namespaced_custom_object(G, V, NS, "trainjobs", body)
    check(created["metadata"].get("uid") and created["spec"]["trainer"]["numNodes"] == 2,
          "created, as sent")
    conds = wait_complete(co)
    check(conds.get("Complete", {}).get("reason") == "AllJobsCompleted",
          "Complete (AllJobsCompleted): %s" % sorted(conds))
    jobset = co.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS, "jobsets", NAME)
    owner = jobset["metadata"]["ownerReferences"][0]
    check(owner["kind"] == "TrainJob" and owner["name"] == NAME, "the JobSet is the TrainJob's")
    job = batch.read_namespaced_job(NAME + "-node-0", NS)
    check(job.spec.completion_mode == "Indexed" and job.status.succeeded == 2,
          "Job %s-node-0 Indexed, 2 succeeded" % NAME)
    pods = core.list_namespaced_pod(NS, label_selector="jobset.sigs.k8s.io/jobset-name=" + NAME)
    check(len(pods.items) == 2, "two node pods")
    logs = "".join(core.read_namespaced_pod_log(p.metadata.name, NS) for p in pods.items)
    for r in range(4):
        check("rank %d: WORLD_SIZE=4 world 4, rank sum 6" % r in logs, "rank %d in a world of 4" % r)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

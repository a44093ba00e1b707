#!/usr/bin/python3
"""Kueue's Workloads through the official Python client (Debian's python3-kubernetes): a watch
on kueue.x-k8s.io/v1beta2 workloads while five queued GPU jobs of four kinds run on a 2-GPU
ClusterQueue: never more than 2 GPUs admitted at once, admitted in the queue's (creation)
order, every Workload Finished with reason Succeeded.
Usage: kueue_python.py KUBECONFIG NAME..."""
import sys

from kubernetes import client, config, watch

G, V, NS = "kueue.x-k8s.io", "v1beta2", "default"
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + "python client: " + what, flush=True)
    if not cond:
        FAILURES.append(what)


def true_conditions(wl):
    return {c["type"]: c for c in wl.get("status", {}).get("conditions", []) if c.get("status") == "True"}


def admitted_gpus(workloads):
    gpus = 0
    for wl in workloads.values():
        conds = true_conditions(wl)
        if "Admitted" not in conds or "Finished" in conds:
            continue
        for ps in wl["status"].get("admission", {}).get("podSetAssignments", []):
            gpus += int(ps.get("resourceUsage", {}).get("nvidia.com/gpu", "0"))
    return gpus


def main(kubeconfig, names):
    config.load_kube_config(config_file=kubeconfig)
    co = client.CustomObjectsApi()
    workloads, order, most = {}, [], 0
    w = watch.Watch()
    for ev in w.stream(co.list_namespaced_custom_object, G, V, NS, "workloads", timeout_seconds=240):
        wl = ev["object"]
        owner = wl["metadata"]["ownerReferences"][0]["name"]
        if owner not in names:
            continue
        workloads[owner] = wl
        conds = true_conditions(wl)
        if "Admitted" in conds and owner not in order:
            order.append(owner)
        most = max(most, admitted_gpus(workloads))
        if len(workloads) == len(names) and all("Finished" in true_conditions(x) for x in workloads.values()):
            w.stop()
    check(most == 2, "at most 2 GPUs admitted at once (saw %d)" % most)
    check(order == names, "admitted in the queue's order: %s" % order)
    for name in names:
        conds = true_conditions(workloads.get(name, {}))
        check(conds.get("Finished", {}).get("reason") == "Succeeded", name + "'s Workload Finished: Succeeded")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))

#!/usr/bin/env python3
"""The official Python client (Debian's python3-kubernetes) against `pjemu serve` over HTTPS,
trusting only the CA of the kubeconfig serve writes: a PodDisruptionBudget through PolicyV1Api,
then CoreV1Api.create_namespaced_pod_eviction refused with 429 TooManyRequests (the API server's
message and the DisruptionBudget cause) while the budget allows nothing, and accepted (the pod
goes) once it allows one. Bounded in time.

Usage: python_eviction_test.py <pjemu binary>
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from served import FAILURES, check, served, wait_for  # noqa: E402
from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

NS = "default"


def pod_ready(core, name):
    try:
        pod = core.read_namespaced_pod(name, NS)
    except ApiException:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def evict(core, name):
    body = client.V1Eviction(api_version="policy/v1", kind="Eviction",
                             metadata=client.V1ObjectMeta(name=name, namespace=NS),
                             delete_options=client.V1DeleteOptions(grace_period_seconds=0))
    return core.create_namespaced_pod_eviction(name, NS, body)


def run(core, policy):
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="evictme", labels={"app": "evictme"}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="main", image="busybox", command=["sleep", "600"])]))
    core.create_namespaced_pod(NS, pod)
    check(wait_for(lambda: pod_ready(core, "evictme")), "the pod is Ready")
    pdb = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="keep"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=1, selector=client.V1LabelSelector(match_labels={"app": "evictme"})))
    policy.create_namespaced_pod_disruption_budget(NS, pdb)
    status = policy.read_namespaced_pod_disruption_budget("keep", NS).status
    check((status.current_healthy, status.desired_healthy, status.expected_pods,
           status.disruptions_allowed) == (1, 1, 1, 0),
          "budget status computed: %s" % status)
    try:
        evict(core, "evictme")
        check(False, "the eviction is refused")
    except ApiException as e:
        body = json.loads(e.body)
        check(e.status == 429 and body.get("reason") == "TooManyRequests",
              "429 TooManyRequests: %s %s" % (e.status, e.body))
        check(body.get("message") ==
              "Cannot evict pod as it would violate the pod's disruption budget.",
              "the API server's message")
        causes = body.get("details", {}).get("causes", [])
        check(causes and causes[0].get("reason") == "DisruptionBudget" and
              causes[0].get("message") == "The disruption budget keep needs 1 healthy pods and "
              "has 1 currently", "the DisruptionBudget cause: %s" % causes)
    check(pod_ready(core, "evictme"), "the refused pod still runs")
    policy.patch_namespaced_pod_disruption_budget("keep", NS, {"spec": {"minAvailable": 0}})
    allowed = policy.list_namespaced_pod_disruption_budget(NS).items[0].status.disruptions_allowed
    check(allowed == 1, "one disruption allowed after the patch (got %s)" % allowed)
    evict(core, "evictme")

    def gone():
        try:
            core.read_namespaced_pod("evictme", NS)
            return False
        except ApiException as e:
            return e.status == 404
    check(wait_for(gone), "the evicted pod is deleted")
    try:
        evict(core, "evictme")
        check(False, "evicting a missing pod fails")
    except ApiException as e:
        check(e.status == 404, "a missing pod's eviction is 404 (%s)" % e.status)


def main():
    with served(sys.argv[1]) as kubeconfig:
        text = open(kubeconfig).read()
        check(re.search(r'server: "https://', text) is not None, "the kubeconfig is https")
        check("insecure-skip-tls-verify" not in text, "and verifies the server")
        config.load_kube_config(config_file=kubeconfig)
        check(client.Configuration.get_default_copy().verify_ssl, "the client verifies TLS")
        run(client.CoreV1Api(), client.PolicyV1Api())
    print("python eviction test: %d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

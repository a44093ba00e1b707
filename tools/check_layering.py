#!/usr/bin/env python3
"""Fails when an #include "emulator/<component>/..." breaks the allowed dependency table.

The flow is one-way (README "The flow"): a component may include only itself, common, api and the
components listed for it below. The job kinds are read from emulator/kinds/kinds.txt, the one
registry: each kind's folder may use the shared controller and the client, and only the registry
(emulator/kinds) reaches the kinds. Run from anywhere: python3 tools/check_layering.py
"""
import pathlib
import re
import sys

ALLOWED = {
    "common": set(),
    "api": {"common"},
    "manifest": set(),
    "store": set(),
    "process": set(),
    # The node's images: the store, archives, registry pulls.
    "image": set(),
    "client": {"store"},
    "apiserver": {"store"},
    "controller": {"client"},
    "scheduler": {"client"},
    "storage": {"client"},
    "tensorboard": {"client"},
    "namespaces": {"client"},
    # Kueue's manager: the kinds' QueueIntegrations (controller) through the client.
    "kueue": {"controller", "client"},
    "kubelet": {"client", "process", "image"},
    # Cluster DNS and ClusterIP Services: watches through the client, runs dnsmasq and nft.
    "network": {"client", "process"},
    "faults": {"client", "process", "kubelet", "image"},
    "persist": {"store"},
    # The one wiring: faults reach it only as decorators handed in through its options.
    "cluster": {"store", "process", "client", "apiserver", "controller", "kinds", "kueue",
                "network",
                "image",
                "scheduler", "kubelet", "persist", "ui", "storage", "tensorboard", "namespaces",
                "manifest"},  # the cluster config file (cluster_config.h)
    # The PyTorchJob's vocabulary (defaulting, validation, conditions) is api's: only the cluster
    # wiring reaches the controller itself.
    "scenario": {"cluster", "manifest", "faults", "client"},
    "cli": {"scenario", "cluster", "client", "manifest", "image"},
    "ui": {"store", "apiserver", "manifest"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"emulator/([a-z_]+)/')
ROOT = pathlib.Path(__file__).resolve().parent.parent


def job_kinds() -> list:
    """The kinds' folders, as emulator/kinds/kinds.txt lists them."""
    lines = (ROOT / "emulator" / "kinds" / "kinds.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


# Each job kind: its own folder over the shared controller machinery; the registry over them.
for _kind in job_kinds():
    ALLOWED[_kind] = {"controller", "client"}
ALLOWED["kinds"] = {"controller"} | set(job_kinds())


def main() -> int:
    root = ROOT / "emulator"
    errors = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        component = path.relative_to(root).parts[0]
        allowed = ALLOWED.get(component)
        if allowed is None:
            errors.append(f"{path}: component '{component}' is not in tools/check_layering.py")
            continue
        allowed = allowed | {component, "common"} | ({"api"} if component != "common" else set())
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) not in allowed:
                errors.append(f"{path}:{lineno}: '{component}' may not include "
                              f"emulator/{m.group(1)}/ (allowed: {', '.join(sorted(allowed))})")
    # trainer/ builds against LibTorch alone (trainer/README.md "Build"): no emulator/ headers.
    for path in sorted((root.parent / "trainer").rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if INCLUDE.match(line):
                errors.append(f"{path}:{lineno}: trainer/ may not include emulator/ headers")
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # --help: the docstring above, and nothing else
        print(__doc__.strip())
        sys.exit(0)
    sys.exit(main())

# An elastic training loop under torchrun's c10d rendezvous: every round all-reduces a counter
# and, when the world changes, prints it. It stops (exit 0) once the mounted ConfigMap of the
# job's control volume has a `stop` key, so the test can end it after scaling 1 -> 2 -> 1.
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
print("elastic rank %d: world %d (restart %s)" % (rank, world, restart), flush=True)
while not os.path.exists("/etc/control/stop"):
    step = torch.tensor([1.0])
    dist.all_reduce(step)
    if int(step.item()) != world:
        raise SystemExit("all_reduce gave %d in a world of %d" % (step.item(), world))
    time.sleep(0.2)
print("elastic rank %d: stop seen in world %d" % (rank, world), flush=True)
dist.barrier()
dist.destroy_process_group()

# The elastic echo workload of the Kubeflow Training Operator's examples/pytorch/elastic/echo,
# written for pjemu's test images: every worker prints what torch's elastic agent set in its
# environment, joins the gloo process group, meets the others at a barrier and prints its rank.
import os
import sys

import torch.distributed as dist

KEYS = ("LOCAL_RANK", "RANK", "GROUP_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS")

if __name__ == "__main__":
    print("agent env on pid %d: %s" % (os.getpid(), {k: os.environ.get(k) for k in KEYS}))
    sys.stdout.flush()
    dist.init_process_group(backend="gloo")
    dist.barrier()
    print("echo: rank=%d world_size=%d" % (dist.get_rank(), dist.get_world_size()), flush=True)
    dist.destroy_process_group()

# A user's own training script, as it would sit in their image at /workspace/train.py: reads its
# hyper-parameters from a mounted ConfigMap and its environment, a token from a Secret, joins the
# torch.distributed world (torchrun's env, or the operator's RANK/WORLD_SIZE without torchrun),
# checks the world with an all_reduce, resolves the master by name, and writes a checkpoint
# beside itself (the image's copy-on-write layer).
import os
import socket
import sys

import torch
import torch.distributed as dist

from hparams import load  # from /workspace, through the image's PYTHONPATH

params = load("/etc/train/params.ini")
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
total = torch.tensor([float(rank)])
dist.all_reduce(total)
master = os.environ.get("MASTER_ADDR_NAME", "")
resolved = socket.gethostbyname(master) if master else "-"
with open("checkpoint-rank%d.txt" % rank, "w") as f:
    f.write("lr=%s\n" % params["lr"])
print(
    "rank %d of %d: sum %d, lr %s, epochs %s, token %s, master %s at %s, python %s, torch %s"
    % (rank, world, int(total.item()), params["lr"], os.environ.get("EPOCHS", "?"),
       "set" if os.environ.get("API_TOKEN") == "s3cr3t" else "missing", master, resolved,
       sys.executable, torch.__version__),
    flush=True,
)
dist.destroy_process_group()

"""A send/recv smoke test of torch.distributed over Gloo, in the spirit of the Kubeflow Training
Operator's examples/pytorch/smoke-dist (written for pjemu's test image
pjemu.test/pytorch-dist-sendrecv-test:1.13; tests/images/build_images.py puts it at
/opt/mlkube/dist_sendrecv.py).

The process group comes from the environment the PyTorchJob controller sets: MASTER_ADDR,
MASTER_PORT, RANK and WORLD_SIZE. Rank 0 sends a 2x2 tensor to every other rank; each receiver
squares it element-wise and sends the product back; rank 0 checks every answer. Exit 0 when all
answers match, 1 otherwise.
"""
import logging
import os
import sys

import torch
import torch.distributed as dist


def exchange(rank, world_size):
    """Rank 0 talks to every other rank in turn; returns the number of wrong answers."""
    torch.manual_seed(1234)
    payload = torch.randn(2, 2)
    if rank == 0:
        wrong = 0
        for peer in range(1, world_size):
            dist.send(tensor=payload, dst=peer)
            answer = torch.zeros(2, 2)
            dist.recv(tensor=answer, src=peer)
            ok = torch.allclose(answer, payload * payload)
            logging.info("rank 0: answer from rank %d: %s (%s)", peer, answer.tolist(),
                         "ok" if ok else "WRONG")
            wrong += 0 if ok else 1
        return wrong
    received = torch.zeros(2, 2)
    dist.recv(tensor=received, src=0)
    logging.info("rank %d: received from rank 0: %s", rank, received.tolist())
    dist.send(tensor=torch.mul(received, received), dst=0)
    return 0


def main():
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        logging.info("%s=%s", name, os.environ.get(name, "<unset>"))
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    logging.info("rank %d of %d: process group ready (gloo)", rank, world_size)
    wrong = exchange(rank, world_size)
    dist.barrier()
    dist.destroy_process_group()
    if wrong:
        logging.info("rank %d: %d wrong answer(s)", rank, wrong)
        return 1
    logging.info("rank %d: send/recv smoke test passed", rank)
    return 0


if __name__ == "__main__":
    sys.exit(main())

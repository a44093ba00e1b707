#!/usr/bin/python3
"""The training stand-in of the console's T9k browser test (t9k_console_test.mjs).

Logs as the tutorial's torch_mnist_trainingjob.py does ("epoch 1/3, batch   125/375 with loss:
1.5640", "epoch 1/3 with val loss: ..., val accuracy: ...") and writes the same scalars
(train/loss, val/loss, val/accuracy) to a TensorBoard event file in LOG_DIR as it goes, with the
framing and messages of tests/ui/make_tfevents.py (Debian's python3-protobuf and python3-crc32c).
It also writes and reads a scratch file (storage I/O for the monitoring tab) and keeps running for
HOLD seconds after the last scalar, so that the console samples it while it runs.

usage: python3 t9k_train.py LOG_DIR [HOLD_SECONDS]
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ui"))
import make_tfevents as tf  # noqa: E402


def main():
    log_dir = sys.argv[1]
    hold = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(log_dir, exist_ok=True)
    Event = tf.classes()
    name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.0"
    print("Using distributed PyTorch with gloo backend", flush=True)
    with open(os.path.join(log_dir, name), "wb") as f:
        def scalar(tag, step, value):
            ev = Event(wall_time=time.time(), step=step)
            ev.summary.value.add(tag=tag, simple_value=value)
            f.write(tf.record(ev.SerializeToString()))
            f.flush()

        f.write(tf.record(Event(wall_time=time.time(), file_version="brain.Event:2").SerializeToString()))
        for epoch in (1, 2, 3):
            for step in (125, 250, 375):
                loss = 2.3 - 0.1 * epoch - 0.0004 * step
                print(f"epoch {epoch}/3, batch {step:5d}/375 with loss: {loss:.4f}", flush=True)
                scalar("train/loss", (epoch - 1) * 375 + step, loss)
                time.sleep(0.3)
            val_loss, val_acc = 1.6 - 0.05 * epoch, 0.9 + 0.02 * epoch
            print(f"epoch {epoch}/3 with val loss: {val_loss:.4f}, val accuracy: {val_acc:.4f}", flush=True)
            scalar("val/loss", epoch * 375, val_loss)
            scalar("val/accuracy", epoch * 375, val_acc)
    scratch = os.path.join(log_dir, "..", "scratch.bin")
    deadline = time.time() + hold
    while True:
        with open(scratch, "wb") as s:
            for _ in range(64):
                s.write(os.urandom(4096))
            s.flush()
            os.fsync(s.fileno())
        with open(scratch, "rb") as s:
            while s.read(4096):
                pass
        if time.time() >= deadline:
            break
        time.sleep(0.5)
    os.remove(scratch)
    print("test loss: 1.4800, test accuracy: 0.9600", flush=True)


if __name__ == "__main__":
    main()

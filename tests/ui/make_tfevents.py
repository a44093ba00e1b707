#!/usr/bin/python3
"""Writes TensorBoard event files in the shapes real writers produce, for the console's reader tests.

Debian ships neither tensorboard nor tensorboardX, and torch.utils.tensorboard imports tensorboard,
so no real SummaryWriter runs here. These files are serialized instead by Debian's python3-protobuf
from descriptors built with tensorboard's field numbers (event.proto, summary.proto, tensor.proto,
tensor_shape.proto), framed as TFRecords with Debian's python3-crc32c: an implementation
independent of emulator/ui/tfevents.cc. Three writers' shapes, the tutorial's tags:
  torch/        torch.utils.tensorboard 1.13 add_scalar: Value{tag, simple_value}; file
                events.out.tfevents.<secs>.<host>.<pid>.<n>
  tensorboardx/ tensorboardX add_scalar: the same Value; file events.out.tfevents.<secs>.<host>
  tf2/          TensorFlow 2 tf.summary.scalar: Value{tag, metadata{plugin_data{plugin_name:
                "scalars"}}, tensor{dtype DT_FLOAT, tensor_shape{}, tensor_content | float_val}},
                plus an image-like string tensor the reader must skip
Deterministic (fixed wall times and values), so the committed files are what it writes.

usage: /usr/bin/python3 make_tfevents.py OUT_DIR     (exit 3 when a module is missing)
"""
import os
import struct
import sys

try:
    import crc32c
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:
    print(f"make_tfevents: {e} (apt-get install python3-crc32c python3-protobuf)", file=sys.stderr)
    sys.exit(3)

F = descriptor_pb2.FieldDescriptorProto


def field(msg, name, number, ftype, label=F.LABEL_OPTIONAL, type_name=None, oneof=None,
          packed=None):
    f = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof
    if packed is not None:
        f.options.packed = packed
    return f


def classes():
    fdp = descriptor_pb2.FileDescriptorProto(name="pjemu_tfevents_fixture.proto",
                                             package="tb", syntax="proto3")
    dim = fdp.message_type.add(name="Dim")
    field(dim, "size", 1, F.TYPE_INT64)
    shape = fdp.message_type.add(name="TensorShapeProto")
    field(shape, "dim", 2, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".tb.Dim")
    tensor = fdp.message_type.add(name="TensorProto")
    field(tensor, "dtype", 1, F.TYPE_INT32)
    field(tensor, "tensor_shape", 2, F.TYPE_MESSAGE, type_name=".tb.TensorShapeProto")
    field(tensor, "tensor_content", 4, F.TYPE_BYTES)
    field(tensor, "float_val", 5, F.TYPE_FLOAT, F.LABEL_REPEATED, packed=True)
    field(tensor, "double_val", 6, F.TYPE_DOUBLE, F.LABEL_REPEATED, packed=True)
    field(tensor, "string_val", 8, F.TYPE_BYTES, F.LABEL_REPEATED)
    plugin = fdp.message_type.add(name="PluginData")
    field(plugin, "plugin_name", 1, F.TYPE_STRING)
    meta = fdp.message_type.add(name="SummaryMetadata")
    field(meta, "plugin_data", 1, F.TYPE_MESSAGE, type_name=".tb.PluginData")
    summary = fdp.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    field(value, "tag", 1, F.TYPE_STRING)
    field(value, "simple_value", 2, F.TYPE_FLOAT, oneof=0)
    field(value, "tensor", 8, F.TYPE_MESSAGE, type_name=".tb.TensorProto", oneof=0)
    field(value, "metadata", 9, F.TYPE_MESSAGE, type_name=".tb.SummaryMetadata")
    field(summary, "value", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".tb.Summary.Value")
    event = fdp.message_type.add(name="Event")
    event.oneof_decl.add(name="what")
    field(event, "wall_time", 1, F.TYPE_DOUBLE)
    field(event, "step", 2, F.TYPE_INT64)
    field(event, "file_version", 3, F.TYPE_STRING, oneof=0)
    field(event, "summary", 5, F.TYPE_MESSAGE, type_name=".tb.Summary", oneof=0)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    factory = message_factory.MessageFactory(pool)
    return factory.GetPrototype(pool.FindMessageTypeByName("tb.Event"))


def masked(data):
    c = crc32c.crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked(header)) + data + struct.pack("<I", masked(data))


# The tutorial's scalars (torch_mnist_trainingjob.py with world size 4: 375 steps an epoch).
STEPS = 375
SCALARS = [("train/loss", (e - 1) * STEPS + s, 2.3 - 0.1 * e - 0.0004 * s)
           for e in (1, 2, 3) for s in (125, 250, 375)]
SCALARS += [(t, e * STEPS, v) for e in (1, 2, 3)
            for t, v in (("val/loss", 1.6 - 0.05 * e), ("val/accuracy", 0.9 + 0.02 * e))]
WALL = 1764201600.0


def simple_events(Event):
    out = [Event(wall_time=WALL, file_version="brain.Event:2")]
    for i, (tag, step, value) in enumerate(SCALARS):
        ev = Event(wall_time=WALL + i, step=step)
        ev.summary.value.add(tag=tag, simple_value=value)
        out.append(ev)
    return out


def tf2_events(Event):
    out = [Event(wall_time=WALL, file_version="brain.Event:2")]
    for i, (tag, step, value) in enumerate(SCALARS):
        ev = Event(wall_time=WALL + i, step=step)
        v = ev.summary.value.add(tag=tag)
        v.metadata.plugin_data.plugin_name = "scalars"
        v.tensor.dtype = 1  # DT_FLOAT
        v.tensor.tensor_shape.SetInParent()
        if i % 2:
            v.tensor.float_val.append(value)
        else:
            v.tensor.tensor_content = struct.pack("<f", value)
        out.append(ev)
    ev = Event(wall_time=WALL + 99, step=0)
    img = ev.summary.value.add(tag="images/sample")
    img.metadata.plugin_data.plugin_name = "images"
    img.tensor.dtype = 7  # DT_STRING
    img.tensor.tensor_shape.dim.add(size=3)
    img.tensor.string_val.extend([b"28", b"28", b"\x89PNG"])
    out.append(ev)
    return out


def write(path, events):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        for ev in events:
            f.write(record(ev.SerializeToString()))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    Event = classes()
    write(os.path.join(out, "torch", "events.out.tfevents.1764201600.node-0.4242.0"),
          simple_events(Event))
    write(os.path.join(out, "tensorboardx", "events.out.tfevents.1764201600.node-0"),
          simple_events(Event))
    write(os.path.join(out, "tf2", "train", "events.out.tfevents.1764201600.node-0.v2"),
          tf2_events(Event))
    return 0


if __name__ == "__main__":
    sys.exit(main())

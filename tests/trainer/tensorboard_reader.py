#!/usr/bin/python3
"""An independent reader of TensorBoard events files, for the differential test of pjemu-trainer's.

Reads each events file with Debian's python3-crc32c (the TFRecord checksums) and python3-protobuf
(the Event messages, from descriptors built here with tensorboard's field numbers: Debian ships
no tensorboard package). For every record it checks the length, both masked CRC-32Cs, that the
data parses as an Event with no unknown fields, and that protobuf serializes the parsed message
back to exactly the same bytes. Prints one JSON object per record on stdout:
  {"file": NAME, "wall_time": W, "step": S, "file_version": V}   or
  {"file": NAME, "wall_time": W, "step": S, "tag": T, "value": F}   (F: the float32 as a double)
Exits 1 with a message on stderr at the first violation, 3 when a module is missing.

usage: /usr/bin/python3 tensorboard_reader.py FILE_OR_DIR...
"""
import json
import os
import re
import struct
import sys

try:
    import crc32c
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:  # tools/setup installs python3-crc32c and python3-protobuf
    print(f"tensorboard_reader: {e} (apt-get install python3-crc32c python3-protobuf)",
          file=sys.stderr)
    sys.exit(3)

NAME = re.compile(r"^events\.out\.tfevents\.\d{10,}\.[^/]+\.\d+\.\d+$")
F = descriptor_pb2.FieldDescriptorProto


def event_class():
    """Event/Summary/Value with the field numbers of tensorboard's event.proto, summary.proto."""
    fdp = descriptor_pb2.FileDescriptorProto(name="pjemu_tb_event.proto", package="tensorboard",
                                             syntax="proto3")
    summary = fdp.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    value.field.add(name="node_name", number=7, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL,
                    oneof_index=0)
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".tensorboard.Summary.Value")
    event = fdp.message_type.add(name="Event")
    event.oneof_decl.add(name="what")
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL,
                    oneof_index=0)
    event.field.add(name="summary", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".tensorboard.Summary", oneof_index=0)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.MessageFactory(pool).GetPrototype(
        pool.FindMessageTypeByName("tensorboard.Event"))


def masked(data):
    c = crc32c.crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def fail(msg):
    print(f"tensorboard_reader: {msg}", file=sys.stderr)
    sys.exit(1)


def rebuilt(Event, ev):
    """A fresh Event from the known fields only: serializing it drops anything unknown."""
    out = Event(wall_time=ev.wall_time, step=ev.step)
    which = ev.WhichOneof("what")
    if which == "file_version":
        out.file_version = ev.file_version
    elif which == "summary":
        for v in ev.summary.value:
            nv = out.summary.value.add(tag=v.tag)
            if v.WhichOneof("value") != "simple_value":
                fail(f"value {v.tag!r} is not a simple_value")
            nv.simple_value = v.simple_value
    else:
        fail(f"event has neither file_version nor summary: {which}")
    return out


def read(path, Event):
    name = os.path.basename(path)
    if not NAME.match(name):
        fail(f"{name}: not named events.out.tfevents.<10-digit secs>.<host>.<pid>.<n>")
    data = open(path, "rb").read()
    pos, index = 0, 0
    while pos < len(data):
        where = f"{name} record {index} at byte {pos}"
        if len(data) - pos < 12:
            fail(f"{where}: truncated header")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if length_crc != masked(header):
            fail(f"{where}: length CRC {length_crc:#010x} != {masked(header):#010x}")
        if len(data) - pos - 12 < length + 4:
            fail(f"{where}: truncated data ({length} bytes promised)")
        body = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        if data_crc != masked(body):
            fail(f"{where}: data CRC {data_crc:#010x} != {masked(body):#010x}")
        ev = Event()
        ev.ParseFromString(body)
        again = rebuilt(Event, ev).SerializeToString()
        if again != body:
            fail(f"{where}: protobuf serializes the parsed Event as {again.hex()}, "
                 f"the file has {body.hex()}")
        if index == 0 and ev.WhichOneof("what") != "file_version":
            fail(f"{where}: the first record is not the file_version event")
        rec = {"file": name, "wall_time": ev.wall_time, "step": ev.step}
        if ev.WhichOneof("what") == "file_version":
            rec["file_version"] = ev.file_version
            print(json.dumps(rec))
        else:
            for v in ev.summary.value:
                print(json.dumps(dict(rec, tag=v.tag, value=v.simple_value)))
        pos += 16 + length
        index += 1


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    Event = event_class()
    for arg in argv[1:]:
        if os.path.isdir(arg):
            files = sorted(os.path.join(arg, n) for n in os.listdir(arg) if "tfevents" in n)
            if not files:
                fail(f"{arg}: no events file")
        else:
            files = [arg]
        for f in files:
            read(f, Event)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""tensorboard_check.py LOGDIR OUTPUT_DIR: reads the TensorBoard event file(s) coretrain wrote into LOGDIR
with a reader written from the formats alone (no coretrain code, no tensorboard/tensorflow package needed) and
checks them against OUTPUT_DIR/trainer_state.json:

- the file name is events.out.tfevents.{10-digit time}.{hostname}.{pid}.{counter};
- TFRecord framing: uint64le length, uint32le masked CRC-32C of the length bytes, data, uint32le masked CRC-32C
  of the data; both CRCs checked for every record, nothing left over;
- protobuf decoded by hand: the first Event has file_version "brain.Event:2"; text events "args/text_summary"
  and "model_config/text_summary" with plugin "text" and a DT_STRING tensor of shape [1] holding JSON
  (args = TrainingArguments JSON with output_dir; model_config = config.json's model_type);
- scalars: every number of every log_history entry (but "step") appears once as simple_value at its step with
  HF's tag rewrite (eval_x -> eval/x, test_x -> test/x, else train/x), value equal in float32, and no others.

If the tensorboard package is importable, its own EventFileLoader must read the same scalars too.
"""
import glob
import json
import os
import re
import socket
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(blob):
    pos = 0
    while pos < len(blob):
        if len(blob) - pos < 12:
            raise AssertionError(f"truncated record header at byte {pos}")
        header = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        assert hcrc == masked(header), f"length CRC mismatch at byte {pos}"
        data = blob[pos + 12:pos + 12 + length]
        assert len(data) == length, f"truncated record data at byte {pos}"
        (dcrc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
        assert dcrc == masked(data), f"data CRC mismatch at byte {pos}"
        yield data
        pos += 16 + length


def varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf):
    """(field number, wire type, value) for every field of a message; value: int, bytes, or raw 8/4 bytes."""
    pos, out = 0, []
    while pos < len(buf):
        key, pos = varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = varint(buf, pos)
        elif wt == 1:
            v, pos = buf[pos:pos + 8], pos + 8
        elif wt == 2:
            n, pos = varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
        elif wt == 5:
            v, pos = buf[pos:pos + 4], pos + 4
        else:
            raise AssertionError(f"unexpected wire type {wt}")
        out.append((num, wt, v))
    assert pos == len(buf), "message overruns its bytes"
    return out


def one(fs, num, wt):
    got = [v for n, w, v in fs if n == num]
    assert len(got) <= 1, f"field {num} repeated"
    if got:
        assert [w for n, w, v in fs if n == num][0] == wt, f"field {num}: wire type"
        return got[0]
    return None


def decode_event(data):
    fs = fields(data)
    ev = {"wall_time": struct.unpack("<d", one(fs, 1, 1))[0], "step": one(fs, 2, 0) or 0}
    fv = one(fs, 3, 2)
    if fv is not None:
        ev["file_version"] = fv.decode()
    summary = one(fs, 5, 2)
    if summary is not None:
        ev["values"] = []
        for n, w, v in fields(summary):
            assert n == 1 and w == 2, "Summary has only repeated value (1)"
            vf = fields(v)
            val = {"tag": one(vf, 1, 2).decode()}
            sv = one(vf, 2, 5)
            if sv is not None:
                val["simple_value"] = struct.unpack("<f", sv)[0]
            tensor, meta = one(vf, 8, 2), one(vf, 9, 2)
            if meta is not None:
                plugin = fields(one(fields(meta), 1, 2))
                val["plugin"] = one(plugin, 1, 2).decode()
            if tensor is not None:
                tf = fields(tensor)
                val["dtype"] = one(tf, 1, 0)
                dims = [one(fields(d), 1, 0) for n, w, d in fields(one(tf, 2, 2)) if n == 2]
                val["shape"] = dims
                val["string_val"] = [v2.decode() for n2, w2, v2 in tf if n2 == 8]
            ev["values"].append(val)
    return ev


def tag_of(key):
    if key.startswith("eval_"):
        return "eval/" + key[5:]
    if key.startswith("test_"):
        return "test/" + key[5:]
    return "train/" + key


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def main():
    logdir, out = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
    assert len(files) == 1, f"expected one event file in {logdir}, found {files}"
    name = os.path.basename(files[0])
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)", name)
    assert m, f"file name {name} is not events.out.tfevents.{{%010d}}.{{host}}.{{pid}}.{{n}}"
    assert m.group(2) == socket.gethostname(), f"host in file name {m.group(2)} != {socket.gethostname()}"
    # logging_dir default: output_dir/runs/{%b%d_%H-%M-%S}_{hostname}
    assert re.fullmatch(r"[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname()),
                        os.path.basename(os.path.normpath(logdir))), f"logging_dir {logdir} is not HF's default form"

    events = [decode_event(r) for r in records(open(files[0], "rb").read())]
    assert events and events[0].get("file_version") == "brain.Event:2", f"first event: {events[:1]}"
    assert abs(events[0]["wall_time"] - int(m.group(1))) < 2, "file name time != first event's wall_time"

    texts = {v["tag"]: v for e in events for v in e.get("values", []) if "string_val" in v}
    for tag in ("args/text_summary", "model_config/text_summary"):
        assert tag in texts, f"no {tag} text event (have {sorted(texts)})"
        v = texts[tag]
        assert v.get("plugin") == "text" and v["dtype"] == 7 and v["shape"] == [1] and len(v["string_val"]) == 1, v
    args = json.loads(texts["args/text_summary"]["string_val"][0])
    assert os.path.realpath(args["output_dir"]) == os.path.realpath(out), args["output_dir"]
    assert args["report_to"] == ["tensorboard"], args["report_to"]
    cfg = json.loads(texts["model_config/text_summary"]["string_val"][0])
    assert cfg["model_type"] == json.load(open(os.path.join(out, "config.json")))["model_type"]

    got = [(e["step"], v["tag"], v["simple_value"]) for e in events for v in e.get("values", [])
           if "simple_value" in v]
    state = json.load(open(os.path.join(out, "trainer_state.json")))
    want = []
    for entry in state["log_history"]:
        for k, v in entry.items():
            if k != "step" and isinstance(v, (int, float)):
                want.append((entry["step"], tag_of(k), f32(v)))
    assert sorted(got) == sorted(want), "scalars differ from log_history:\n  only in events: %s\n  only in log: %s" % (
        sorted(set(got) - set(want))[:10], sorted(set(want) - set(got))[:10])
    tags = sorted({t for _, t, _ in got})
    for t in ("train/loss", "train/learning_rate", "train/grad_norm", "train/epoch", "eval/exact_match", "eval/f1",
              "train/train_runtime"):
        assert t in tags, f"no {t} scalar (tags: {tags})"
    steps = [s for s, t, _ in got if t == "train/loss"]
    assert steps == sorted(steps) and len(steps) == sum("loss" in e for e in state["log_history"])
    print(f"{name}: {len(events)} events, both CRCs good, {len(got)} scalars = log_history, tags {tags}")

    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    except ImportError:
        print("tensorboard package not installed: the hand-written reader only")
        return
    tb = [(e.step, v.tag, v.simple_value) for e in EventFileLoader(files[0]).Load() for v in e.summary.value
          if v.HasField("simple_value")]
    assert sorted(tb) == sorted(got), "tensorboard's reader disagrees"
    print("tensorboard's EventFileLoader reads the same scalars")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Checkpoint exchange between coretrain and PyTorch (python3-torch; run by ctest).

usage: torch_load_test.py <ct_checkpoint_tool> <scripts dir holding torch_reference.py>

1. coretrain -> torch: a tiny BERT and DistilBERT QA model (and every family x head) written by coretrain (config.json +
   model.safetensors) is parsed here by hand and strictly (HF layout: aligned header, {"format": "pt"},
   contiguous offsets), loads into torch_reference's model with load_state_dict(strict=True), every tensor
   equal, and torch's logits on the same inputs match coretrain's.
2. torch -> coretrain: checkpoints written from torch the ways the Hub has them (LayerNorm.gamma/beta, pooler and
   pre-training heads, position_ids, bf16 weights, a base model without prefix or head) load in coretrain and
   give torch's logits (or, without a head, report qa_outputs as freshly initialized).
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

import torch

TOOL = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import torch_reference as ref  # noqa: E402

TINY = {
    "bert": {"model_type": "bert", "vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 2,
             "num_attention_heads": 4, "intermediate_size": 24, "max_position_embeddings": 32,
             "type_vocab_size": 2},
    "distilbert": {"model_type": "distilbert", "vocab_size": 50, "dim": 16, "n_layers": 2, "n_heads": 4,
                   "hidden_dim": 24, "max_position_embeddings": 32},
}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read_safetensors_strict(path):
    """Parses a safetensors file by hand, asserting the layout HF's writer produces."""
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) >= 8, f"{path}: {len(data)} bytes"
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0, f"header length {n} not 8-byte aligned"
    assert 8 + n <= len(data)
    text = data[8:8 + n].decode("utf-8")
    assert text == text.rstrip(" ") + " " * (len(text) - len(text.rstrip(" "))), "padding must be spaces"
    pairs = json.loads(text, object_pairs_hook=lambda kv: kv)
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate keys"
    header = dict(pairs)
    meta = dict(header.pop("__metadata__"))
    assert meta == {"format": "pt"}, meta
    buf = data[8 + n:]
    names = list(header)
    assert names == sorted(names), "tensors not in sorted order"
    pos, out = 0, {}
    for name in names:
        info = dict(header[name])
        assert info["dtype"] == "F32", (name, info["dtype"])
        begin, end = info["data_offsets"]
        assert begin == pos, f"{name}: offsets not contiguous ({begin} after {pos})"
        numel = 1
        for d in info["shape"]:
            numel *= d
        assert end - begin == 4 * numel, name
        out[name] = torch.frombuffer(bytearray(buf[begin:end]), dtype=torch.float32).reshape(info["shape"])
        pos = end
    assert pos == len(buf), f"{len(buf) - pos} trailing bytes"
    return out


def torch_logits(model, inputs):
    ids = torch.tensor(inputs["input_ids"])
    mask = torch.tensor(inputs["attention_mask"])
    types = torch.tensor(inputs["token_type_ids"])
    with torch.no_grad():
        _, s, e = model(ids, mask, types)
    return s.reshape(-1), e.reshape(-1)


def close(a, b, tol=1e-4):
    a, b = torch.as_tensor(a, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32)
    err = float((a - b).abs().max())
    return err <= tol * (1.0 + float(b.abs().max())), err


def coretrain_to_torch(tmp):
    for mt in ("bert", "distilbert"):
        d = os.path.join(tmp, "ct_" + mt)
        os.makedirs(d)
        subprocess.run([TOOL, "write", d, mt, "1234"], check=True)
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        arch = "BertForQuestionAnswering" if mt == "bert" else "DistilBertForQuestionAnswering"
        check(cfg["architectures"] == [arch], f"{mt}: architectures {cfg['architectures']}")
        check(cfg["model_type"] == mt and cfg["torch_dtype"] == "float32", f"{mt}: model_type/torch_dtype")
        tensors = read_safetensors_strict(os.path.join(d, "model.safetensors"))
        model = ref.model_from_config(cfg).eval()
        model.load_state_dict(tensors, strict=True)  # raises on any missing/unexpected name or shape mismatch
        sd = model.state_dict()
        check(set(sd) == set(tensors), f"{mt}: names differ")
        for name, t in tensors.items():
            check(torch.equal(sd[name], t), f"{mt}: {name} differs after load")
        # The reference's own reader agrees with the strict one.
        theirs, meta = ref.load_safetensors(os.path.join(d, "model.safetensors"))
        check(meta == {"format": "pt"} and all(torch.equal(theirs[k], tensors[k]) for k in tensors),
              f"{mt}: torch_reference.load_safetensors disagrees")
        # Same function: torch's logits on coretrain's inputs equal coretrain's.
        with open(os.path.join(d, "coretrain_logits.json")) as f:
            ct = json.load(f)
        s, e = torch_logits(model, ct)
        ok_s, err_s = close(ct["start_logits"], s)
        ok_e, err_e = close(ct["end_logits"], e)
        check(ok_s and ok_e, f"{mt}: logits differ (start {err_s:.2e}, end {err_e:.2e})")
        nparams = sum(t.numel() for t in tensors.values())
        print(f"coretrain->torch {mt}: {len(tensors)} tensors, {nparams} params, strict load ok, "
              f"logit max err start {err_s:.2e} end {err_e:.2e}")


def coretrain_to_torch_heads(tmp):
    """Every family x head written by coretrain loads strictly into the reference's <Family>For<Head> (tied
    decoders included: no tensor of their own) and gives coretrain's logits."""
    for mt in ("bert", "distilbert", "roberta", "electra"):
        for head in ("qa", "seq-cls", "token-cls", "mlm", "multiple-choice"):
            d = os.path.join(tmp, f"ct_{mt}_{head}")
            os.makedirs(d)
            subprocess.run([TOOL, "write", d, mt, "99", head], check=True)
            with open(os.path.join(d, "config.json")) as f:
                cfg = json.load(f)
            tensors = read_safetensors_strict(os.path.join(d, "model.safetensors"))
            model = ref.TaskModel(cfg, head).eval()
            model.load_state_dict(tensors, strict=True)
            with open(os.path.join(d, "coretrain_logits.json")) as f:
                ct = json.load(f)
            ids = torch.tensor(ct["input_ids"])
            mask = torch.tensor(ct["attention_mask"])
            types = torch.tensor(ct["token_type_ids"])
            tt = None if mt == "distilbert" else types
            if head == "multiple-choice":
                ids, mask, tt = ids[None], mask[None], tt[None] if tt is not None else None
            with torch.no_grad():
                _, logits = model(ids, mask, tt)
            ok, err = close(ct["logits"], logits.reshape(-1))
            check(ok, f"{mt} {head}: logits differ ({err:.2e})")
            print(f"coretrain->torch {mt} {head} ({cfg['architectures'][0]}): {len(tensors)} tensors, strict "
                  f"load ok, logit max err {err:.2e}")


def perturbed_model(mt, seed):
    torch.manual_seed(seed)
    model = ref.model_from_config(TINY[mt]).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:  # biases and LayerNorm: not their 0/1 init, so a mix-up shows in the logits
                p.add_(0.1 * torch.randn_like(p))
    return model


def write_case(d, mt, tensors):
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(TINY[mt], f)
    ref.save_safetensors(os.path.join(d, "model.safetensors"), tensors, {"format": "pt"})
    ids = [[(5 * b + 2 * t + 3) % 50 for t in range(9)] for b in range(2)]
    mask = [[1] * 9, [1] * 6 + [0] * 3]
    types = [[0] * 4 + [1] * 5, [0] * 9] if mt == "bert" else [[0] * 9, [0] * 9]
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    with open(os.path.join(d, "inputs.json"), "w") as f:
        json.dump(inputs, f)
    subprocess.run([TOOL, "forward", d], check=True)
    with open(os.path.join(d, "coretrain_logits.json")) as f:
        return inputs, json.load(f)


def torch_to_coretrain(tmp):
    for mt in ("bert", "distilbert"):
        model = perturbed_model(mt, 7)
        sd = {k: v.clone() for k, v in model.state_dict().items()}
        H = 16
        # As on the Hub: old LayerNorm names (BERT), heads the QA model does not use, an int64 buffer.
        hub = {}
        for k, v in sd.items():
            if mt == "bert" and k.endswith("LayerNorm.weight"):
                k = k[:-len("weight")] + "gamma"
            elif mt == "bert" and k.endswith("LayerNorm.bias"):
                k = k[:-len("bias")] + "beta"
            hub[k] = v
        if mt == "bert":
            extra = {"bert.pooler.dense.weight": torch.randn(H, H), "bert.pooler.dense.bias": torch.randn(H),
                     "cls.predictions.bias": torch.randn(50), "cls.seq_relationship.weight": torch.randn(2, H),
                     "bert.embeddings.position_ids": torch.arange(32).reshape(1, 32)}
        else:
            extra = {"vocab_projector.bias": torch.randn(50), "vocab_transform.weight": torch.randn(H, H),
                     "vocab_layer_norm.weight": torch.randn(H)}
        hub.update(extra)
        inputs, ct = write_case(os.path.join(tmp, "hub_" + mt), mt, hub)
        s, e = torch_logits(model, inputs)
        ok_s, err_s = close(ct["start_logits"], s)
        ok_e, err_e = close(ct["end_logits"], e)
        check(ok_s and ok_e, f"torch->coretrain {mt}: logits differ (start {err_s:.2e}, end {err_e:.2e})")
        check(sorted(ct["unexpected"]) == sorted(extra), f"{mt}: unexpected {ct['unexpected']}")
        check(ct["missing"] == [] and ct["loaded"] == len(sd), f"{mt}: loaded {ct['loaded']} missing {ct['missing']}")
        n_ln = sum(1 for k in sd if "LayerNorm." in k) if mt == "bert" else 0
        check(ct["renamed"] == n_ln, f"{mt}: renamed {ct['renamed']}, expected {n_ln}")
        print(f"torch->coretrain {mt} (Hub-style names, {len(extra)} unused tensors): "
              f"logit max err start {err_s:.2e} end {err_e:.2e}")

        # bf16 weights: coretrain widens them exactly, so it matches torch run on the rounded weights.
        bf = {k: v.to(torch.bfloat16) for k, v in sd.items()}
        inputs, ct = write_case(os.path.join(tmp, "bf16_" + mt), mt, bf)
        rounded = ref.model_from_config(TINY[mt]).eval()
        rounded.load_state_dict({k: v.float() for k, v in bf.items()}, strict=True)
        s, e = torch_logits(rounded, inputs)
        ok_s, err_s = close(ct["start_logits"], s)
        ok_e, err_e = close(ct["end_logits"], e)
        check(ok_s and ok_e, f"torch->coretrain {mt} bf16: logits differ (start {err_s:.2e}, end {err_e:.2e})")
        print(f"torch->coretrain {mt} bf16 file: logit max err start {err_s:.2e} end {err_e:.2e}")

        # Base model (saved from BertModel / DistilBertModel): no prefix, no head -> head freshly initialized.
        prefix = mt + "."
        base = {k[len(prefix):]: v for k, v in sd.items() if k.startswith(prefix)}
        _, ct = write_case(os.path.join(tmp, "base_" + mt), mt, base)
        check(sorted(ct["missing"]) == ["qa_outputs.bias", "qa_outputs.weight"], f"{mt} base: missing {ct['missing']}")
        check(ct["loaded"] == len(sd) - 2 and ct["unexpected"] == [], f"{mt} base: loaded {ct['loaded']}")
        print(f"torch->coretrain {mt} base model without prefix: {ct['loaded']} loaded, head fresh")


def main():
    with tempfile.TemporaryDirectory(prefix="ct_torch_load_") as tmp:
        coretrain_to_torch(tmp)
        coretrain_to_torch_heads(tmp)
        torch_to_coretrain(tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checkpoint exchange checks passed")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""ModernBERT checkpoint exchange, coretrain -> PyTorch (python3-torch; run by ctest).

usage: modernbert_torch_exchange.py <ct_checkpoint_tool> <scripts dir holding golden_modernbert.py>

For each head (qa, seq-cls, multiple-choice, token-cls, mlm), a tiny ModernBERT written by coretrain (config.json +
model.safetensors) loads into golden_modernbert's plain-PyTorch model with load_state_dict(strict=True) (every
name and shape HF's, nothing missing or extra), and the reference's logits on coretrain's inputs equal
coretrain's (real tokens; the masked LM without labels projects every token).
"""

import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

TOOL = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import golden_modernbert as G  # noqa: E402
import torch_reference as R  # noqa: E402

failures = []


def reference_logits(model, head, ids, mask):
    with torch.no_grad():
        h = model.model(ids, mask)
        if head in ("seq-cls", "multiple-choice"):  # multiple choice: the 2 rows are one example's choices
            if model.c["classifier_pooling"] == "cls":
                p = h[:, 0]
            else:
                m = mask.to(h.dtype)
                p = (h * m.unsqueeze(-1)).sum(dim=1) / m.sum(dim=1, keepdim=True)
            return model.classifier(model.head(p))
        if head in ("token-cls", "qa"):
            return model.classifier(model.head(h))[mask == 1]
        return F.linear(model.head(h), model.model.embeddings.tok_embeddings.weight, model.decoder.bias)[mask == 1]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for head in ("qa", "seq-cls", "multiple-choice", "token-cls", "mlm"):
            d = os.path.join(tmp, head)
            os.makedirs(d)
            subprocess.run([TOOL, "write", d, "modernbert", "77", head], check=True)
            with open(os.path.join(d, "config.json")) as f:
                cfg = json.load(f)
            model = G.Task(cfg, head).double()
            state = {k: v.double() for k, v in R.load_safetensors(os.path.join(d, "model.safetensors"))[0].items()}
            try:
                model.load_state_dict(state, strict=True)
            except RuntimeError as e:
                failures.append(f"{head}: strict load: {e}")
                continue
            with open(os.path.join(d, "coretrain_logits.json")) as f:
                out = json.load(f)
            ids = torch.tensor(out["input_ids"])
            mask = torch.tensor(out["attention_mask"])
            ref = reference_logits(model, head, ids, mask).reshape(-1)
            ours = torch.tensor(out["logits"], dtype=torch.float64)
            if head in ("qa", "token-cls", "mlm"):  # coretrain's rows are every token of the padded batch: keep the real ones
                width = ours.numel() // mask.numel()
                ours = ours.view(-1, width)[mask.reshape(-1) == 1].reshape(-1)
            if ours.shape != ref.shape:
                failures.append(f"{head}: logits shape {tuple(ours.shape)} vs {tuple(ref.shape)}")
                continue
            err = float((ours - ref).abs().max())
            print(f"{head}: {len(state)} tensors loaded strictly, logits max abs diff {err:.2e}")
            if err > 1e-4 * max(1.0, float(ref.abs().max())):
                failures.append(f"{head}: logits differ by {err}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()

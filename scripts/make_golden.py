#!/usr/bin/python3
"""Writes the golden fixtures the C++ model tests match: tests/model/data/golden/tiny_{bert,distilbert}.safetensors.

Run with Debian's python (it has torch):  /usr/bin/python3 scripts/make_golden.py

Each file holds, for one tiny config (vocab 64, hidden 32, 2 layers, 4 heads, intermediate 64, T 16, B 3):
  input.{input_ids,token_type_ids,attention_mask,start_positions,end_positions}   I32
      padding in the mask (rows 1, 2), a pad token inside a sequence, a start/end position past the window
      (ignored after clamping to T), a negative one (clamps to 0)
  param.<HF name>        F32  all parameters (HF init, then perturbed so biases/LayerNorm are non-trivial)
  f32.{start_logits,end_logits,loss}, f32.grad.<HF name>    the reference in float64, stored as F32
  bf16.{start_logits,end_logits,loss}, bf16.grad.<HF name>  the f32 model under torch.autocast("cpu", bfloat16)
  packed.{loss}, packed.grad.<HF name>   float64, the loss of coretrain's packed (unpadded) batches: the same
      logits, but each row's start/end softmax spans only its attended positions (pad logits masked to -inf),
      and a position at or past the row's length is ignored (clamped to [0, length] first)
metadata: "config" (the HF config.json text), "format" "pt", "generator".
Dropout is off (model.eval()); gradients are of the loss (HF QA loss), every parameter.
The committed bf16.* tensors were made on a CPU with AVX512-BF16; torch 1.13 on an AVX2-only CPU emulates bf16
differently (last-bit differences), so regenerating there changes them: keep the committed bf16.* then.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference as R  # noqa: E402

B, T = 3, 16
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "model", "data", "golden")

CONFIGS = {
    "bert": {
        "model_type": "bert", "architectures": ["BertForQuestionAnswering"], "vocab_size": 64,
        "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 24, "type_vocab_size": 2, "initializer_range": 0.02,
        "layer_norm_eps": 1e-12, "pad_token_id": 0,
    },
    "distilbert": {
        "model_type": "distilbert", "architectures": ["DistilBertForQuestionAnswering"], "vocab_size": 64,
        "dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64, "activation": "gelu", "dropout": 0.1,
        "attention_dropout": 0.1, "qa_dropout": 0.1, "max_position_embeddings": 24, "initializer_range": 0.02,
        "sinusoidal_pos_embds": False, "pad_token_id": 0,
    },
}


def make_inputs(g):
    ids = torch.randint(1, 64, (B, T), generator=g)
    mask = torch.ones(B, T, dtype=torch.long)
    mask[1, 11:] = 0
    mask[2, 6:] = 0
    ids[mask == 0] = 0  # padding tokens
    ids[0, 5] = 0       # a pad id inside a sequence: its embedding row gets no gradient (padding_idx)
    types = torch.zeros(B, T, dtype=torch.long)
    types[0, 8:] = 1
    types[1, 5:11] = 1
    types[2, 3:6] = 1
    start = torch.tensor([3, 16, 7])   # 16 = T: ignored
    end = torch.tensor([5, 40, -3])    # 40 > T: ignored; -3 clamps to 0
    return ids, types, mask, start, end


def perturb(model, g):
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "LayerNorm" in name or "layer_norm" in name:
                p.copy_((1.0 + 0.2 * noise) if name.endswith("weight") else 0.1 * noise)
            elif name.endswith("bias"):
                p.copy_(0.1 * noise)
            else:
                p.add_(0.1 * noise)


def packed_loss(s, e, mask, start, end):
    """Pads are never answer candidates: per row, CE over its own positions only."""
    lens = mask.sum(1)
    losses = []
    for logits, pos in ((s, start), (e, end)):
        t = torch.minimum(pos.clamp_min(0), lens)
        t = torch.where(t == lens, torch.full_like(t, -100), t)
        masked = logits.masked_fill(mask == 0, float("-inf"))
        losses.append(torch.nn.functional.cross_entropy(masked, t, ignore_index=-100))
    return (losses[0] + losses[1]) / 2


def run(model, inputs, dtype, autocast, packed=False):
    ids, types, mask, start, end = inputs
    m = model.to(dtype)
    m.zero_grad(set_to_none=True)
    tt = types if m.config["model_type"] == "bert" else None
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss, s, e = m(ids, mask, tt, start, end)
    else:
        loss, s, e = m(ids, mask, tt, start, end)
    if packed:
        loss = packed_loss(s, e, mask, start, end)
    loss.backward()
    out = {"start_logits": s.detach().float(), "end_logits": e.detach().float(), "loss": loss.detach().float().reshape(1)}
    grads = {n: p.grad.detach().float().clone() for n, p in m.named_parameters()}
    return out, grads


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, cfg in CONFIGS.items():
        g = torch.Generator().manual_seed(1234 if name == "bert" else 4321)
        torch.manual_seed(7)
        model = R.model_from_config(cfg)
        model.eval()  # dropout off
        perturb(model, g)
        inputs = make_inputs(g)
        params = {n: p.detach().float().clone() for n, p in model.named_parameters()}

        ref, ref_grads = run(model, inputs, torch.float64, autocast=False)
        pk, pk_grads = run(model, inputs, torch.float64, autocast=False, packed=True)
        model = model.float()
        bf, bf_grads = run(model, inputs, torch.float32, autocast=True)

        tensors = {}
        ids, types, mask, start, end = inputs
        for k, v in (("input_ids", ids), ("token_type_ids", types), ("attention_mask", mask),
                     ("start_positions", start), ("end_positions", end)):
            tensors["input." + k] = v.to(torch.int32)
        for n, p in params.items():
            tensors["param." + n] = p
        pk = {"loss": pk["loss"]}  # its logits are f32.*'s
        for prefix, out, grads in (("f32.", ref, ref_grads), ("bf16.", bf, bf_grads), ("packed.", pk, pk_grads)):
            for k, v in out.items():
                tensors[prefix + k] = v
            for n, gr in grads.items():
                tensors[prefix + "grad." + n] = gr
        path = os.path.join(OUT, f"tiny_{name}.safetensors")
        R.save_safetensors(path, tensors, {"format": "pt", "config": json.dumps(cfg),
                                           "generator": "scripts/make_golden.py, torch " + torch.__version__})
        # How far torch's own bf16 autocast lands from the float64 reference: the scale of the bf16 bound.
        worst = max(float((bf_grads[n] - ref_grads[n]).abs().max() / ref_grads[n].abs().max().clamp_min(1e-30))
                    for n in ref_grads if ref_grads[n].abs().max() > 0)
        print(f"{path}: {os.path.getsize(path)} bytes, loss f64 {float(ref['loss']):.6f} "
              f"bf16 {float(bf['loss']):.6f}, worst bf16-vs-f64 grad rel err {worst:.3g}")


if __name__ == "__main__":
    main()

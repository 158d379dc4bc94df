#!/usr/bin/python3
"""Writes the golden fixtures the C++ model tests match: tests/model/data/golden/tiny_{bert,distilbert}.safetensors
(the QA model, described below) and tiny_<family>_<head>.safetensors (every family x head, see HEAD_CASES).

Run with Debian's python (it has torch):  /usr/bin/python3 scripts/make_golden.py          (QA fixtures)
                                          /usr/bin/python3 scripts/make_golden.py --heads  (family x head)

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


# Every family x head on a tiny config (vocab 40, hidden 32, 2 layers, 4 heads, intermediate 48; ELECTRA's
# embeddings 16 wide, projected), B 3 (multiple choice: 2 examples x 3 choices), T 12. Each file holds
#   input.{input_ids,token_type_ids,attention_mask} I32, input.labels I32 or input.float_labels F32,
#   param.<HF name>, f32.{logits,loss} + f32.grad.<HF name> (float64 reference), bf16.{logits,loss} (autocast),
# metadata "config", "head", "num_choices". Labels: -100 on pads and some real tokens (token-cls, mlm), so
# the packed batch (no pads) has the same loss. Logits: seq-cls [B, C]; token-cls [B, T, C]; mlm [B, T, V]
# (every position, as HF; coretrain projects only the labelled ones); multiple choice [E, C]; qa [B, T, 2].
HB, HT = 3, 12


def tiny(mt, **kw):
    if mt == "distilbert":
        c = {"model_type": mt, "vocab_size": 40, "dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 48,
             "max_position_embeddings": 24, "pad_token_id": 0}
    else:
        c = {"model_type": mt, "vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2,
             "num_attention_heads": 4, "intermediate_size": 48, "hidden_act": "gelu",
             "max_position_embeddings": 24, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}
        if mt in R.ROBERTA_LIKE:
            c.update(max_position_embeddings=26, type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1)
        if mt == "electra":
            c["embedding_size"] = 16
    c.update(kw)
    return c


def labels3(n):
    return {"id2label": {str(i): f"L{i}" for i in range(n)}, "label2id": {f"L{i}": i for i in range(n)}}


HEAD_CASES = [  # (file stem, config, head, problem: int | float | multi | qa)
    ("bert_seq-cls", tiny("bert", **labels3(3)), "seq-cls", "int"),
    ("bert_seq-cls-multilabel", tiny("bert", problem_type="multi_label_classification", **labels3(3)),
     "seq-cls", "multi"),
    ("bert_token-cls", tiny("bert", **labels3(5)), "token-cls", "int"),
    ("bert_mlm", tiny("bert"), "mlm", "int"),
    ("bert_multiple-choice", tiny("bert"), "multiple-choice", "int"),
    ("distilbert_seq-cls", tiny("distilbert", **labels3(3)), "seq-cls", "int"),
    ("distilbert_token-cls", tiny("distilbert", **labels3(4)), "token-cls", "int"),
    ("distilbert_mlm", tiny("distilbert"), "mlm", "int"),
    ("distilbert_multiple-choice", tiny("distilbert"), "multiple-choice", "int"),
    ("roberta_qa", tiny("roberta"), "qa", "qa"),
    ("roberta_seq-cls", tiny("roberta", **labels3(3)), "seq-cls", "int"),
    ("roberta_token-cls", tiny("roberta", **labels3(4)), "token-cls", "int"),
    ("roberta_mlm", tiny("roberta"), "mlm", "int"),
    ("roberta_multiple-choice", tiny("roberta"), "multiple-choice", "int"),
    ("xlm-roberta_seq-cls-regression", tiny("xlm-roberta", **labels3(1)), "seq-cls", "float"),
    ("electra_qa", tiny("electra"), "qa", "qa"),
    ("electra_seq-cls", tiny("electra", **labels3(3)), "seq-cls", "int"),
    ("electra_token-cls", tiny("electra", **labels3(3)), "token-cls", "int"),
    ("electra_mlm", tiny("electra"), "mlm", "int"),
    ("electra_multiple-choice", tiny("electra"), "multiple-choice", "int"),
]


def head_inputs(cfg, head, problem, g):
    pad = cfg["pad_token_id"]
    V = cfg["vocab_size"]
    B = 2 * 3 if head == "multiple-choice" else HB
    ids = torch.randint(2, V, (B, HT), generator=g)
    lens = [HT, 9, 5, 11, 7, 12][:B]
    mask = torch.zeros(B, HT, dtype=torch.long)
    for b, n in enumerate(lens):
        mask[b, :n] = 1
    ids[mask == 0] = pad
    ids[0, 4] = pad  # a pad id inside a sequence: no position step (RoBERTa), no lookup gradient
    types = torch.zeros(B, HT, dtype=torch.long)
    if cfg.get("type_vocab_size", 0) > 1:
        types[0, 6:] = 1
        types[1, 3:9] = 1
    n = cfg.get("num_labels", len(cfg.get("id2label", {})) or 2)
    if problem == "qa":
        labels = (torch.tensor([3, HT, 2]), torch.tensor([5, 40, -3]))
    elif head == "seq-cls":
        if problem == "int":
            labels = torch.randint(0, n, (B,), generator=g)
        elif problem == "float":
            labels = torch.randn(B, n, generator=g).squeeze(-1) if n == 1 else torch.randn(B, n, generator=g)
        else:
            labels = (torch.rand(B, n, generator=g) > 0.5).float()
    elif head == "multiple-choice":
        labels = torch.tensor([2, 0])
    else:
        C = V if head == "mlm" else n
        labels = torch.randint(0, C, (B, HT), generator=g)
        labels[mask == 0] = -100
        drop = torch.rand(B, HT, generator=g) < (0.6 if head == "mlm" else 0.25)
        labels[drop] = -100
        labels[0, 1] = 7 % C  # at least one labelled token
    return ids, types, mask, labels


def run_head(model, inputs, head, dtype, autocast):
    ids, types, mask, labels = inputs
    m = model.to(dtype)
    m.zero_grad(set_to_none=True)
    tt = None if m.config["model_type"] == "distilbert" else types
    if head == "multiple-choice":
        shape = (2, 3, HT)
        args = (ids.view(shape), mask.view(shape), tt.view(shape) if tt is not None else None, labels)
    else:
        lab = labels
        if isinstance(labels, torch.Tensor) and labels.is_floating_point():
            lab = labels.to(dtype)
        args = (ids, mask, tt, lab)
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss, logits = m(*args)
    else:
        loss, logits = m(*args)
    loss.backward()
    out = {"logits": logits.detach().float(), "loss": loss.detach().float().reshape(1)}
    grads = {n: p.grad.detach().float().clone() for n, p in m.named_parameters()}
    return out, grads


def make_head_goldens():
    for i, (stem, cfg, head, problem) in enumerate(HEAD_CASES):
        g = torch.Generator().manual_seed(100 + i)
        torch.manual_seed(100 + i)
        model = R.TaskModel(cfg, head)
        model.eval()
        perturb(model, g)
        inputs = make = head_inputs(R.family_config(cfg), head, problem, g)
        params = {n: p.detach().float().clone() for n, p in model.named_parameters()}
        ref, ref_grads = run_head(model, inputs, head, torch.float64, autocast=False)
        model = model.float()
        bf, bf_grads = run_head(model, inputs, head, torch.float32, autocast=True)
        ids, types, mask, labels = make
        tensors = {"input.input_ids": ids.to(torch.int32), "input.token_type_ids": types.to(torch.int32),
                   "input.attention_mask": mask.to(torch.int32)}
        if problem == "qa":
            tensors["input.start_positions"] = labels[0].to(torch.int32)
            tensors["input.end_positions"] = labels[1].to(torch.int32)
        elif labels.is_floating_point():
            tensors["input.float_labels"] = labels.float().reshape(ids.shape[0], -1)
        else:
            tensors["input.labels"] = labels.to(torch.int32)
        for n, p in params.items():
            tensors["param." + n] = p
        # bf16: loss and logits only; the C++ bf16 gradients are held to the float64 ones (torch's own bf16
        # gradients are no yardstick: on DistilBERT's multiple choice they land up to 150% from float64).
        del bf_grads
        for prefix, out, grads in (("f32.", ref, ref_grads), ("bf16.", bf, {})):
            for k, v in out.items():
                tensors[prefix + k] = v
            for n, gr in grads.items():
                tensors[prefix + "grad." + n] = gr
        path = os.path.join(OUT, f"tiny_{stem}.safetensors")
        R.save_safetensors(path, tensors, {"format": "pt", "config": json.dumps(cfg), "head": head,
                                           "num_choices": "3" if head == "multiple-choice" else "0",
                                           "generator": "scripts/make_golden.py, torch " + torch.__version__})
        print(f"{path}: {os.path.getsize(path)} bytes, loss f64 {float(ref['loss']):.6f} "
              f"bf16 {float(bf['loss']):.6f}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--heads":
        os.makedirs(OUT, exist_ok=True)
        make_head_goldens()
        return
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

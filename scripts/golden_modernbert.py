#!/usr/bin/python3
"""ModernBERT golden fixtures: tests/model/data/golden/tiny_modernbert_<case>.safetensors.

A plain-PyTorch ModernBERT written after transformers' modeling_modernbert.py (eager attention path: padded
batches, an additive attention mask, the sliding-window mask on local layers), since Debian's python has torch
1.13 and no transformers. Parameter names are HF's, so the files double as checkpoints.

Run with Debian's python:  /usr/bin/python3 scripts/golden_modernbert.py

Each file holds, for one tiny config (vocab 100, hidden 32, 3 layers: global, local, global; 4 heads,
intermediate 48, local_attention 4 (2 tokens each side, which matters at T 12), B 3, T 12 (the -long case: T
48), right padding):
  input.{input_ids,attention_mask,labels}   I32
  param.<HF name>                           F32  HF-shaped parameters, perturbed so norms are non-trivial
  f32.{logits,loss}, f32.grad.<HF name>     the reference in float64, stored as F32
  bf16.{logits,loss}                        the f32 model under torch.autocast("cpu", bfloat16)
metadata: "config" (the HF config.json text), "head", "generator".
Dropout is off; logits are HF's (seq-cls [B, C]; token-cls [B, T, C]; qa [B, T, 2]; mlm: the labelled rows
only, [M, V], as sparse_prediction returns them). The loss and gradients of the real tokens do not depend on
the padding, so the packed (unpadded) batch of the same features has the same logits (real rows), loss and
gradients; except QA, whose padded loss counts pads as answer candidates as HF's does: its packed.{loss,grad.*}
are coretrain's packed loss (each feature's softmax over its own positions).
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference as R  # noqa: E402  (save_safetensors)

B, T = 3, 12
LENS = [12, 9, 5]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "model", "data", "golden")


def tiny(**kw):
    c = {"model_type": "modernbert", "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 3,
         "num_attention_heads": 4, "intermediate_size": 48, "hidden_activation": "gelu",
         "max_position_embeddings": 64, "initializer_range": 0.02, "initializer_cutoff_factor": 2.0,
         "norm_eps": 1e-5, "norm_bias": False, "pad_token_id": 3, "global_rope_theta": 160000.0,
         "local_rope_theta": 10000.0, "global_attn_every_n_layers": 2, "local_attention": 4,
         "attention_bias": False, "attention_dropout": 0.0, "embedding_dropout": 0.0, "mlp_bias": False,
         "mlp_dropout": 0.0, "decoder_bias": True, "classifier_pooling": "cls", "classifier_dropout": 0.0,
         "classifier_bias": False, "classifier_activation": "gelu", "tie_word_embeddings": True}
    c.update(kw)
    return c


class Norm(nn.Module):
    """nn.LayerNorm(bias=False) (torch 1.13 has no bias flag)."""

    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c["hidden_size"]))
        self.eps = c["norm_eps"]

    def forward(self, x):
        # Under CPU autocast (torch 1.13) a bf16 input would meet the f32 weight: norms run in f32, as coretrain.
        return F.layer_norm(x.to(self.weight.dtype), (x.shape[-1],), self.weight, None, self.eps)


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"], padding_idx=c["pad_token_id"])
        self.norm = Norm(c)

    def forward(self, ids):
        return self.norm(self.tok_embeddings(ids))


def rotary(c, T, theta, dtype):
    """cos/sin [T, d] as ModernBertRotaryEmbedding: inv_freq, angles and cos/sin in float32, then cast."""
    d = c["hidden_size"] // c["num_attention_heads"]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.arange(T).float()[:, None] @ inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        H = c["hidden_size"]
        self.nh = c["num_attention_heads"]
        self.hd = H // self.nh
        self.Wqkv = nn.Linear(H, 3 * H, bias=False)
        self.Wo = nn.Linear(H, H, bias=False)
        self.local = layer_id % c["global_attn_every_n_layers"] != 0
        self.theta = c["local_rope_theta"] if self.local else c["global_rope_theta"]
        self.c = c

    def forward(self, x, global_mask, sliding_mask):
        bs, T, H = x.shape
        qkv = self.Wqkv(x).view(bs, T, 3, self.nh, self.hd)
        q, k, v = qkv.transpose(3, 1).unbind(dim=2)  # [bs, nh, T, hd]
        cos, sin = rotary(self.c, T, self.theta, q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = torch.matmul(q, k.transpose(2, 3)) * self.hd ** -0.5
        s = s + (sliding_mask if self.local else global_mask)
        p = F.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype) if q.dtype != torch.float64 else \
            F.softmax(s, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).contiguous().view(bs, T, H)
        return self.Wo(o)


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.Wi = nn.Linear(c["hidden_size"], 2 * c["intermediate_size"], bias=False)
        self.Wo = nn.Linear(c["intermediate_size"], c["hidden_size"], bias=False)

    def forward(self, x):
        inp, gate = self.Wi(x).chunk(2, dim=-1)
        return self.Wo(F.gelu(inp) * gate)


class Layer(nn.Module):
    def __init__(self, c, layer_id):
        super().__init__()
        self.attn_norm = Norm(c) if layer_id != 0 else nn.Identity()
        self.attn = Attention(c, layer_id)
        self.mlp_norm = Norm(c)
        self.mlp = Mlp(c)

    def forward(self, x, gm, sm):
        x = x + self.attn(self.attn_norm(x), gm, sm)
        return x + self.mlp(self.mlp_norm(x))


class Body(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embeddings = Embeddings(c)
        self.layers = nn.ModuleList([Layer(c, i) for i in range(c["num_hidden_layers"])])
        self.final_norm = Norm(c)

    def forward(self, ids, mask):
        x = self.embeddings(ids)
        mn = torch.finfo(x.dtype).min
        gm = ((1.0 - mask[:, None, None, :].to(x.dtype)) * mn)  # _prepare_4d_attention_mask
        rows = torch.arange(ids.shape[1])[None, :]
        window = (torch.abs(rows - rows.T) <= self.c["local_attention"] // 2)[None, None]
        sm = gm.masked_fill(window.logical_not(), mn)
        for layer in self.layers:
            x = layer(x, gm, sm)
        return self.final_norm(x)


class PredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"], bias=False)
        self.norm = Norm(c)

    def forward(self, x):
        return self.norm(F.gelu(self.dense(x)))


class Task(nn.Module):
    def __init__(self, c, head):
        super().__init__()
        self.c, self.kind = c, head
        self.model = Body(c)
        self.head = PredictionHead(c)
        if head == "mlm":
            self.decoder = nn.Module()
            self.decoder.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        elif head == "qa":
            self.classifier = nn.Linear(c["hidden_size"], 2)
        elif head == "multiple-choice":
            self.classifier = nn.Linear(c["hidden_size"], 1)
        else:
            self.classifier = nn.Linear(c["hidden_size"], len(c["id2label"]))

    def forward(self, ids, mask, labels, packed=False):
        h = self.model(ids, mask)
        if self.kind == "qa":  # ModernBertForQuestionAnswering: head, drop, classifier, HF's QA loss
            logits = self.classifier(self.head(h))
            s, e = logits[..., 0], logits[..., 1]
            start, end = labels
            if packed:  # coretrain's packed batches: each feature's softmax over its own positions
                return qa_packed_loss(s, e, mask, start, end), logits
            T = s.shape[1]
            ls = F.cross_entropy(s, start.clamp(0, T), ignore_index=T)
            le = F.cross_entropy(e, end.clamp(0, T), ignore_index=T)
            return (ls + le) / 2, logits
        if self.kind in ("seq-cls", "multiple-choice"):
            if self.c["classifier_pooling"] == "cls":  # the first token (right padding: the first non-pad)
                h = h[:, 0]
            else:
                m = mask.to(h.dtype)
                h = (h * m.unsqueeze(-1)).sum(dim=1) / m.sum(dim=1, keepdim=True)
            logits = self.classifier(self.head(h))
            if self.kind == "multiple-choice":  # ModernBertForMultipleChoice: one logit per choice
                logits = logits.view(labels.shape[0], -1)
            return F.cross_entropy(logits, labels), logits
        if self.kind == "token-cls":
            logits = self.classifier(self.head(h))
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1)), logits
        # MLM with sparse prediction: the labelled rows only.
        lab = labels.view(-1)
        keep = lab != -100
        hs = h.reshape(lab.shape[0], -1)[keep]
        logits = F.linear(self.head(hs), self.model.embeddings.tok_embeddings.weight, self.decoder.bias)
        return F.cross_entropy(logits, lab[keep]), logits


def qa_packed_loss(s, e, mask, start, end):
    """Pads are never answer candidates: per feature, CE over its own positions; at or past its length: ignored."""
    lens = mask.sum(1)
    losses = []
    for logits, pos in ((s, start), (e, end)):
        t = torch.minimum(pos.clamp_min(0), lens)
        t = torch.where(t == lens, torch.full_like(t, -100), t)
        losses.append(F.cross_entropy(logits.masked_fill(mask == 0, float("-inf")), t, ignore_index=-100))
    return (losses[0] + losses[1]) / 2


def perturb(model, g):
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "norm" in name:
                p.copy_(1.0 + 0.2 * noise)
            elif name.endswith("bias"):
                p.copy_(0.1 * noise)
            else:
                p.add_(0.1 * noise)
        pad = model.c["pad_token_id"]
        model.model.embeddings.tok_embeddings.weight[pad].zero_()


def hf_init(model, g):
    """ModernBertPreTrainedModel._init_weights: truncated normal, std per module, cutoff factor x std."""
    c = model.c
    std_in = c["initializer_range"]
    std_out = c["initializer_range"] / math.sqrt(2.0 * c["num_hidden_layers"])
    cut = c["initializer_cutoff_factor"]
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.fill_(1.0)
                continue
            if name.endswith("bias"):
                p.zero_()
                continue
            std = std_in
            if name.endswith("Wo.weight") or name.startswith("head.dense"):
                std = std_out
            elif name.startswith("classifier"):
                std = c["hidden_size"] ** -0.5
            nn.init.trunc_normal_(p, 0.0, std, -cut * std, cut * std)


def make_inputs(c, head, g, T=T, lens=LENS):
    V = c["vocab_size"]
    pad = c["pad_token_id"]
    B = len(lens)
    ids = torch.randint(4, V, (B, T), generator=g)
    mask = torch.zeros(B, T, dtype=torch.long)
    for b, n in enumerate(lens):
        mask[b, :n] = 1
    ids[mask == 0] = pad
    ids[0, 4] = pad  # a pad id inside a sequence: padding_idx, its lookup adds no gradient
    n = len(c["id2label"]) if "id2label" in c else V
    if head == "qa":  # T: ignored; 40 > T: ignored; -3 clamps to 0; 7 is past the third feature (padded: a pad)
        return ids, mask, (torch.tensor([3, T, 7]), torch.tensor([5, 40, -3]))
    if head == "multiple-choice":  # 2 examples x 3 choices, rows choice-major within an example
        return ids, mask, torch.tensor([2, 0])
    if head == "seq-cls":
        labels = torch.randint(0, n, (B,), generator=g)
    else:
        labels = torch.randint(0, n, (B, T), generator=g)
        labels[mask == 0] = -100
        labels[torch.rand(B, T, generator=g) < (0.6 if head == "mlm" else 0.25)] = -100
        labels[0, 1] = 7 % n
        labels[2, 4] = 5 % n  # the last token of the shortest feature
    return ids, mask, labels


def run(model, inputs, dtype, autocast, packed=False):
    ids, mask, labels = inputs
    m = model.to(dtype)
    m.zero_grad(set_to_none=True)
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss, logits = m(ids, mask, labels)
    else:
        loss, logits = m(ids, mask, labels, packed)
    loss.backward()
    out = {"logits": logits.detach().float(), "loss": loss.detach().float().reshape(1)}
    grads = {n: p.grad.detach().float().clone() for n, p in m.named_parameters()}
    return out, grads


def labels_n(n):
    return {"id2label": {str(i): f"L{i}" for i in range(n)}, "label2id": {f"L{i}": i for i in range(n)}}


CASES = [  # (file stem, config, head, T, feature lengths)
    ("modernbert_seq-cls", tiny(**labels_n(3)), "seq-cls", T, LENS),
    ("modernbert_seq-cls-mean", tiny(classifier_pooling="mean", **labels_n(3)), "seq-cls", T, LENS),
    ("modernbert_token-cls", tiny(**labels_n(5)), "token-cls", T, LENS),
    ("modernbert_mlm", tiny(), "mlm", T, LENS),
    # Long enough for coretrain's banded local attention (query blocks of 16 with 2 keys each side from 40
    # tokens on): two features span several blocks, the third does not.
    ("modernbert_token-cls-long", tiny(**labels_n(5)), "token-cls", 48, [48, 45, 20]),
    ("modernbert_qa", tiny(), "qa", T, LENS),
    ("modernbert_multiple-choice", tiny(classifier_pooling="mean"), "multiple-choice", T, [12, 9, 5, 11, 7, 12]),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, (stem, cfg, head, t, lens) in enumerate(CASES):
        g = torch.Generator().manual_seed(500 + i)
        torch.manual_seed(500 + i)
        model = Task(cfg, head)
        hf_init(model, g)
        perturb(model, g)
        inputs = make_inputs(cfg, head, g, t, lens)
        params = {n: p.detach().float().clone() for n, p in model.named_parameters()}
        ref, ref_grads = run(model, inputs, torch.float64, autocast=False)
        pk, pk_grads = run(model, inputs, torch.float64, autocast=False, packed=True)
        bf, _ = run(model.float(), inputs, torch.float32, autocast=True)
        ids, mask, labels = inputs
        tensors = {"input.input_ids": ids.to(torch.int32), "input.attention_mask": mask.to(torch.int32)}
        if head == "qa":
            tensors["input.start_positions"] = labels[0].to(torch.int32)
            tensors["input.end_positions"] = labels[1].to(torch.int32)
            # Packed QA differs from padded (pads are no candidates): its own loss and gradients.
            tensors["packed.loss"] = pk["loss"]
            for n, gr in pk_grads.items():
                tensors["packed.grad." + n] = gr
        else:
            tensors["input.labels"] = labels.to(torch.int32)
        for n, p in params.items():
            tensors["param." + n] = p
        for k, v in ref.items():
            tensors["f32." + k] = v
        for n, gr in ref_grads.items():
            tensors["f32.grad." + n] = gr
        for k, v in bf.items():
            tensors["bf16." + k] = v
        path = os.path.join(OUT, f"tiny_{stem}.safetensors")
        R.save_safetensors(path, tensors, {"format": "pt", "config": json.dumps(cfg), "head": head,
                                           "num_choices": "3" if head == "multiple-choice" else "0",
                                           "generator": "scripts/golden_modernbert.py, torch " + torch.__version__})
        print(f"{path}: {os.path.getsize(path)} bytes, loss f64 {float(ref['loss']):.6f} "
              f"bf16 {float(bf['loss']):.6f}")


if __name__ == "__main__":
    main()

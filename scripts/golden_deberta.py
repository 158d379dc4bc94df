#!/usr/bin/python3
"""Writes the DeBERTa-v2/v3 golden fixtures the C++ model tests match (tests/model/deberta_test.cpp):
tests/model/data/golden/tiny_<stem>.safetensors, in make_golden.py's head-golden format (input.*, param.<HF name>,
f32.{logits,loss} and f32.grad.<HF name> from a float64 run, bf16.{logits,loss} under torch.autocast; metadata
"config", "head", "num_choices").

The model below is plain PyTorch written after transformers' modeling_deberta_v2.py (DebertaV2Embeddings,
DisentangledSelfAttention with its gathers over [B, heads, T, 2 span] products, XSoftmax, DebertaV2Encoder's
relative embeddings and LayerNorm, ContextPooler, the legacy cls.predictions MLM head): the straightforward
formulation coretrain's banded one must equal. Dropout is off (eval).

Run with Debian's python (it has torch):  /usr/bin/python3 scripts/golden_deberta.py
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as G  # noqa: E402
import torch_reference as R  # noqa: E402

DEFAULTS = dict(
    vocab_size=128100, hidden_size=1536, num_hidden_layers=24, num_attention_heads=24, intermediate_size=6144,
    hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=512,
    type_vocab_size=0, initializer_range=0.02, layer_norm_eps=1e-7, relative_attention=False,
    max_relative_positions=-1, pad_token_id=0, position_biased_input=True, pos_att_type=None, pooler_dropout=0,
    pooler_hidden_act="gelu", share_att_key=False, position_buckets=-1, norm_rel_ebd="none", legacy=True,
)


def full_config(cfg):
    c = dict(DEFAULTS)
    c.update(cfg)
    c.setdefault("embedding_size", c["hidden_size"])
    pat = c["pos_att_type"] or []
    if isinstance(pat, str):
        pat = [x.strip() for x in pat.lower().split("|")]
    c["pos_att_type"] = pat
    c["num_labels"] = len(c["id2label"]) if "id2label" in c else c.get("num_labels", 2)
    if c["max_relative_positions"] < 1:
        c["max_relative_positions"] = c["max_position_embeddings"]
    c["span"] = c["position_buckets"] if c["position_buckets"] > 0 else c["max_relative_positions"]
    return c


def make_log_bucket_position(rel, bucket_size, max_position):
    sign = torch.sign(rel)
    mid = bucket_size // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.type_as(log_pos), log_pos * sign)


def build_relative_position(T, bucket_size, max_position):
    ids = torch.arange(T)
    rel = ids[:, None] - ids[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = make_log_bucket_position(rel, bucket_size, max_position)
    return rel.long()


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        E, H = c["embedding_size"], c["hidden_size"]
        self.c = c
        self.word_embeddings = nn.Embedding(c["vocab_size"], E, padding_idx=c["pad_token_id"])
        if c["position_biased_input"]:
            self.position_embeddings = nn.Embedding(c["max_position_embeddings"], E)
        if c["type_vocab_size"] > 0:
            self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], E)
        if E != H:
            self.embed_proj = nn.Linear(E, H, bias=False)
        self.LayerNorm = nn.LayerNorm(H, eps=c["layer_norm_eps"])

    def forward(self, ids, types, mask):
        x = self.word_embeddings(ids)
        if self.c["position_biased_input"]:
            x = x + self.position_embeddings(torch.arange(ids.shape[1]))[None]
        if self.c["type_vocab_size"] > 0:
            x = x + self.token_type_embeddings(types)
        if hasattr(self, "embed_proj"):
            x = self.embed_proj(x).to(self.LayerNorm.weight.dtype)  # f32 LayerNorm under autocast
        x = self.LayerNorm(x)
        return x * mask.unsqueeze(-1).to(x.dtype)


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        H = c["hidden_size"]
        self.c = c
        self.query_proj = nn.Linear(H, H)
        self.key_proj = nn.Linear(H, H)
        self.value_proj = nn.Linear(H, H)
        pat = c["pos_att_type"] if c["relative_attention"] else []
        self.c2p, self.p2c = "c2p" in pat, "p2c" in pat
        if c["relative_attention"] and not c["share_att_key"]:
            if self.c2p:
                self.pos_key_proj = nn.Linear(H, H)
            if self.p2c:
                self.pos_query_proj = nn.Linear(H, H)

    def forward(self, x, mask4, rel_pos, rel_emb):
        B, T, H = x.shape
        NH = self.c["num_attention_heads"]
        D = H // NH

        def heads(t):  # [..., L, H] -> [..., NH, L, D]
            return t.view(*t.shape[:-1], NH, D).transpose(-3, -2)

        q, k, v = heads(self.query_proj(x)), heads(self.key_proj(x)), heads(self.value_proj(x))
        scale = math.sqrt(D * (1 + self.c2p + self.p2c))
        scores = q @ k.transpose(-1, -2) / scale
        span = self.c["span"]
        if self.c["relative_attention"]:
            re = rel_emb[: 2 * span]
            share = self.c["share_att_key"]
            if self.c2p:
                pk = heads(self.key_proj(re) if share else self.pos_key_proj(re))  # [NH, 2 span, D]
                c2p = q @ pk.transpose(-1, -2)  # [B, NH, T, 2 span]
                idx = torch.clamp(rel_pos + span, 0, 2 * span - 1)
                scores = scores + torch.gather(c2p, -1, idx.expand(B, NH, T, T)) / scale
            if self.p2c:
                pq = heads(self.query_proj(re) if share else self.pos_query_proj(re))
                p2c = k @ pq.transpose(-1, -2)  # [B, NH, T (key), 2 span]
                idx = torch.clamp(-rel_pos + span, 0, 2 * span - 1)
                scores = scores + torch.gather(p2c, -1, idx.expand(B, NH, T, T)).transpose(-1, -2) / scale
        # XSoftmax
        rmask = ~mask4
        probs = torch.softmax(scores.masked_fill(rmask, torch.finfo(scores.dtype).min), -1).masked_fill(rmask, 0)
        return (probs @ v).transpose(1, 2).reshape(B, T, H)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, I, eps = c["hidden_size"], c["intermediate_size"], c["layer_norm_eps"]
        self.attention = nn.Module()
        self.attention.self = SelfAttention(c)
        self.attention.output = nn.Module()
        self.attention.output.dense = nn.Linear(H, H)
        self.attention.output.LayerNorm = nn.LayerNorm(H, eps=eps)
        self.intermediate = nn.Module()
        self.intermediate.dense = nn.Linear(H, I)
        self.output = nn.Module()
        self.output.dense = nn.Linear(I, H)
        self.output.LayerNorm = nn.LayerNorm(H, eps=eps)
        self.act = R._act(c["hidden_act"])

    def forward(self, x, mask4, rel_pos, rel_emb):
        a = self.attention.self(x, mask4, rel_pos, rel_emb)
        a = self.attention.output.LayerNorm(self.attention.output.dense(a) + x)
        f = self.output.dense(self.act(self.intermediate.dense(a)))
        return self.output.LayerNorm(f + a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.layer = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        if c["relative_attention"]:
            self.rel_embeddings = nn.Embedding(2 * c["span"], c["hidden_size"])
            if "layer_norm" in [x.strip() for x in c["norm_rel_ebd"].lower().split("|")]:
                self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, x, mask):
        m = mask.unsqueeze(1).unsqueeze(2)
        mask4 = (m * m.squeeze(-2).unsqueeze(-1)).bool()
        rel_pos = build_relative_position(x.shape[1], self.c["position_buckets"], self.c["max_relative_positions"])
        rel_emb = None
        if self.c["relative_attention"]:
            rel_emb = self.rel_embeddings.weight
            if hasattr(self, "LayerNorm"):
                rel_emb = self.LayerNorm(rel_emb)
        for layer in self.layer:
            x = layer(x, mask4, rel_pos, rel_emb)
        return x


class DebertaV2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)

    def forward(self, ids, mask, types):
        return self.encoder(self.embeddings(ids, types, mask), mask)


class TaskModel(nn.Module):
    """DebertaV2For<Head> with HF's module names (the legacy MLM head); forward -> (loss or None, logits)."""

    def __init__(self, cfg, head):
        super().__init__()
        c = full_config(cfg)
        self.config, self.head = c, head
        H = c["hidden_size"]
        self.deberta = DebertaV2(c)
        if head == "qa":
            self.qa_outputs = nn.Linear(H, 2)
        elif head in ("seq-cls", "multiple-choice"):
            self.pooler = nn.Module()
            self.pooler.dense = nn.Linear(H, H)
            self.classifier = nn.Linear(H, c["num_labels"] if head == "seq-cls" else 1)
        elif head == "token-cls":
            self.classifier = nn.Linear(H, c["num_labels"])
        elif head == "mlm":
            self.cls = nn.Module()
            self.cls.predictions = nn.Module()
            self.cls.predictions.transform = nn.Module()
            self.cls.predictions.transform.dense = nn.Linear(H, H)
            self.cls.predictions.transform.LayerNorm = nn.LayerNorm(H, eps=c["layer_norm_eps"])
            self.cls.predictions.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        else:
            raise ValueError(f"unknown head {head!r}")
        self.apply(lambda m: R._init_weights(m, c["initializer_range"]))

    def forward(self, ids, mask, types, labels=None):
        c, head = self.config, self.head
        h = self.deberta(ids, mask, types)
        if head == "qa":
            logits = self.qa_outputs(h)
            s, e = logits[..., 0].contiguous(), logits[..., 1].contiguous()
            return (R.qa_loss(s, e, labels[0], labels[1]) if labels is not None else None), logits
        if head in ("seq-cls", "multiple-choice"):  # multiple choice: rows are examples x 3 choices
            pooled = R._act(c["pooler_hidden_act"])(self.pooler.dense(h[:, 0]))
            logits = self.classifier(pooled)
            if head == "multiple-choice":
                logits = logits.view(-1, 3)
            loss = None
            if labels is not None and labels.is_floating_point():  # soft labels: CE against the distribution
                loss = -(F.log_softmax(logits, -1) * labels).sum(-1).mean()
            elif labels is not None:  # DeBERTa leaves out negative labels (none here): plain cross-entropy
                loss = F.cross_entropy(logits, labels)
            return loss, logits
        if head == "token-cls":
            logits = self.classifier(h)
            loss = F.cross_entropy(logits.view(-1, c["num_labels"]), labels.view(-1)) if labels is not None else None
            return loss, logits
        p = self.cls.predictions
        t = p.transform.LayerNorm(R._act(c["hidden_act"])(p.transform.dense(h)).to(p.transform.LayerNorm.weight.dtype))
        logits = F.linear(t, self.deberta.embeddings.word_embeddings.weight, p.bias)
        loss = F.cross_entropy(logits.view(-1, c["vocab_size"]), labels.view(-1)) if labels is not None else None
        return loss, logits


def tiny(**kw):
    """hidden 32, 2 layers, 2 heads; buckets 4 and max_relative_positions 6, so at T 12 distances past 2 are
    log-bucketed and the clamp to the 8 relative rows bites."""
    c = {"model_type": "deberta-v2", "vocab_size": 96, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 2, "intermediate_size": 48, "hidden_act": "gelu", "max_position_embeddings": 24,
         "type_vocab_size": 0, "layer_norm_eps": 1e-7, "pad_token_id": 0, "relative_attention": True,
         "position_buckets": 4, "max_relative_positions": 6, "pos_att_type": ["p2c", "c2p"], "share_att_key": True,
         "norm_rel_ebd": "layer_norm", "position_biased_input": False, "pooler_hidden_size": 32,
         "pooler_dropout": 0, "pooler_hidden_act": "gelu", "initializer_range": 0.02}
    c.update(kw)
    return c


# The other options: own position projections, c2p only, absolute positions, token types, embed_proj, no
# relative LayerNorm, no bucketing (the span is max_relative_positions).
VARIANT = dict(share_att_key=False, pos_att_type="c2p", position_biased_input=True, type_vocab_size=2,
               embedding_size=16, norm_rel_ebd="none", position_buckets=-1, max_relative_positions=5)

# A span far wider than the sequence (v3's 256 buckets at short inputs): each sequence reads a band of 2 L - 1 of
# the 128 relative rows, away from both ends.
WIDE = dict(position_buckets=64, max_relative_positions=128)

CASES = [  # (stem, config, head, problem)
    ("deberta-v2_seq-cls", tiny(**G.labels3(3)), "seq-cls", "int"),
    ("deberta-v2_seq-cls-soft", tiny(**G.labels3(3)), "seq-cls", "multi"),
    ("deberta-v2_token-cls", tiny(**G.labels3(5)), "token-cls", "int"),
    ("deberta-v2_qa", tiny(), "qa", "qa"),
    ("deberta-v2_mlm", tiny(), "mlm", "int"),
    ("deberta-v2_multiple-choice", tiny(), "multiple-choice", "int"),
    ("deberta-v2-variant_token-cls", tiny(**VARIANT, **G.labels3(4)), "token-cls", "int"),
    ("deberta-v2-variant_seq-cls", tiny(**VARIANT, **G.labels3(2)), "seq-cls", "int"),
    ("deberta-v2-wide_token-cls", tiny(**WIDE, **G.labels3(3)), "token-cls", "int"),
]


def run(model, inputs, dtype, autocast):
    ids, types, mask, labels = inputs
    m = model.to(dtype)
    m.zero_grad(set_to_none=True)
    if labels is not None and isinstance(labels, torch.Tensor) and labels.is_floating_point():
        labels = labels.to(dtype)
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss, logits = m(ids, mask, types, labels)
    else:
        loss, logits = m(ids, mask, types, labels)
    loss.backward()
    out = {"logits": logits.detach().float(), "loss": loss.detach().float().reshape(1)}
    grads = {n: p.grad.detach().float().clone() for n, p in m.named_parameters()}
    return out, grads


def main():
    os.makedirs(G.OUT, exist_ok=True)
    for i, (stem, cfg, head, problem) in enumerate(CASES):
        g = torch.Generator().manual_seed(500 + i)
        torch.manual_seed(500 + i)
        model = TaskModel(cfg, head)
        model.eval()
        G.perturb(model, g)
        inputs = G.head_inputs(full_config(cfg), head, problem, g)
        params = {n: p.detach().float().clone() for n, p in model.named_parameters()}
        ref, ref_grads = run(model, inputs, torch.float64, autocast=False)
        model = model.float()
        bf, _ = run(model, inputs, torch.float32, autocast=True)
        ids, types, mask, labels = inputs
        tensors = {"input.input_ids": ids.to(torch.int32), "input.token_type_ids": types.to(torch.int32),
                   "input.attention_mask": mask.to(torch.int32)}
        if problem == "qa":
            tensors["input.start_positions"] = labels[0].to(torch.int32)
            tensors["input.end_positions"] = labels[1].to(torch.int32)
        elif labels.is_floating_point():
            tensors["input.float_labels"] = labels.float()
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
        path = os.path.join(G.OUT, f"tiny_{stem}.safetensors")
        R.save_safetensors(path, tensors, {"format": "pt", "config": json.dumps(cfg), "head": head,
                                           "num_choices": "3" if head == "multiple-choice" else "0",
                                           "generator": "scripts/golden_deberta.py, torch " + torch.__version__})
        print(f"{path}: {os.path.getsize(path)} bytes, loss f64 {float(ref['loss']):.6f} bf16 {float(bf['loss']):.6f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Regenerates tests/model/data/golden/tiny_<family>_clm.safetensors: a plain-PyTorch decoder written after
transformers' modeling code (LlamaRMSNorm / Gemma3RMSNorm, rotate_half RoPE with the config's rope type,
repeat_kv GQA, eager attention with the causal and sliding masks, SwiGLU / GeGLU MLPs, Qwen2's q/k/v biases,
Qwen3's and Gemma 3's q/k norms, Gemma 3's embedding scale, sandwich norms and query_pre_attn_scalar) and
ForCausalLMLoss (labels shifted inside the model, -100 ignored, sum / number of targets), run in f32 on two
packed sequences with positions restarting, each attending only to itself. Each file holds the config
(metadata "config"), every parameter by HF name, `grad.<name>` for each, input_ids, position_ids, labels (the
unshifted labels of the packed rows, -100 at each sequence's first row as a padding-free collator writes
them), logits [rows, vocab] and loss.

    /usr/bin/python3 tests/model/tools/make_decoder_golden.py tests/model/data/golden
"""
import json
import math
import struct
import sys

import torch

torch.manual_seed(0)

BASE = {"vocab_size": 61, "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
        "initializer_range": 0.02, "bos_token_id": 1, "eos_token_id": 2}

FAMILIES = {
    "llama": {**BASE, "model_type": "llama", "hidden_act": "silu", "rope_theta": 10000.0,
              "tie_word_embeddings": False},
    "llama3_rope": {**BASE, "model_type": "llama", "hidden_act": "silu", "rope_theta": 500000.0,
                    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
                    "tie_word_embeddings": True, "mlp_bias": True, "attention_bias": True},
    "mistral": {**BASE, "model_type": "mistral", "hidden_act": "silu", "rope_theta": 10000.0, "sliding_window": 4},
    "qwen2": {**BASE, "model_type": "qwen2", "hidden_act": "silu", "rope_theta": 1000000.0,
              "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 4,
              "max_window_layers": 1},
    "qwen3": {**BASE, "model_type": "qwen3", "hidden_act": "silu", "head_dim": 16, "rope_theta": 1000000.0,
              "tie_word_embeddings": True, "attention_bias": False},
    "gemma3_text": {**BASE, "model_type": "gemma3_text", "hidden_activation": "gelu_pytorch_tanh", "head_dim": 16,
                    "query_pre_attn_scalar": 24, "sliding_window": 3, "rope_theta": 1000000.0,
                    "rope_local_base_freq": 10000.0, "num_key_value_heads": 1,
                    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                    "final_logit_softcapping": None, "tie_word_embeddings": True},
}

LENGTHS = [9, 6]


def rope_inv_freq(cfg, head_dim, rope):
    inv = 1.0 / (rope["theta"] ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    if rope.get("rope_type") == "llama3":
        factor, lf, hf = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
        old = rope["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / lf, old / hf
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - lf) / (hf - lf)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, inv_l)
    return inv


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, pos, inv):
    freqs = (inv[:, None].float() @ pos[None, :].float()).transpose(0, 1)  # [T, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]
    return x * cos + rotate_half(x) * sin


def rms(x, w, eps, gemma):
    if gemma:
        out = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
        return out * (1.0 + w.float())
    v = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(v + eps))


def gelu_tanh(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


class Family:
    def __init__(self, name, cfg):
        self.name, self.cfg = name, cfg
        c = cfg
        self.mt = c["model_type"]
        self.gemma = self.mt == "gemma3_text"
        self.H, self.KV = c["num_attention_heads"], c["num_key_value_heads"]
        self.d = c.get("head_dim", c["hidden_size"] // self.H)
        self.qkv_bias = c.get("attention_bias", False) or self.mt == "qwen2"
        self.o_bias = c.get("attention_bias", False) and self.mt != "qwen2"
        self.mlp_bias = c.get("mlp_bias", False)
        self.qk_norm = self.mt in ("qwen3", "gemma3_text")
        self.tied = c.get("tie_word_embeddings", self.gemma)
        L = c["num_hidden_layers"]
        if self.gemma:
            self.windows = [c["sliding_window"] if t == "sliding_attention" else 0 for t in c["layer_types"]]
        elif self.mt == "mistral":
            self.windows = [c.get("sliding_window") or 0] * L
        elif self.mt in ("qwen2", "qwen3") and c.get("use_sliding_window"):
            self.windows = [c["sliding_window"] if i >= c["max_window_layers"] else 0 for i in range(L)]
        else:
            self.windows = [0] * L
        full = {"theta": c.get("rope_theta", 10000.0), **(c.get("rope_scaling") or {})}
        local = {"theta": c.get("rope_local_base_freq", 10000.0)}
        self.inv_full = rope_inv_freq(c, self.d, full)
        self.inv_local = rope_inv_freq(c, self.d, local)
        self.scale = c["query_pre_attn_scalar"] ** -0.5 if self.gemma else self.d ** -0.5

    def params(self):
        c, h, I, V = self.cfg, self.cfg["hidden_size"], self.cfg["intermediate_size"], self.cfg["vocab_size"]
        p = {}

        def add(name, *shape, zero_centred=False, ones=False):
            if ones:
                t = torch.ones(*shape) + 0.1 * torch.randn(*shape)
            elif zero_centred:
                t = 0.1 * torch.randn(*shape)
            else:
                t = 0.2 * torch.randn(*shape)
            p[name] = t.requires_grad_(True)

        add("model.embed_tokens.weight", V, h)
        for i in range(c["num_hidden_layers"]):
            pre = f"model.layers.{i}."
            norm = {"zero_centred": True} if self.gemma else {"ones": True}
            add(pre + "input_layernorm.weight", h, **norm)
            add(pre + "self_attn.q_proj.weight", self.H * self.d, h)
            add(pre + "self_attn.k_proj.weight", self.KV * self.d, h)
            add(pre + "self_attn.v_proj.weight", self.KV * self.d, h)
            if self.qkv_bias:
                add(pre + "self_attn.q_proj.bias", self.H * self.d)
                add(pre + "self_attn.k_proj.bias", self.KV * self.d)
                add(pre + "self_attn.v_proj.bias", self.KV * self.d)
            if self.qk_norm:
                add(pre + "self_attn.q_norm.weight", self.d, **norm)
                add(pre + "self_attn.k_norm.weight", self.d, **norm)
            add(pre + "self_attn.o_proj.weight", h, self.H * self.d)
            if self.o_bias:
                add(pre + "self_attn.o_proj.bias", h)
            add(pre + "post_attention_layernorm.weight", h, **norm)
            if self.gemma:
                add(pre + "pre_feedforward_layernorm.weight", h, **norm)
                add(pre + "post_feedforward_layernorm.weight", h, **norm)
            add(pre + "mlp.gate_proj.weight", I, h)
            add(pre + "mlp.up_proj.weight", I, h)
            add(pre + "mlp.down_proj.weight", h, I)
            if self.mlp_bias:
                add(pre + "mlp.gate_proj.bias", I)
                add(pre + "mlp.up_proj.bias", I)
                add(pre + "mlp.down_proj.bias", h)
        add("model.norm.weight", h, **({"zero_centred": True} if self.gemma else {"ones": True}))
        if not self.tied:
            add("lm_head.weight", V, h)
        return p

    def forward(self, p, ids, pos):
        """One sequence: ids [T] -> logits [T, V]."""
        c, eps, T = self.cfg, self.cfg["rms_norm_eps"], ids.shape[0]
        lin = lambda x, name: x @ p[name + ".weight"].T + (p[name + ".bias"] if name + ".bias" in p else 0)
        x = p["model.embed_tokens.weight"][ids]
        if self.gemma:
            x = x * torch.tensor(c["hidden_size"] ** 0.5, dtype=torch.float32)
        for i in range(c["num_hidden_layers"]):
            pre = f"model.layers.{i}."
            n = rms(x, p[pre + "input_layernorm.weight"], eps, self.gemma)
            q = lin(n, pre + "self_attn.q_proj").view(T, self.H, self.d).transpose(0, 1)
            k = lin(n, pre + "self_attn.k_proj").view(T, self.KV, self.d).transpose(0, 1)
            v = lin(n, pre + "self_attn.v_proj").view(T, self.KV, self.d).transpose(0, 1)
            if self.qk_norm:
                q = rms(q, p[pre + "self_attn.q_norm.weight"], eps, self.gemma)
                k = rms(k, p[pre + "self_attn.k_norm.weight"], eps, self.gemma)
            W = self.windows[i]
            inv = self.inv_local if (self.gemma and W) else self.inv_full
            q, k = apply_rope(q, pos, inv), apply_rope(k, pos, inv)
            g = self.H // self.KV
            k, v = k.repeat_interleave(g, dim=0), v.repeat_interleave(g, dim=0)
            s = (q @ k.transpose(1, 2)) * self.scale
            qi, kj = torch.arange(T)[:, None], torch.arange(T)[None, :]
            allowed = kj <= qi
            if W:
                allowed = allowed & (kj > qi - W)
            s = s + torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None]
            a = torch.softmax(s, dim=-1, dtype=torch.float32) @ v
            a = lin(a.transpose(0, 1).reshape(T, self.H * self.d), pre + "self_attn.o_proj")
            if self.gemma:
                a = rms(a, p[pre + "post_attention_layernorm.weight"], eps, True)
                x = x + a
                m_in = rms(x, p[pre + "pre_feedforward_layernorm.weight"], eps, True)
            else:
                x = x + a
                m_in = rms(x, p[pre + "post_attention_layernorm.weight"], eps, False)
            gate = lin(m_in, pre + "mlp.gate_proj")
            act = gelu_tanh(gate) if self.gemma else torch.nn.functional.silu(gate)
            m = lin(act * lin(m_in, pre + "mlp.up_proj"), pre + "mlp.down_proj")
            if self.gemma:
                m = rms(m, p[pre + "post_feedforward_layernorm.weight"], eps, True)
            x = x + m
        x = rms(x, p["model.norm.weight"], eps, self.gemma)
        head = p["model.embed_tokens.weight"] if self.tied else p["lm_head.weight"]
        return x @ head.T


def write_safetensors(path, tensors, metadata):
    header, blobs, off = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        dtype = {torch.float32: "F32", torch.int32: "I32"}[t.dtype]
        b = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main():
    out_dir = sys.argv[1]
    for name, cfg in FAMILIES.items():
        fam = Family(name, cfg)
        p = fam.params()
        ids = [torch.randint(3, cfg["vocab_size"], (n,)) for n in LENGTHS]
        logits = [fam.forward(p, x, torch.arange(len(x))) for x in ids]
        # Unshifted labels of the packed rows: -100 at each sequence's first row (a padding-free collator's
        # separator), and one more ignored target inside the first sequence (a prompt token).
        labels = []
        for x in ids:
            lab = x.clone()
            lab[0] = -100
            labels.append(lab)
        labels[0][3] = -100
        # ForCausalLMLoss per sequence: shift inside, sum over targets, / the number of targets of the batch.
        total, count = 0.0, 0
        for lg, lab in zip(logits, labels):
            tgt = torch.cat([lab[1:], torch.tensor([-100])])
            total = total + torch.nn.functional.cross_entropy(lg.float(), tgt, ignore_index=-100, reduction="sum")
            count += int((tgt != -100).sum())
        loss = total / count
        loss.backward()
        tensors = dict(p)
        for k, v in p.items():
            tensors["grad." + k] = v.grad
        tensors["input_ids"] = torch.cat(ids).to(torch.int32)
        tensors["position_ids"] = torch.cat([torch.arange(n) for n in LENGTHS]).to(torch.int32)
        tensors["labels"] = torch.cat(labels).to(torch.int32)
        tensors["seq_lens"] = torch.tensor(LENGTHS, dtype=torch.int32)
        tensors["logits"] = torch.cat(logits)
        tensors["loss"] = loss.detach().reshape(1)
        write_safetensors(f"{out_dir}/tiny_{name}_clm.safetensors", tensors,
                          {"config": json.dumps(cfg), "generator": f"torch {torch.__version__}"})
        print(name, float(loss), count)


if __name__ == "__main__":
    main()

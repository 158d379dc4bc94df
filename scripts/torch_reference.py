"""Plain-PyTorch reference of HF's BertForQuestionAnswering and DistilBertForQuestionAnswering.

The transformers package is not installed here, so this file re-creates the two models with exactly HF's
module/parameter names (so a state_dict loads under HF names: bert.encoder.layer.0.attention.self.query.weight,
distilbert.transformer.layer.0.attention.q_lin.weight, qa_outputs.weight, ...) and HF's math: post-LN blocks,
exact (erf) GELU, additive attention mask with finfo.min (BERT) / masked_fill with finfo.min (DistilBERT), and
the QA loss (positions clamped to [0, T], CrossEntropy(ignore_index=T), mean of start and end losses).

It is the oracle for coretrain's golden fixtures (scripts/make_golden.py), the PyTorch side of
bench/step_vs_torch.py, and the reader for checkpoint tests. It also holds a dependency-free safetensors
reader/writer (numpy + torch only).

Entry points:
  model_from_config(cfg: dict) -> nn.Module     cfg uses HF config.json field names; model_type bert|distilbert
  load_safetensors(path) -> (dict name->torch.Tensor, metadata dict)
  save_safetensors(path, tensors: dict name->torch.Tensor, metadata: dict | None)
"""

import json
import math
import struct

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

# ----------------------------------------------------------------------------------------------------------
# Config: HF field names and defaults (transformers BertConfig / DistilBertConfig).

BERT_DEFAULTS = dict(
    model_type="bert",
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=512,
    type_vocab_size=2,
    initializer_range=0.02,
    layer_norm_eps=1e-12,
    pad_token_id=0,
)

DISTILBERT_DEFAULTS = dict(
    model_type="distilbert",
    vocab_size=30522,
    max_position_embeddings=512,
    sinusoidal_pos_embds=False,
    n_layers=6,
    n_heads=12,
    dim=768,
    hidden_dim=3072,
    dropout=0.1,
    attention_dropout=0.1,
    activation="gelu",
    initializer_range=0.02,
    qa_dropout=0.1,
    pad_token_id=0,
)


def full_config(cfg):
    """cfg with HF defaults filled in for its model_type."""
    mt = cfg.get("model_type", "bert")
    if mt == "bert":
        out = dict(BERT_DEFAULTS)
    elif mt == "distilbert":
        out = dict(DISTILBERT_DEFAULTS)
    else:
        raise ValueError(f"unknown model_type {mt!r}: expected bert or distilbert")
    out.update(cfg)
    return out


def _act(name):
    if name != "gelu":
        raise ValueError(f"activation {name!r} not supported: expected gelu")
    return nn.GELU()  # exact erf GELU, as HF's "gelu"


def _init_weights(module, std):
    """HF _init_weights: Linear/Embedding N(0, std), biases 0, padding row 0, LayerNorm 1/0."""
    if isinstance(module, nn.Linear):
        module.weight.data.normal_(mean=0.0, std=std)
        if module.bias is not None:
            module.bias.data.zero_()
    elif isinstance(module, nn.Embedding):
        module.weight.data.normal_(mean=0.0, std=std)
        if module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()
    elif isinstance(module, nn.LayerNorm):
        module.bias.data.zero_()
        module.weight.data.fill_(1.0)


def qa_loss(start_logits, end_logits, start_positions, end_positions):
    """HF's QA loss: positions outside [0, T) clamp to T and are ignored; mean of start and end CE."""
    ignored_index = start_logits.size(1)
    start_positions = start_positions.clamp(0, ignored_index)
    end_positions = end_positions.clamp(0, ignored_index)
    loss_fct = nn.CrossEntropyLoss(ignore_index=ignored_index)
    return (loss_fct(start_logits, start_positions) + loss_fct(end_logits, end_positions)) / 2


# ----------------------------------------------------------------------------------------------------------
# BERT (modeling_bert.py), QA head without pooler.


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"], padding_idx=c["pad_token_id"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])

    def forward(self, input_ids, token_type_ids):
        T = input_ids.size(1)
        position_ids = torch.arange(T, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c["num_attention_heads"]
        self.attention_head_size = c["hidden_size"] // c["num_attention_heads"]
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c["hidden_size"], self.all_head_size)
        self.key = nn.Linear(c["hidden_size"], self.all_head_size)
        self.value = nn.Linear(c["hidden_size"], self.all_head_size)
        self.dropout = nn.Dropout(c["attention_probs_dropout_prob"])

    def transpose_for_scores(self, x):
        x = x.view(x.size()[:-1] + (self.num_attention_heads, self.attention_head_size))
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        scores = scores + extended_mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.all_head_size,))


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, hidden_states, extended_mask):
        return self.output(self.self(hidden_states, extended_mask), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.intermediate_act_fn = _act(c["hidden_act"])

    def forward(self, x):
        return self.intermediate_act_fn(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, hidden_states, extended_mask):
        a = self.attention(hidden_states, extended_mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, x, extended_mask):
        for layer in self.layer:
            x = layer(x, extended_mask)
        return x


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        x = self.embeddings(input_ids, token_type_ids)
        # HF get_extended_attention_mask: (1 - mask) * finfo(dtype).min, broadcast over heads and queries.
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)
        ext = (1.0 - ext) * torch.finfo(x.dtype).min
        return self.encoder(x, ext)


class BertForQuestionAnswering(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = full_config(dict(cfg, model_type="bert"))
        self.config = c
        self.bert = BertModel(c)
        self.qa_outputs = nn.Linear(c["hidden_size"], 2)
        self.apply(lambda m: _init_weights(m, c["initializer_range"]))

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, start_positions=None,
                end_positions=None):
        h = self.bert(input_ids, attention_mask, token_type_ids)
        logits = self.qa_outputs(h)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1).contiguous()
        end_logits = end_logits.squeeze(-1).contiguous()
        loss = None
        if start_positions is not None and end_positions is not None:
            loss = qa_loss(start_logits, end_logits, start_positions, end_positions)
        return loss, start_logits, end_logits


# ----------------------------------------------------------------------------------------------------------
# DistilBERT (modeling_distilbert.py).


class DistilEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        if c["sinusoidal_pos_embds"]:
            raise ValueError("sinusoidal_pos_embds=True is not supported")
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["dim"], padding_idx=c["pad_token_id"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["dim"])
        self.LayerNorm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, input_ids):
        T = input_ids.size(1)
        position_ids = torch.arange(T, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(x))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads = c["n_heads"]
        self.dim = c["dim"]
        self.dropout = nn.Dropout(p=c["attention_dropout"])
        self.q_lin = nn.Linear(c["dim"], c["dim"])
        self.k_lin = nn.Linear(c["dim"], c["dim"])
        self.v_lin = nn.Linear(c["dim"], c["dim"])
        self.out_lin = nn.Linear(c["dim"], c["dim"])

    def forward(self, x, mask):
        bs, q_length, dim = x.size()
        dph = self.dim // self.n_heads

        def shape(t):
            return t.view(bs, -1, self.n_heads, dph).transpose(1, 2)

        def unshape(t):
            return t.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dph)

        q = shape(self.q_lin(x)) / math.sqrt(dph)
        k = shape(self.k_lin(x))
        v = shape(self.v_lin(x))
        scores = torch.matmul(q, k.transpose(2, 3))
        m = (mask == 0).view(bs, 1, 1, -1).expand_as(scores)
        scores = scores.masked_fill(m, torch.finfo(scores.dtype).min)
        weights = self.dropout(F.softmax(scores, dim=-1))
        return self.out_lin(unshape(torch.matmul(weights, v)))


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dropout = nn.Dropout(p=c["dropout"])
        self.lin1 = nn.Linear(c["dim"], c["hidden_dim"])
        self.lin2 = nn.Linear(c["hidden_dim"], c["dim"])
        self.activation = _act(c["activation"])

    def forward(self, x):
        return self.dropout(self.lin2(self.activation(self.lin1(x))))


class TransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(normalized_shape=c["dim"], eps=1e-12)
        self.ffn = FFN(c)
        self.output_layer_norm = nn.LayerNorm(normalized_shape=c["dim"], eps=1e-12)

    def forward(self, x, mask):
        sa = self.sa_layer_norm(self.attention(x, mask) + x)
        return self.output_layer_norm(self.ffn(sa) + sa)


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([TransformerBlock(c) for _ in range(c["n_layers"])])

    def forward(self, x, mask):
        for layer in self.layer:
            x = layer(x, mask)
        return x


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = DistilEmbeddings(c)
        self.transformer = Transformer(c)

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        return self.transformer(self.embeddings(input_ids), attention_mask)


class DistilBertForQuestionAnswering(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = full_config(dict(cfg, model_type="distilbert"))
        self.config = c
        self.distilbert = DistilBertModel(c)
        self.qa_outputs = nn.Linear(c["dim"], 2)
        self.dropout = nn.Dropout(c["qa_dropout"])
        self.apply(lambda m: _init_weights(m, c["initializer_range"]))

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, start_positions=None,
                end_positions=None):
        del token_type_ids  # DistilBERT has no token types (HF's signature does not take them)
        h = self.dropout(self.distilbert(input_ids, attention_mask))
        logits = self.qa_outputs(h)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1).contiguous()
        end_logits = end_logits.squeeze(-1).contiguous()
        loss = None
        if start_positions is not None and end_positions is not None:
            loss = qa_loss(start_logits, end_logits, start_positions, end_positions)
        return loss, start_logits, end_logits


def model_from_config(cfg):
    """The QA model for an HF config dict (model_type bert or distilbert)."""
    mt = cfg.get("model_type", "bert")
    if mt == "bert":
        return BertForQuestionAnswering(cfg)
    if mt == "distilbert":
        return DistilBertForQuestionAnswering(cfg)
    raise ValueError(f"unknown model_type {mt!r}: expected bert or distilbert")


# ----------------------------------------------------------------------------------------------------------
# The other families and every head (modeling_roberta.py, modeling_electra.py, and the task classes of
# modeling_bert.py / modeling_distilbert.py), for golden fixtures of each family x head. Same layer modules
# as above (BertEncoder); what differs is data: position ids, embedding width + projection, names, heads.

FAMILY_PREFIX = {"bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "camembert": "roberta",
                 "electra": "electra", "distilbert": "distilbert"}
ROBERTA_LIKE = ("roberta", "xlm-roberta", "camembert")


def family_config(cfg):
    """cfg with HF defaults for any family (BERT's field names for all but DistilBERT)."""
    mt = cfg["model_type"]
    if mt == "distilbert":
        out = dict(DISTILBERT_DEFAULTS, seq_classif_dropout=0.2)
    else:
        out = dict(BERT_DEFAULTS, classifier_dropout=None)
        if mt in ROBERTA_LIKE:
            out["pad_token_id"] = 1
        if mt == "electra":
            out.update(embedding_size=128, summary_type="first", summary_use_proj=True,
                       summary_activation="gelu", summary_last_dropout=0.1)
    out.update(cfg)
    out.setdefault("problem_type", None)
    if "id2label" in out:
        out["num_labels"] = len(out["id2label"])
    out.setdefault("num_labels", 2)
    return out


def roberta_position_ids(input_ids, padding_idx):
    """create_position_ids_from_input_ids: padding_idx + running count of non-pad tokens; pads at padding_idx."""
    mask = input_ids.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


class FamilyEmbeddings(nn.Module):
    """BertEmbeddings / RobertaEmbeddings / ElectraEmbeddings (width embedding_size for ELECTRA)."""

    def __init__(self, c):
        super().__init__()
        E = c.get("embedding_size", c["hidden_size"]) if c["model_type"] == "electra" else c["hidden_size"]
        self.roberta = c["model_type"] in ROBERTA_LIKE
        self.padding_idx = c["pad_token_id"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], E, padding_idx=c["pad_token_id"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], E,
                                                padding_idx=c["pad_token_id"] if self.roberta else None)
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], E)
        self.LayerNorm = nn.LayerNorm(E, eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c["hidden_dropout_prob"])

    def forward(self, input_ids, token_type_ids):
        T = input_ids.size(1)
        if self.roberta:
            position_ids = roberta_position_ids(input_ids, self.padding_idx)
        else:
            position_ids = torch.arange(T, dtype=torch.long).unsqueeze(0)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(x))


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.activation = nn.Tanh()

    def forward(self, h):
        return self.activation(self.dense(h[:, 0]))


class FamilyModel(nn.Module):
    """BertModel / RobertaModel / ElectraModel: embeddings [-> embeddings_project] -> encoder [, pooler]."""

    def __init__(self, c, pooler=False):
        super().__init__()
        self.embeddings = FamilyEmbeddings(c)
        E = c.get("embedding_size", c["hidden_size"]) if c["model_type"] == "electra" else c["hidden_size"]
        if E != c["hidden_size"]:
            self.embeddings_project = nn.Linear(E, c["hidden_size"])
        self.encoder = BertEncoder(c)
        if pooler:
            self.pooler = BertPooler(c)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        x = self.embeddings(input_ids, token_type_ids)
        if hasattr(self, "embeddings_project"):
            # Under CPU autocast (torch 1.13) the projection's bf16 output would meet the first LayerNorm's f32
            # weights and fail; coretrain keeps it f32 there too.
            x = self.embeddings_project(x).to(self.embeddings.LayerNorm.weight.dtype)
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)
        ext = (1.0 - ext) * torch.finfo(x.dtype).min
        return self.encoder(x, ext)


def sequence_loss(c, logits, labels):
    """transformers' problem_type rule (BertForSequenceClassification.forward)."""
    n = c["num_labels"]
    pt = c["problem_type"]
    if pt is None:
        if n == 1:
            pt = "regression"
        elif labels.dtype in (torch.long, torch.int):
            pt = "single_label_classification"
        else:
            pt = "multi_label_classification"
    if pt == "regression":
        if n == 1:
            return F.mse_loss(logits.squeeze(), labels.squeeze().to(logits.dtype))
        return F.mse_loss(logits, labels.to(logits.dtype))
    if pt == "single_label_classification":
        return F.cross_entropy(logits.view(-1, n), labels.view(-1))
    return F.binary_cross_entropy_with_logits(logits, labels.to(logits.dtype))


class TaskModel(nn.Module):
    """<Family>For<Head> with HF's module names. head: qa | seq-cls | token-cls | mlm | multiple-choice.
    forward(input_ids, attention_mask, token_type_ids, labels) -> (loss or None, logits); qa: labels =
    (start, end) and logits [B, T, 2]; multiple-choice: inputs [E, C, T], logits [E, C]."""

    def __init__(self, cfg, head):
        super().__init__()
        c = family_config(cfg)
        self.config, self.head = c, head
        mt = c["model_type"]
        self.base_name = FAMILY_PREFIX[mt]
        distil = mt == "distilbert"
        H = c["dim"] if distil else c["hidden_size"]
        pooler = head in ("seq-cls", "multiple-choice") and mt in ("bert",) + ROBERTA_LIKE and not (
            head == "seq-cls" and mt in ROBERTA_LIKE)
        base = DistilBertModel(c) if distil else FamilyModel(c, pooler=pooler)
        setattr(self, self.base_name, base)
        cls_p = c.get("classifier_dropout")
        if cls_p is None:
            cls_p = c.get("hidden_dropout_prob", 0.1)
        if head == "qa":
            self.qa_outputs = nn.Linear(H, 2)
            if distil:
                self.dropout = nn.Dropout(c["qa_dropout"])
        elif head in ("seq-cls", "multiple-choice"):
            n = c["num_labels"] if head == "seq-cls" else 1
            if distil:
                self.pre_classifier = nn.Linear(H, H)
                self.classifier = nn.Linear(H, n)
                self.dropout = nn.Dropout(c["seq_classif_dropout"])
            elif mt == "electra" and head == "multiple-choice":
                # ElectraForMultipleChoice: SequenceSummary (modeling_utils.py) on the first token, then
                # classifier Linear(H, 1). summary_first_dropout is no ElectraConfig field (hasattr: absent).
                if c["summary_type"] != "first" or not c["summary_use_proj"]:
                    raise ValueError("SequenceSummary: only summary_type first with summary_use_proj")
                self.sequence_summary = nn.Module()
                self.sequence_summary.summary = nn.Linear(H, H)
                self.summary_act = _act(c["summary_activation"])
                self.summary_first_dropout = nn.Dropout(c.get("summary_first_dropout", 0.0))
                self.summary_last_dropout = nn.Dropout(c["summary_last_dropout"])
                self.classifier = nn.Linear(H, n)
            elif mt == "electra" and head == "seq-cls":
                self.classifier = nn.Module()
                self.classifier.dense = nn.Linear(H, H)
                self.classifier.out_proj = nn.Linear(H, n)
                self.dropout = nn.Dropout(cls_p)
            elif mt in ROBERTA_LIKE and head == "seq-cls":
                self.classifier = nn.Module()
                self.classifier.dense = nn.Linear(H, H)
                self.classifier.out_proj = nn.Linear(H, n)
                self.dropout = nn.Dropout(cls_p)
            else:
                # BertFor{SequenceClassification,MultipleChoice}; RobertaForMultipleChoice: hidden_dropout_prob.
                self.dropout = nn.Dropout(c["hidden_dropout_prob"] if mt in ROBERTA_LIKE else cls_p)
                self.classifier = nn.Linear(H, n)
        elif head == "token-cls":
            self.dropout = nn.Dropout(c["dropout"] if distil else cls_p)
            self.classifier = nn.Linear(H, c["num_labels"])
        elif head == "mlm":
            V = c["vocab_size"]
            if distil:
                self.vocab_transform = nn.Linear(H, H)
                self.vocab_layer_norm = nn.LayerNorm(H, eps=1e-12)
                self.vocab_projector = nn.Module()
                self.vocab_projector.bias = nn.Parameter(torch.zeros(V))
                self.mlm_act = _act(c["activation"])
            elif mt in ROBERTA_LIKE:
                self.lm_head = nn.Module()
                self.lm_head.dense = nn.Linear(H, H)
                self.lm_head.layer_norm = nn.LayerNorm(H, eps=c["layer_norm_eps"])
                self.lm_head.bias = nn.Parameter(torch.zeros(V))
                self.mlm_act = nn.GELU()
            elif mt == "electra":
                E = c["embedding_size"]
                self.generator_predictions = nn.Module()
                self.generator_predictions.dense = nn.Linear(H, E)
                self.generator_predictions.LayerNorm = nn.LayerNorm(E, eps=c["layer_norm_eps"])
                self.generator_lm_head = nn.Module()
                self.generator_lm_head.bias = nn.Parameter(torch.zeros(V))
                self.mlm_act = nn.GELU()
            else:
                self.cls = nn.Module()
                self.cls.predictions = nn.Module()
                self.cls.predictions.transform = nn.Module()
                self.cls.predictions.transform.dense = nn.Linear(H, H)
                self.cls.predictions.transform.LayerNorm = nn.LayerNorm(H, eps=c["layer_norm_eps"])
                self.cls.predictions.bias = nn.Parameter(torch.zeros(V))
                self.mlm_act = _act(c["hidden_act"])
        else:
            raise ValueError(f"unknown head {head!r}")
        self.apply(lambda m: _init_weights(m, c["initializer_range"]))

    def body(self, input_ids, attention_mask, token_type_ids):
        base = getattr(self, self.base_name)
        if self.config["model_type"] == "distilbert":
            return base(input_ids, attention_mask)
        return base(input_ids, attention_mask, token_type_ids)

    def mlm_parts(self):
        """(dense, layer_norm, bias) of the masked-LM head; the decoder weight is the word embeddings."""
        mt = self.config["model_type"]
        if mt == "distilbert":
            return self.vocab_transform, self.vocab_layer_norm, self.vocab_projector.bias
        if mt in ROBERTA_LIKE:
            return self.lm_head.dense, self.lm_head.layer_norm, self.lm_head.bias
        if mt == "electra":
            g = self.generator_predictions
            return g.dense, g.LayerNorm, self.generator_lm_head.bias
        t = self.cls.predictions.transform
        return t.dense, t.LayerNorm, self.cls.predictions.bias

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        c, head, mt = self.config, self.head, self.config["model_type"]
        shape = input_ids.shape
        if head == "multiple-choice":
            input_ids = input_ids.view(-1, shape[-1])
            attention_mask = attention_mask.view(-1, shape[-1]) if attention_mask is not None else None
            token_type_ids = token_type_ids.view(-1, shape[-1]) if token_type_ids is not None else None
        h = self.body(input_ids, attention_mask, token_type_ids)
        if head == "qa":
            if mt == "distilbert":
                h = self.dropout(h)
            logits = self.qa_outputs(h)
            s, e = logits[..., 0].contiguous(), logits[..., 1].contiguous()
            loss = qa_loss(s, e, labels[0], labels[1]) if labels is not None else None
            return loss, logits
        if head in ("seq-cls", "multiple-choice"):
            first = h[:, 0]
            if mt == "distilbert":
                x = self.classifier(self.dropout(F.relu(self.pre_classifier(first))))
            elif head == "multiple-choice" and mt == "electra":
                x = self.summary_first_dropout(first)
                x = self.summary_last_dropout(self.summary_act(self.sequence_summary.summary(x)))
                x = self.classifier(x)
            elif head == "seq-cls" and (mt == "electra" or mt in ROBERTA_LIKE):
                act = F.gelu if mt == "electra" else torch.tanh
                x = self.dropout(first)
                x = self.dropout(act(self.classifier.dense(x)))
                x = self.classifier.out_proj(x)
            else:
                pooled = getattr(self, self.base_name).pooler(h)
                x = self.classifier(self.dropout(pooled))
            if head == "multiple-choice":
                logits = x.view(-1, shape[1])
                loss = F.cross_entropy(logits, labels) if labels is not None else None
                return loss, logits
            return (sequence_loss(c, x, labels) if labels is not None else None), x
        if head == "token-cls":
            logits = self.classifier(self.dropout(h))
            loss = None
            if labels is not None:
                loss = F.cross_entropy(logits.view(-1, c["num_labels"]), labels.view(-1))
            return loss, logits
        dense, ln, bias = self.mlm_parts()
        t = ln(self.mlm_act(dense(h)).to(ln.weight.dtype))  # f32 LayerNorm under autocast, as coretrain
        wte = getattr(self, self.base_name).embeddings.word_embeddings.weight
        logits = F.linear(t, wte, bias)  # the tied decoder, every position (as HF)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, c["vocab_size"]), labels.view(-1))
        return loss, logits


# ----------------------------------------------------------------------------------------------------------
# safetensors, by hand: u64 LE header length, JSON header, raw little-endian C-order bytes.

_DT_TO_ST = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int64: "I64",
             torch.int32: "I32", torch.float64: "F64", torch.uint8: "U8", torch.int8: "I8", torch.bool: "BOOL",
             torch.int16: "I16"}
_ST_TO_DT = {v: k for k, v in _DT_TO_ST.items()}


def _tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save_safetensors(path, tensors, metadata=None):
    header, blobs, pos = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _DT_TO_ST:
            raise ValueError(f"{name}: dtype {t.dtype} not supported")
        b = _tensor_bytes(t)
        header[name] = {"dtype": _DT_TO_ST[t.dtype], "shape": list(t.shape), "data_offsets": [pos, pos + len(b)]}
        blobs.append(b)
        pos += len(b)
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)  # keep the data 8-byte aligned, as the reference writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: truncated ({len(data)} bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"{path}: header length {n} exceeds file size {len(data)}")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    buf = data[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dt = _ST_TO_DT[info["dtype"]]
        raw = buf[begin:end]
        if dt == torch.bfloat16:
            t = torch.from_numpy(np.frombuffer(raw, dtype=np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.frombuffer(raw, dtype=torch.empty(0, dtype=dt).numpy().dtype).copy())
        out[name] = t.reshape(info["shape"])
    return out, meta


if __name__ == "__main__":
    # Smoke check: build both tiny models, run a forward/backward, print parameter names.
    for cfg in ({"model_type": "bert", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "intermediate_size": 64},
                {"model_type": "distilbert", "vocab_size": 64, "dim": 32, "n_layers": 2, "n_heads": 4,
                 "hidden_dim": 64}):
        m = model_from_config(cfg)
        ids = torch.randint(0, 64, (2, 8))
        loss, s, e = m(ids, torch.ones_like(ids), None, torch.tensor([1, 9]), torch.tensor([2, -3]))
        loss.backward()
        print(cfg["model_type"], float(loss), [n for n, _ in m.named_parameters()][:6], "...")

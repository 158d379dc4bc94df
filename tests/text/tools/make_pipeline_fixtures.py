#!/usr/bin/env python3
"""Writes the synthetic tokenizer.json fixtures of tests/text/data/tokenizers/ (deterministic):
bert.json (WordPiece on the hf_golden vocab, BertProcessing), unigram_nmt.json (XLM-R shape: SentencePiece's
real nmt_nfkc precompiled_charsmap, Metaspace, Unigram) and unigram_plain.json (Metaspace Unigram with byte
fallback and no charsmap). The Unigram vocabularies are scored substrings of a small corpus, not trained models;
what is checked is that coretrain and HF agree on them.
  make_pipeline_fixtures.py <repo>/tests/text/data <spm_precompiled>/src/precompiled.json
(precompiled.json is in github.com/huggingface/spm_precompiled, Apache-2.0.)"""
import collections
import json
import math
import sys

data_dir, charsmap_path = sys.argv[1], sys.argv[2]
golden = json.load(open(f"{data_dir}/hf_golden.json"))
charsmap = json.load(open(charsmap_path))["precompiled_charsmap"]

CORPUS = golden["strings"] + [
    "the quick brown fox jumps over the lazy dog", "tokenization of text into subword units",
    "machine learning models are trained on large corpora", "question answering with context windows",
    "le chat est sur la table", "der Hund läuft im Park", "el niño come una manzana", "Привет мир как дела",
    "学习 机器 数据 模型", "こんにちは 世界", "안녕하세요", "مرحبا بالعالم", "नमस्ते दुनिया",
] * 3


def unigram_vocab(specials, max_pieces, extra_pieces=()):
    counts = collections.Counter()
    for line in CORPUS:
        for word in line.replace("\u2581", " ").split():
            w = "\u2581" + word
            for i in range(len(w)):
                for j in range(i + 1, min(len(w), i + 8) + 1):
                    counts[w[i:j]] += 1
    pieces = [p for p, c in counts.most_common() if c >= 2][:max_pieces]
    total = sum(counts[p] for p in pieces)
    vocab = [[s, 0.0] for s in specials]
    seen = set(specials)
    for p in list(extra_pieces) + pieces:
        if p in seen:
            continue
        seen.add(p)
        score = -10.0 if p in extra_pieces else round(math.log(counts[p] / total), 6)
        vocab.append([p, score])
    return vocab


def added(content, id_, **kw):
    t = dict(id=id_, content=content, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)
    t.update(kw)
    return t


def template(cls, sep, pair_sep_twice, pair_type):
    single = [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
              {"SpecialToken": {"id": sep, "type_id": 0}}]
    pair = single + ([{"SpecialToken": {"id": sep, "type_id": pair_type}}] if pair_sep_twice else []) + [
        {"Sequence": {"id": "B", "type_id": pair_type}}, {"SpecialToken": {"id": sep, "type_id": pair_type}}]
    return single, pair


def write(name, obj):
    with open(f"{data_dir}/tokenizers/{name}", "w") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))


# XLM-R shape (transformers' current SpmConverter output).
vocab = unigram_vocab(["<s>", "<pad>", "</s>", "<unk>"], 4000)
vocab.append(["<mask>", 0.0])
ids = {p: i for i, (p, _) in enumerate(vocab)}
single, pair = template("<s>", "</s>", True, 0)
write("unigram_nmt.json", {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [added("<s>", 0), added("<pad>", 1), added("</s>", 2), added("<unk>", 3),
                     added("<mask>", ids["<mask>"], lstrip=True)],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Precompiled", "precompiled_charsmap": charsmap},
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]},
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "post_processor": {"type": "TemplateProcessing", "single": single, "pair": pair,
                       "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                                         "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
    "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
})

# Metaspace Unigram with byte fallback, no charsmap; DeBERTa-v3-like template with type ids 1 for B.
byte_pieces = [f"<0x{b:02X}>" for b in range(256)]
vocab = unigram_vocab(["[PAD]", "[CLS]", "[SEP]", "[UNK]"], 1500, byte_pieces)
vocab.append(["[MASK]", 0.0])
ids = {p: i for i, (p, _) in enumerate(vocab)}
single, pair = template("[CLS]", "[SEP]", False, 1)
write("unigram_plain.json", {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [added("[PAD]", 0), added("[CLS]", 1), added("[SEP]", 2), added("[UNK]", 3),
                     added("[MASK]", ids["[MASK]"])],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": True}, {"type": "NFKC"}, {"type": "Lowercase"},
        {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}]},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Punctuation", "behavior": "Isolated"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]},
    "post_processor": {"type": "TemplateProcessing", "single": single, "pair": pair,
                       "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                                         "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}]},
    "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": True},
})

# BERT: the WordPiece vocab of hf_golden.json with BertProcessing.
wp = {t: i for i, t in enumerate(golden["vocab"])}
write("bert.json", {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [added(t, wp[t]) for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
                   "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", wp["[SEP]"]], "cls": ["[CLS]", wp["[CLS]"]]},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": wp},
})

#!/usr/bin/python3
"""Task-shaped inputs for `coretrain bench tokenize --task ...`: English-like text (bench/tokenize_vs_hf.py's
generator: Zipf-drawn words of a 30,522-entry WordPiece vocabulary, made-up out-of-vocabulary words, digits,
punctuation, capitals and accents, so every tokenizer kind normalizes, pre-tokenizes and splits words into pieces)
at each task's lengths, written in the files `coretrain bench tokenize` and bench/tokenize_tasks_vs_hf.js read.
Used by bench/tokenize_tasks_vs_hf.py (coretrain vs HF) and bench/feature_share.py (feature build vs training).

THE LENGTHS AND WHERE THEY COME FROM (modelled; nothing here can read the datasets, there is no network). Lengths
in words; a WordPiece tokenizer gives ~1.2-1.3 pieces per word on this text.
  qa    SQuAD v1.1: bench/squad_shaped_data.py's model (contexts LogNormal(median 137, sigma 0.426) BERT wordpieces
        clipped to [25, 800], questions LogNormal(11.9, 0.312) clipped to [4, 40], 4.6 questions per paragraph;
        87,599 questions on 18,896 paragraphs), divided by 1.25 wordpieces per word.
  glue  MRPC: bench/tasks_vs_torch.py's model (sentence1 LogNormal(median 24, sigma 0.27) wordpieces clipped to
        [6, 48], sentence2 = sentence1 x LogNormal(0, 0.15)), divided by 1.15 wordpieces per word; GLUE's MRPC
        train split has 3,668 pairs.
  ner   CoNLL-2003: bench/tasks_vs_torch.py's model in words (25% Uniform{1..6}, 75% LogNormal(median 16,
        sigma 0.5) clipped to [3, 113]); 14,041 train sentences; punctuation as tokens of their own, as CoNLL's.
  swag  SWAG (Zellers et al. 2018; 73,546 train examples): sent1 LogNormal(median 13, sigma 0.4) words, sent2
        (the ending's first words) LogNormal(4, 0.5), each ending LogNormal(8, 0.45), clipped to [1, 60]: quoted
        from memory of the dataset viewer, NOT verified.
  mlm   wikitext-2-raw-v1's train split (run_mlm's usual example: 36,718 lines, ~2.09 M words, ~10.9 MB; Merity et
        al. 2016 and the HF dataset card, from memory): a third of the lines empty, 1 in 12 a " = Heading = " line,
        the rest paragraphs of LogNormal(median 90, sigma 0.8) words clipped to [5, 700], up to --mb megabytes.
"""

import json
import math
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import squad_shaped_data as SD  # noqa: E402  (SQuAD's length model)
import tokenize_vs_hf as TV  # noqa: E402  (the vocabulary, the text generator, BERT's tokenizer files)

SIZES = dict(qa=87599, glue=3668, ner=14041, swag=73546)  # train examples of SQuAD v1.1, MRPC, CoNLL-2003, SWAG


def lognormal_int(rng, median, sigma, lo, hi):
    return min(hi, max(lo, round(rng.lognormvariate(math.log(median), sigma))))


class Corpus:
    """The WordPiece vocabulary and an English-like text generator over it (same seed: same vocab and text)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.vocab, words = TV.make_vocab(self.rng)
        self.gen = TV.TextGen(self.rng, words)

    def write_wordpiece(self, folder):
        """bert-base-uncased's tokenizer.json settings over this vocab, plus config.json (model_type bert)."""
        os.makedirs(folder, exist_ok=True)
        vocab_path = os.path.join(folder, "vocab.txt")
        with open(vocab_path, "w", encoding="utf-8") as f:
            f.write("\n".join(self.vocab) + "\n")
        TV.write_tokenizer_files(folder, vocab_path)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"model_type": "bert"}, f)

    def words(self, n):
        """n CoNLL-style tokens: words, with punctuation as tokens of their own."""
        out = []
        for _ in range(n):
            out.append(self.rng.choice(TV.PUNCT[:6]) if self.rng.random() < 0.1 else self.gen.word())
        return out

    def squad(self, path, questions):
        rng, data, qid = self.rng, [], 0
        while qid < questions:
            paragraphs = []
            for _ in range(10):
                pieces = lognormal_int(rng, SD.CONTEXT_MEDIAN, SD.CONTEXT_SIGMA, SD.CONTEXT_MIN, SD.CONTEXT_MAX)
                context = self.gen.text(max(5, round(pieces / 1.25)))
                tokens = context.split(" ")
                n_q = rng.choices([q for q, _ in SD.QUESTIONS_PER_PARAGRAPH],
                                  weights=[w for _, w in SD.QUESTIONS_PER_PARAGRAPH])[0]
                qas = []
                for _ in range(min(n_q, questions - qid)):
                    i, k = rng.randrange(len(tokens)), rng.randint(1, 4)
                    answer = " ".join(tokens[i:i + k])
                    start = len(" ".join(tokens[:i])) + (1 if i > 0 else 0)
                    q_pieces = lognormal_int(rng, SD.QUESTION_MEDIAN, SD.QUESTION_SIGMA, SD.QUESTION_MIN,
                                             SD.QUESTION_MAX)
                    qas.append({"id": f"q{qid}", "question": self.gen.sentence(max(2, round(q_pieces / 1.25))) + "?",
                                "answers": [{"text": answer, "answer_start": start}]})
                    qid += 1
                if qas:
                    paragraphs.append({"context": context, "qas": qas})
            data.append({"title": f"article_{len(data)}", "paragraphs": paragraphs})
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": data}, f, ensure_ascii=False)

    def glue(self, path, n):
        rng = self.rng
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(n):
                p1 = lognormal_int(rng, 24.0, 0.27, 6, 48)
                p2 = min(48, max(6, round(p1 * rng.lognormvariate(0.0, 0.15))))
                s1 = self.gen.sentence(max(2, round(p1 / 1.15))) + "."
                s2 = self.gen.sentence(max(2, round(p2 / 1.15))) + "."
                f.write(json.dumps({"sentence1": s1, "sentence2": s2, "label": rng.randrange(2)},
                                   ensure_ascii=False) + "\n")

    def ner(self, path, n):
        rng = self.rng
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(n):
                w = rng.randint(1, 6) if rng.random() < 0.25 else lognormal_int(rng, 16.0, 0.5, 3, 113)
                toks = self.words(w)
                f.write(json.dumps({"tokens": toks, "ner_tags": [0] * len(toks)}, ensure_ascii=False) + "\n")

    def swag(self, path, n):
        rng = self.rng
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(n):
                row = {"sent1": self.gen.sentence(lognormal_int(rng, 13, 0.4, 2, 60)) + ".",
                       "sent2": self.gen.sentence(lognormal_int(rng, 4, 0.5, 1, 60))}
                for c in range(4):
                    row[f"ending{c}"] = " ".join(self.words(lognormal_int(rng, 8, 0.45, 1, 60))) + "."
                row["label"] = rng.randrange(4)
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    def mlm(self, path, mb):
        rng, size = self.rng, 0
        with open(path, "w", encoding="utf-8") as f:
            while size < mb * 1e6:
                r = rng.random()
                if r < 1 / 3:
                    line = ""
                elif r < 1 / 3 + 1 / 12:
                    line = " = " + self.gen.sentence(rng.randint(1, 5)) + " = "
                else:
                    line = " " + self.gen.text(lognormal_int(rng, 90, 0.8, 5, 700)) + " "
                f.write(line + "\n")
                size += len(line.encode("utf-8")) + 1


def write_task(corpus, task, path, n=None, mb=10.0):
    """The task's file at `path`: n examples (default: the dataset's train size), or mb megabytes for mlm."""
    if task == "mlm":
        corpus.mlm(path, mb)
    else:
        getattr(corpus, {"qa": "squad"}.get(task, task))(path, n or SIZES[task])
    return path

#!/usr/bin/python3
"""SQuAD-v1.1-shaped question answering data whose feature lengths follow SQuAD v1.1's, without SQuAD.

    /usr/bin/python3 bench/squad_shaped_data.py --out DIR [--train_paragraphs 400] [--eval_paragraphs 40] [--seed 42]
    /usr/bin/python3 bench/squad_shaped_data.py --stats_only --train_paragraphs 20000   # only the length statistics

writes
    DIR/train.json, DIR/dev.json      SQuAD v1.1 JSON ({"version","data":[{"title","paragraphs":[{"context","qas"}]}]}),
                                      what `coretrain qa --train_file/--validation_file` (and HF's run_qa) read
    DIR/tokenizer/vocab.txt (+ tokenizer_config.json, special_tokens_map.json)
                                      a BERT WordPiece vocab (default 30,522 entries, BERT-base's size) in which
                                      every generated word is one whole entry, so each word is exactly one wordpiece
                                      and the generator controls every length exactly
    DIR/train_features.json, DIR/dev_features.json
                                      sidecars: every feature's input_ids, context start and answer positions, made
                                      by the same windowing as run_qa / coretrain (max_seq_length 384, doc_stride 128)
                                      so a peer (bench/e2e_vs_torch.py's PyTorch side) can train on the very same
                                      features; the feature count is checked against coretrain's train_samples
and prints the feature-length histogram, mean, percentiles and the fraction of multi-window questions.

Why generated: this machine has no network, so SQuAD itself cannot be downloaded. What matters for throughput is
only how many tokens each feature has (attention and every matmul scale with it, and dynamic padding pads to the
longest feature of a batch), so the data reproduces SQuAD v1.1's length distribution and nothing else.

THE DISTRIBUTION AND WHERE IT COMES FROM (be aware: modelled, not measured here)
  Lengths are in BERT-uncased wordpieces. The parameters are fitted to summary statistics of SQuAD v1.1 as they are
  commonly published, quoted from memory and NOT re-measured on the data here (there is no copy of SQuAD offline):
    - Rajpurkar et al. 2016 (SQuAD, arXiv:1606.05250): 107,785 questions on 23,215 paragraphs of 536 Wikipedia
      articles; v1.1 train 87,599 questions / 18,896 paragraphs (4.6 questions per paragraph, crowdworkers wrote up
      to 5), dev 10,570; paragraphs of ~120 words on average with a long tail (the longest ~650+ words), questions of
      ~10-11 words, answers ~3 words.
    - BERT's uncased WordPiece gives ~1.25 wordpieces per word on Wikipedia text: paragraphs ~150 wordpieces mean,
      questions ~12-13 (the "?" is a token of its own).
    - HF run_qa.py with bert-base-uncased at max_seq_length 384 / doc_stride 128 turns the 87,599 training questions
      into ~88.5k features (88,524 in HF's training logs, also from memory): ~1% of questions have a paragraph that
      does not fit one window (context > 384 - question - 3 ~ 369 wordpieces), nearly all of them 2 windows.
  Model (all lengths rounded to integers):
    context wordpieces   C ~ LogNormal(median 137, sigma 0.426), clipped to [25, 800]
                         -> mean ~150, sd ~67, P(C > 369) ~ 1.0% (the two anchors: mean 150 and the ~1% overflow)
    question wordpieces  Q ~ LogNormal(median 11.9, sigma 0.312), clipped to [4, 40] -> mean ~12.5, sd ~4
    questions per paragraph: 5 (70%), 4 (16%), 3 (8%), 2 (3%), 6 (3%) -> mean 4.62 (v1.1 train: 4.64)
    answers: 1-5 words at a uniform position (they do not change any length; they only make valid labels)
  Feature length (run_qa / coretrain windowing): Q + C + 3 when it fits 384, else windows of W = 384 - Q - 3
  context tokens advancing by W - 128, the last one shorter. `--stats_only` prints what this model gives
  (mean feature length ~166, ~1% of questions with 2+ windows); change the parameters with --context_median /
  --context_sigma / --question_median / --question_sigma if real SQuAD statistics are at hand.

Text: words are made-up lowercase syllable strings ("bato", "kelumi", ...), each a whole vocab entry; sentences
of 8-30 words end with "." (a token of its own under BERT's punctuation split), questions end with "?". The vocab
is fixed (independent of --seed); the text is deterministic for a given --seed.
"""

import argparse
import bisect
import json
import math
import os
import random

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD_ID, UNK_ID, CLS_ID, SEP_ID = 0, 1, 2, 3
PUNCT = [".", "?", ","]

# Defaults of the length model (see the header for where they come from).
CONTEXT_MEDIAN, CONTEXT_SIGMA, CONTEXT_MIN, CONTEXT_MAX = 137.0, 0.426, 25, 800
QUESTION_MEDIAN, QUESTION_SIGMA, QUESTION_MIN, QUESTION_MAX = 11.9, 0.312, 4, 40
QUESTIONS_PER_PARAGRAPH = [(5, 0.70), (4, 0.16), (3, 0.08), (2, 0.03), (6, 0.03)]


def build_vocab(size):
    """SPECIALS, punctuation, then made-up words: every 2-syllable word, then 3-syllable ones in a fixed shuffled
    order, up to `size` entries. Only [a-z] letters, so BERT's normalizer and pre-tokenizer leave a word whole,
    and WordPiece's longest-match-first takes the whole word as one token."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    syll = [c + v for c in consonants for v in vowels]  # 70 syllables
    two = [a + b for a in syll for b in syll]  # 4,900 words
    three = [a + b + c for a in syll for b in syll for c in syll]  # 343,000 words
    random.Random(1234).shuffle(three)  # fixed: the vocab does not depend on --seed
    vocab = SPECIALS + PUNCT + two
    need = size - len(vocab)
    if need < 0:
        raise SystemExit(f"--vocab_size {size} is too small (at least {len(vocab)})")
    vocab += three[:need]
    return vocab


def write_tokenizer(folder, vocab):
    """An HF BERT tokenizer folder (vocab.txt + tokenizer_config.json) that coretrain and HF's BertTokenizer read."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(dict(tokenizer_class="BertTokenizer", do_lower_case=True, model_max_length=512,
                       cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]",
                       mask_token="[MASK]"), f, indent=2)
    with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump(dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]",
                       mask_token="[MASK]"), f, indent=2)


class LengthModel:
    def __init__(self, a):
        self.a = a

    def context(self, rng):
        a = self.a
        return min(CONTEXT_MAX, max(CONTEXT_MIN, round(rng.lognormvariate(math.log(a.context_median),
                                                                           a.context_sigma))))

    def question(self, rng):
        a = self.a
        return min(QUESTION_MAX, max(QUESTION_MIN, round(rng.lognormvariate(math.log(a.question_median),
                                                                            a.question_sigma))))

    def questions_per_paragraph(self, rng):
        r, acc = rng.random(), 0.0
        for k, p in QUESTIONS_PER_PARAGRAPH:
            acc += p
            if r < acc:
                return k
        return QUESTIONS_PER_PARAGRAPH[0][0]


def windows(q, c, max_seq_length, doc_stride):
    """(begin, length) of each context window: coretrain's FeatureSet::build (src/tasks/question_answering/qa_features.cpp), which is
    run_qa's tokenizer(..., truncation="only_second", stride=doc_stride, return_overflowing_tokens=True)."""
    budget, step = c, max(c, 1)
    if q + c + 3 > max_seq_length:
        budget = max_seq_length - q - 3
        if budget <= doc_stride:
            raise SystemExit(f"question of {q} tokens leaves no room for a window of more than {doc_stride}")
        step = budget - doc_stride
    out, start = [], 0
    while True:
        stop = min(start + budget, c)
        out.append((start, stop - start))
        if stop >= c:
            return out
        start += step


def make_tokens(rng, n, words, end):
    """n token strings: words in sentences of 8-30 words, each sentence closed by "." (the last by `end`)."""
    toks, left = [], rng.randint(8, 30)
    for i in range(n):
        if i == n - 1:
            toks.append(end)
        elif left == 0:  # never right after punctuation: `left` is reset to >= 8 by each "."
            toks.append(".")
            left = rng.randint(8, 30)
        else:
            toks.append(words[rng.randrange(len(words))])
            left -= 1
    return toks


def detokenize(toks):
    """Text of the tokens and each token's [begin, end) character span: words joined by spaces, punctuation glued
    to the word before it (BERT's pre-tokenizer splits it off again, so the token list round-trips)."""
    text, spans = "", []
    for t in toks:
        if text and t not in PUNCT:
            text += " "
        spans.append((len(text), len(text) + len(t)))
        text += t
    return text, spans


def generate(a, n_paragraphs, split, seed, vocab_ids, words, lengths):
    """Paragraphs of `split` and their features. Returns (squad_json, features, per-question window counts,
    question + context tokens summed over questions: what `coretrain bench tokenize` reports as "tokens")."""
    rng = random.Random(f"{seed}/{split}")  # str seeds are hashed deterministically (sha512), not by hash()
    data, feats, n_windows, qc_tokens = [], [], [], 0
    for p in range(n_paragraphs):
        c = lengths.context(rng)
        ctoks = make_tokens(rng, c, words, ".")
        context, spans = detokenize(ctoks)
        cids = [vocab_ids[t] for t in ctoks]
        qas = []
        for k in range(lengths.questions_per_paragraph(rng)):
            q = lengths.question(rng)
            qtoks = [words[rng.randrange(len(words))] for _ in range(q - 1)] + ["?"]
            qid = f"{split}-{p}-{k}"
            # The answer: 1-5 consecutive context tokens (not starting on punctuation).
            alen = min(c, rng.randint(1, 5))
            ab = rng.randrange(c - alen + 1)
            while ctoks[ab] in PUNCT and ab > 0:
                ab -= 1
            ae = ab + alen - 1  # inclusive token index
            s_char, e_char = spans[ab][0], spans[ae][1]
            qas.append(dict(id=qid, question=detokenize(qtoks)[0],
                            answers=[dict(text=context[s_char:e_char], answer_start=s_char)]))
            qids = [vocab_ids[t] for t in qtoks]
            ws = windows(q, c, a.max_seq_length, a.doc_stride)
            qc_tokens += q + c
            n_windows.append(len(ws))
            for begin, n in ws:
                # Labels as coretrain's label() / run_qa: the answer's tokens when the window holds all of it,
                # else [CLS] (0).
                sp = ep = 0
                if begin <= ab and ae < begin + n:
                    sp, ep = q + 2 + ab - begin, q + 2 + ae - begin
                feats.append(dict(example_id=qid, input_ids=[CLS_ID] + qids + [SEP_ID] + cids[begin:begin + n]
                                  + [SEP_ID], context_start=q + 2, start_position=sp, end_position=ep))
        data.append(dict(title=f"{split}-{p}", paragraphs=[dict(context=context, qas=qas)]))
    return dict(version="1.1", data=data), feats, n_windows, qc_tokens


def percentile(sorted_vals, p):
    if not sorted_vals:
        return 0
    k = min(len(sorted_vals) - 1, max(0, math.ceil(p / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def length_stats(feats, n_windows, max_seq_length):
    """Summary of feature lengths: dict for JSON and a printable text (histogram in 32-token bins)."""
    lens = sorted(len(f["input_ids"]) for f in feats)
    n = len(lens)
    mean = sum(lens) / max(1, n)
    multi = sum(1 for w in n_windows if w > 1)
    st = dict(features=n, questions=len(n_windows), mean=mean,
              p10=percentile(lens, 10), p25=percentile(lens, 25), p50=percentile(lens, 50),
              p75=percentile(lens, 75), p90=percentile(lens, 90), p99=percentile(lens, 99), max=lens[-1] if lens else 0,
              multi_window_fraction=multi / max(1, len(n_windows)), features_per_question=n / max(1, len(n_windows)),
              useful_fraction_at_max=mean / max_seq_length)
    lines = [f"  {n} features from {len(n_windows)} questions ({st['features_per_question']:.4f} per question; "
             f"{100 * st['multi_window_fraction']:.2f}% of questions have 2+ windows, max "
             f"{max(n_windows) if n_windows else 0} windows)",
             f"  feature length (question + context window + 3): mean {mean:.1f}, p10 {st['p10']}, p25 {st['p25']}, "
             f"median {st['p50']}, p75 {st['p75']}, p90 {st['p90']}, p99 {st['p99']}, max {st['max']}",
             f"  padding every feature to {max_seq_length} computes {max_seq_length / mean:.2f}x the real tokens "
             f"({100 * mean / max_seq_length:.1f}% of the padded tokens are real)"]
    edges = list(range(0, max_seq_length, 32)) + [max_seq_length]
    counts = [0] * (len(edges) - 1)
    for v in lens:
        counts[min(len(counts) - 1, bisect.bisect_left(edges, v) - 1)] += 1
    top = max(counts) if counts else 1
    for i, cnt in enumerate(counts):
        bar = "#" * round(50 * cnt / top) if top else ""
        lines.append(f"  {edges[i] + 1:4d}-{edges[i + 1]:4d} {100 * cnt / max(1, n):5.1f}% {bar}")
    return st, "\n".join(lines)


def add_args(ap):
    ap.add_argument("--train_paragraphs", type=int, default=400)
    ap.add_argument("--eval_paragraphs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--vocab_size", type=int, default=30522)
    ap.add_argument("--max_seq_length", type=int, default=384)
    ap.add_argument("--doc_stride", type=int, default=128)
    ap.add_argument("--context_median", type=float, default=CONTEXT_MEDIAN)
    ap.add_argument("--context_sigma", type=float, default=CONTEXT_SIGMA)
    ap.add_argument("--question_median", type=float, default=QUESTION_MEDIAN)
    ap.add_argument("--question_sigma", type=float, default=QUESTION_SIGMA)


def write_dataset(a, out, quiet=False):
    """Writes everything into `out`; returns paths and the statistics of both splits."""
    vocab = build_vocab(a.vocab_size)
    vocab_ids = {t: i for i, t in enumerate(vocab)}
    words = vocab[len(SPECIALS) + len(PUNCT):]
    lengths = LengthModel(a)
    os.makedirs(out, exist_ok=True)
    tok = os.path.join(out, "tokenizer")
    write_tokenizer(tok, vocab)
    res = dict(tokenizer=tok, stats={})
    for split, n, name in (("train", a.train_paragraphs, "train"), ("eval", a.eval_paragraphs, "dev")):
        squad, feats, nw, qc_tokens = generate(a, n, split, a.seed, vocab_ids, words, lengths)
        path = os.path.join(out, f"{name}.json")
        with open(path, "w") as f:
            json.dump(squad, f)
        side = os.path.join(out, f"{name}_features.json")
        with open(side, "w") as f:
            json.dump(dict(max_seq_length=a.max_seq_length, doc_stride=a.doc_stride, seed=a.seed,
                           question_context_tokens=qc_tokens, features=feats), f, separators=(",", ":"))
        st, text = length_stats(feats, nw, a.max_seq_length)
        res[split] = path
        res[split + "_features"] = side
        st["question_context_tokens"] = qc_tokens
        res["stats"][split] = st
        if not quiet:
            print(f"{split} ({path}):\n{text}", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output folder (required unless --stats_only)")
    ap.add_argument("--stats_only", action="store_true",
                    help="generate --train_paragraphs paragraphs in memory and print their length statistics")
    add_args(ap)
    a = ap.parse_args()
    if a.stats_only:
        vocab = build_vocab(a.vocab_size)
        _, feats, nw, _ = generate(a, a.train_paragraphs, "train", a.seed, {t: i for i, t in enumerate(vocab)},
                                vocab[len(SPECIALS) + len(PUNCT):], LengthModel(a))
        print(f"SQuAD-shaped lengths, {a.train_paragraphs} paragraphs, max_seq_length {a.max_seq_length}, "
              f"doc_stride {a.doc_stride}:\n" + length_stats(feats, nw, a.max_seq_length)[1])
        return
    if not a.out:
        ap.error("--out is required (or --stats_only)")
    write_dataset(a, a.out)


if __name__ == "__main__":
    main()

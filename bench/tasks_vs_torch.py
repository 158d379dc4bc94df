#!/usr/bin/python3
"""`coretrain glue` (MRPC- and SST-2-shaped) and `coretrain ner` (CoNLL-2003-shaped) end to end against PyTorch.

    /usr/bin/python3 bench/tasks_vs_torch.py --threads 2          # BERT-base (12 x 768, 12 heads, 3072, 30522)
    /usr/bin/python3 bench/tasks_vs_torch.py --quick              # tiny model, few steps: < 1 minute, a smoke test
    options: --tasks mrpc,sst2,ner  --coretrain PATH  --batch B  --steps S  --eval_batch E  --eval_rows N
             --train_rows N  --threads N  --keep  --workdir DIR  --check_only

(/usr/bin/python3: Debian's python3 with python3-torch 1.13, no transformers; without torch the script exits 77,
CTest's "skipped".) Modelled on bench/e2e_vs_torch.py (qa), whose sampler re-implementation, `coretrain bench
matmul` reader and table helpers it imports. Issue 19's speed targets (BERT-base, 2 threads): glue with
`--pad_to_max_length False` >= 3x PyTorch padded to 128 (run_glue's default) and >= 1.5x PyTorch with dynamic
padding (DataCollatorWithPadding); ner >= 2x PyTorch with HF's dynamic padding (run_ner's default).

What it does, per task, in order:
 1. writes the data (below): train.csv / dev.csv (glue: sentence1,sentence2,label or sentence,label) or
    train.json / dev.json (ner: JSON lines {"tokens": [...], "ner_tags": [...]}), and, for the PyTorch side, every
    row's token ids, token types and labels as this script computes them ([CLS] a [SEP] (b [SEP]); every word is
    one wordpiece, so the ids follow from the words).
 2. writes a model folder: config.json (BERT-base, or tiny with --quick; BertForSequenceClassification with 2 labels,
    BertForTokenClassification with CoNLL's 9 tags), model.safetensors (scripts/torch_reference.py's TaskModel,
    random init, seed --seed, HF's tensor names, written by its dependency-free safetensors writer), and a BERT
    WordPiece tokenizer (tokenizer.json + vocab.txt + tokenizer_config.json) whose vocab holds every generated word
    whole (bench/squad_shaped_data.py's vocab: made-up [a-z] words, 30,522 entries).
 3. checks that coretrain tokenizes exactly as step 1 assumed: `coretrain tokenize --tokenizer_name MODEL` on every
    train and dev row (pairs as text/text_pair, ner as --is_split_into_words) must give the very same ids, else the
    script fails. After coretrain's run, its train_samples / eval_samples must equal the row counts.
 4. coretrain (OMP_NUM_THREADS = --threads):
        coretrain glue --model_name_or_path MODEL --train_file train.csv --validation_file dev.csv --do_train
          --do_eval --pad_to_max_length False --max_seq_length 128 --per_device_train_batch_size B
          --per_device_eval_batch_size E --max_steps S --weight_decay 0.01 --save_strategy no --seed 42 ...
        coretrain ner  --model_name_or_path MODEL --train_file train.json --validation_file dev.json (same flags;
          its default is dynamic padding, --max_seq_length unset as run_ner's)
    train features/s = train_samples_per_second of train_results.json (HF's: S * B / train_runtime, the first step
    included); eval features/s = eval_samples_per_second of eval_results.json.
 5. PyTorch, a separate process, torch.set_num_threads(--threads): scripts/torch_reference.py's TaskModel
    (seq-cls / token-cls head) loaded from the same model.safetensors, AdamW (lr 5e-5, HF's no-decay groups: bias
    and LayerNorm weights without decay, 0.01 on the rest), linear decay to 0 over S steps, clip_grad_norm_(1.0),
    dropout on (model.train()). Training runs the very same S batches coretrain runs, in coretrain's sampler order
    (its seeded Philox Fisher-Yates permutation, epoch 0: bench/e2e_vs_torch.py's coretrain_permutation), in:
        pad 128   every batch padded to max_seq_length (glue only: run_glue's default --pad_to_max_length True)
        dynamic   every batch padded to its longest row (DataCollatorWithPadding /
                  DataCollatorForTokenClassification, labels padded with -100)
    timed like HF's train_runtime: all S steps including the first, collation (python lists -> tensors) included.
    Eval: every dev row in order, batches of E, under torch.no_grad(), the logits taken to numpy as HF's loop
    gathers them; pad 128 and dynamic for glue, dynamic for ner.
 6. prints, per task, a table: features/s of each side, ratios against both PyTorch modes, the targets; and the
    machine (lscpu model, ISA flags), the f32 matmul peak (`coretrain bench matmul`) and the load average.

ner and padding to a fixed length: run_ner's --pad_to_max_length pads to --max_seq_length, which it leaves unset
(the tokenizer's model_max_length, 512 for BERT), so "padded" ner is not a default anyone runs; ner is compared with
dynamic padding only, the issue's target.

THE LENGTH DISTRIBUTIONS AND WHERE THEY COME FROM (modelled, not measured here: there is no network, so none of the
datasets can be read). Lengths below are BERT (uncased) wordpieces without [CLS]/[SEP]; what matters for speed is
only how many tokens each row has, so the generator reproduces lengths and nothing else.
  Sizes (found with the `search` tool): MRPC 5,801 pairs, 4,076 train / 1,725 test (ACL wiki "Paraphrase
  Identification (State of the art)", after Dolan, Quirk & Brockett 2004; Dolan & Brockett 2005, IWP, I05-5002),
  GLUE's MRPC split 3,668 train / 408 dev; SST: 11,855 sentences of movie reviews, 215,154 unique phrases (SST
  dataset card / Socher et al. 2013), GLUE's SST-2 67,349 train rows (sentences AND phrases) / 872 dev (whole
  sentences); CoNLL-2003 English 14,041 / 3,250 / 3,453 sentences (HF dataset cards tner/conll2003 and
  tomaarsen/conll2003; TFDS lists 14,042 / 3,251 / 3,454). No page found by search gave token-length statistics
  for any of the three, so the lengths are these assumptions, quoted from memory and NOT verified:
  - MRPC: news sentences of ~22 words, ~1.15 wordpieces per word; pairs average ~53 tokens with [CLS]/[SEP]s
    (HF course, chapter 3 "dynamic padding": the first 8 MRPC training pairs under bert-base-uncased have 50, 59,
    47, 67, 59, 50, 62 and 32 tokens, mean 53.3); the longest pairs ~100 tokens, so max_seq_length 128 truncates
    none. Model: sentence1 S1 ~ LogNormal(median 24, sigma 0.27) clipped to [6, 48]; sentence2 = S1 x
    LogNormal(0, 0.15) clipped likewise (paraphrase candidates have similar lengths); pair = S1 + S2 + 3 <= 128.
    -> mean pair ~53, p90 ~68, max ~100.
  - SST-2: train rows are phrases of every size from the treebank as well as sentences: mean ~9.4 words (~13
    tokens with [CLS]/[SEP]), heavily skewed to short rows; dev rows are whole sentences, mean ~19 words (~23-25
    tokens), the longest ~55 words (~66 tokens). Model: train W ~ LogNormal(median 7, sigma 0.75) clipped to [1, 60],
    dev W ~ LogNormal(median 19, sigma 0.45) clipped to [3, 60]; wordpieces = round(1.1 x W).
    -> train mean ~12.5 tokens with specials, dev mean ~25.
  - CoNLL-2003: Tjong Kim Sang & De Meulder 2003, Table 2 (from memory): train 203,621 tokens in 14,987 lines incl.
    946 -DOCSTART- lines -> 14.4 words per sentence; dev 51,362 / 3,466 incl. 216 -> 15.7. Many sentences are very
    short (datelines "LONDON 1996-08-30", sports scores, headlines), the longest ~113 words; BERT cased splits
    names and numbers, ~1.35 wordpieces per word. Model: words W = 25% Uniform{1..6}, 75% LogNormal(median 16,
    sigma 0.5) clipped to [3, 113] (mean ~14.5); wordpieces = round(1.35 x W), at least 1. The generated sentence
    has that many words, each one wordpiece, so the token count (what costs time) follows the model; labels sit on
    every word (run_ner labels only a word's first piece: the same number of tokens, only fewer labels).
  --stats prints the generated distributions; change the constants below if real statistics are at hand.

Like with like, and what is not:
  - Same rows, same token ids, same batches in the same order, same padding rule for "dynamic"; same weights at
    step 0 (one model.safetensors for both).
  - coretrain's train_runtime starts after the model and features exist, as HF's; PyTorch's clock starts at the
    first batch after the model and optimizer exist. Neither excludes a warm-up step.
  - coretrain's eval_runtime is its Trainer::evaluate clock (HF's Trainer.evaluate also times compute_metrics; not
    checked here whether coretrain's clock includes its seqeval / accuracy); PyTorch's covers the no_grad forward
    passes, collation and the host copy of the logits (no metric).
"""

import argparse
import importlib
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import e2e_vs_torch as E  # noqa: E402  (coretrain_permutation, run, matmul_peak, machine, verdict)
import squad_shaped_data as SD  # noqa: E402  (the one-wordpiece-per-word vocab)

from openblas_core import fix_openblas_core  # noqa: E402

SKIP = 77
CLS_ID, SEP_ID, PAD_ID = SD.CLS_ID, SD.SEP_ID, SD.PAD_ID
MAX_SEQ = 128
CONLL_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]

# The length models (see the header). Wordpieces without special tokens.
MRPC = dict(median=24.0, sigma=0.27, lo=6, hi=48, pair_sigma=0.15)
SST2_TRAIN = dict(median=7.0, sigma=0.75, lo=1, hi=60, pieces=1.1)
SST2_DEV = dict(median=19.0, sigma=0.45, lo=3, hi=60, pieces=1.1)
CONLL = dict(short_share=0.25, short_max=6, median=16.0, sigma=0.5, lo=3, hi=113, pieces=1.35)


def lognormal_int(rng, median, sigma, lo, hi):
    return min(hi, max(lo, round(rng.lognormvariate(math.log(median), sigma))))


# ------------------------------------------------------------------------------------------------------------
# Data. Every word is a whole vocab entry of bench/squad_shaped_data.py's vocab (made-up lowercase words), so a
# sentence of n words is n wordpieces and the ids are the words' vocab ids.


class Words:
    def __init__(self, vocab):
        self.words = [w for w in vocab if w.isalpha() and w.islower()]
        self.id = {w: i for i, w in enumerate(vocab)}

    def sentence(self, rng, n):
        return [self.words[rng.randrange(len(self.words))] for _ in range(n)]


def gen_mrpc(rng, words, n):
    rows = []
    for _ in range(n):
        s1 = lognormal_int(rng, MRPC["median"], MRPC["sigma"], MRPC["lo"], MRPC["hi"])
        s2 = min(MRPC["hi"], max(MRPC["lo"], round(s1 * rng.lognormvariate(0.0, MRPC["pair_sigma"]))))
        while s1 + s2 + 3 > MAX_SEQ:  # keep every pair whole: no truncation rule needed on either side
            s1, s2 = s1 - 1, s2 - 1
        rows.append(dict(a=words.sentence(rng, s1), b=words.sentence(rng, s2), label=rng.randrange(2)))
    return rows


def gen_sst2(rng, words, n, m):
    rows = []
    for _ in range(n):
        w = lognormal_int(rng, m["median"], m["sigma"], m["lo"], m["hi"])
        rows.append(dict(a=words.sentence(rng, min(MAX_SEQ - 2, max(1, round(m["pieces"] * w)))), b=None,
                         label=rng.randrange(2)))
    return rows


def gen_conll(rng, words, n):
    rows = []
    for i in range(n):
        if rng.random() < CONLL["short_share"]:
            w = rng.randint(1, CONLL["short_max"])
        else:
            w = lognormal_int(rng, CONLL["median"], CONLL["sigma"], CONLL["lo"], CONLL["hi"])
        k = max(1, round(CONLL["pieces"] * w))
        toks = words.sentence(rng, k)
        tags, j = [], 0
        while j < k:  # entities of 1-3 words (~17% of words in CoNLL are in an entity)
            if rng.random() < 0.1:
                typ = rng.choice(["PER", "ORG", "LOC", "MISC"])
                span = min(k - j, rng.randint(1, 3))
                tags += ["B-" + typ] + ["I-" + typ] * (span - 1)
                j += span
            else:
                tags.append("O")
                j += 1
        if i < len(CONLL_TAGS):  # every tag occurs in the file, so the label set is CoNLL's 9
            tags[0] = CONLL_TAGS[i]
        rows.append(dict(tokens=toks, tags=tags))
    return rows


def features(task, rows, words, label_id):
    """What coretrain's features are, computed from the words: ids, token types, labels (-100 off words)."""
    out = []
    for r in rows:
        if task == "ner":
            ids = [CLS_ID] + [words.id[w] for w in r["tokens"]] + [SEP_ID]
            labels = [-100] + [label_id[t] for t in r["tags"]] + [-100]
            out.append(dict(input_ids=ids, token_type_ids=[0] * len(ids), labels=labels))
        else:
            a = [CLS_ID] + [words.id[w] for w in r["a"]] + [SEP_ID]
            b = [] if r["b"] is None else [words.id[w] for w in r["b"]] + [SEP_ID]
            out.append(dict(input_ids=a + b, token_type_ids=[0] * len(a) + [1] * len(b), labels=r["label"]))
    return out


def write_rows(task, rows, path):
    if task == "ner":
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps({"tokens": r["tokens"], "ner_tags": r["tags"]}) + "\n")
        return
    with open(path, "w") as f:
        if task == "mrpc":
            f.write("sentence1,sentence2,label\n")
            for r in rows:
                f.write(f"{' '.join(r['a'])},{' '.join(r['b'])},{r['label']}\n")
        else:
            f.write("sentence,label\n")
            for r in rows:
                f.write(f"{' '.join(r['a'])},{r['label']}\n")


def length_stats(feats):
    ls = sorted(len(f["input_ids"]) for f in feats)
    n = len(ls)
    return dict(n=n, mean=sum(ls) / n, p50=ls[n // 2], p90=ls[min(n - 1, int(0.9 * n))], max=ls[-1], min=ls[0])


def fmt_stats(s):
    return (f"{s['n']} rows, tokens with [CLS]/[SEP]: mean {s['mean']:.1f}, median {s['p50']}, p90 {s['p90']}, "
            f"min {s['min']}, max {s['max']}")


# ------------------------------------------------------------------------------------------------------------
# The model folder: config, random-init weights under HF's names, the tokenizer.


def model_config(a, task):
    cfg = dict(model_type="bert", vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
               num_attention_heads=a.heads, intermediate_size=a.intermediate, max_position_embeddings=512,
               type_vocab_size=2, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
               initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0)
    if task == "ner":
        labels = sorted(CONLL_TAGS)  # coretrain's order without ClassLabel names: the sorted distinct tags
        cfg["architectures"] = ["BertForTokenClassification"]
    else:
        labels = ["0", "1"]
        cfg["architectures"] = ["BertForSequenceClassification"]
    cfg["id2label"] = {str(i): n for i, n in enumerate(labels)}
    cfg["label2id"] = {n: i for i, n in enumerate(labels)}
    return cfg, labels


def tokenizer_json(vocab):
    def added(i, t):
        return dict(id=i, content=t, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)

    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(i, t) for i, t in enumerate(SD.SPECIALS)],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", SEP_ID], "cls": ["[CLS]", CLS_ID]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {w: i for i, w in enumerate(vocab)}},
    }


def write_model(a, task, folder, vocab):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch_reference as R

    os.makedirs(folder, exist_ok=True)
    cfg, labels = model_config(a, task)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    SD.write_tokenizer(folder, vocab)  # vocab.txt, tokenizer_config.json, special_tokens_map.json
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab), f)
    torch.manual_seed(a.seed)
    model = R.TaskModel(cfg, "token-cls" if task == "ner" else "seq-cls")
    R.save_safetensors(os.path.join(folder, "model.safetensors"), dict(model.state_dict()), {"format": "pt"})
    return cfg, labels


# ------------------------------------------------------------------------------------------------------------
# The PyTorch side (a separate process: --torch-worker).


def collate(torch, feats, idx, T, token_labels):
    B = len(idx)
    ids = [[PAD_ID] * T for _ in range(B)]
    types = [[0] * T for _ in range(B)]
    mask = [[0] * T for _ in range(B)]
    labels = [[-100] * T for _ in range(B)] if token_labels else []
    for r, i in enumerate(idx):
        f = feats[i]
        n = len(f["input_ids"])
        ids[r][:n] = f["input_ids"]
        types[r][:n] = f["token_type_ids"]
        mask[r][:n] = [1] * n
        if token_labels:
            labels[r][:n] = f["labels"]
    if not token_labels:
        labels = [feats[i]["labels"] for i in idx]
    return torch.tensor(ids), torch.tensor(mask), torch.tensor(types), torch.tensor(labels)


def torch_worker(a):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch_reference as R

    torch.set_num_threads(a.threads)
    with open(a.config) as f:
        cfg = json.load(f)
    with open(a.features) as f:
        data = json.load(f)
    tf, ef, token_labels = data["train"], data["eval"], data["task"] == "ner"
    head = "token-cls" if token_labels else "seq-cls"
    weights, _ = R.load_safetensors(a.weights)
    order = E.coretrain_permutation(len(tf), a.seed)  # coretrain's epoch 0 (seed + 0)
    batches = [order[s * a.batch:(s + 1) * a.batch] for s in range(a.steps)]
    modes = a.modes.split(",")
    out = dict(torch=torch.__version__, threads=torch.get_num_threads())

    def pad_to(idx, feats, mode):
        return MAX_SEQ if mode == "pad128" else max(len(feats[i]["input_ids"]) for i in idx)

    def fresh_model():
        model = R.TaskModel(cfg, head)
        model.load_state_dict(weights)
        return model

    for mode in modes:
        torch.manual_seed(a.seed)
        model = fresh_model()
        model.train()
        named = list(model.named_parameters())
        decay = [p for n, p in named if not (n.endswith("bias") or "LayerNorm" in n)]
        no_decay = [p for n, p in named if n.endswith("bias") or "LayerNorm" in n]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=5e-5)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / a.steps))
        times, tokens = [], 0
        t_all = time.perf_counter()
        for s, idx in enumerate(batches):
            t0 = time.perf_counter()
            T = pad_to(idx, tf, mode)
            tokens += T * len(idx)
            ids, mask, types, labels = collate(torch, tf, idx, T, token_labels)
            loss, _ = model(ids, mask, types, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            times.append(time.perf_counter() - t0)
            print(f"  train {mode} step {s}: T {T}, {times[-1] * 1e3:.1f} ms, loss {float(loss):.4f}", flush=True)
        total = time.perf_counter() - t_all
        out[f"train_{mode}"] = dict(features_per_s=len(batches) * a.batch / total, runtime_s=total,
                                    step_ms=[round(t * 1e3, 1) for t in times], computed_tokens=tokens)
        del model, opt, sched

    for mode in modes:
        model = fresh_model()
        model.eval()
        t_all, tokens = time.perf_counter(), 0
        with torch.no_grad():
            for b0 in range(0, len(ef), a.eval_batch):
                idx = list(range(b0, min(len(ef), b0 + a.eval_batch)))
                T = pad_to(idx, ef, mode)
                tokens += T * len(idx)
                ids, mask, types, labels = collate(torch, ef, idx, T, token_labels)
                loss, logits = model(ids, mask, types, labels)
                logits.numpy()  # HF gathers the logits on the host
        total = time.perf_counter() - t_all
        out[f"eval_{mode}"] = dict(features_per_s=len(ef) / total, runtime_s=total, computed_tokens=tokens)
        print(f"  eval {mode}: {len(ef)} rows in {total:.2f} s", flush=True)
        del model
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("json: " + json.dumps(out), flush=True)


# ------------------------------------------------------------------------------------------------------------
# The driver.


def tokenize_check(a, task, model_dir, rows, feats, env, split):
    """`coretrain tokenize` with the model folder's tokenizer on every row must give this script's ids."""
    cmd = [a.coretrain, "tokenize", "--tokenizer_name", model_dir]
    if task == "ner":
        cmd.append("--is_split_into_words")
        lines = [json.dumps({"text": r["tokens"]}) for r in rows]
    elif task == "mrpc":
        lines = [json.dumps({"text": " ".join(r["a"]), "text_pair": " ".join(r["b"])}) for r in rows]
    else:
        lines = [json.dumps({"text": " ".join(r["a"])}) for r in rows]
    p = subprocess.run(cmd, env=env, input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"tasks_vs_torch: {' '.join(cmd)} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    got = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    if len(got) != len(feats):
        sys.exit(f"tasks_vs_torch: {task} {split}: coretrain tokenize gave {len(got)} encodings for {len(feats)} rows")
    for i, (g, f) in enumerate(zip(got, feats)):
        types = g.get("type_ids", g.get("token_type_ids"))
        if g["ids"] != f["input_ids"] or (types is not None and types != f["token_type_ids"]):
            sys.exit(f"tasks_vs_torch: {task} {split} row {i}: coretrain tokenizes to {g['ids']} (types {types}), "
                     f"this script assumed {f['input_ids']} ({f['token_type_ids']})")
    return sum(len(f["input_ids"]) for f in feats)


def coretrain_run(a, task, files, env):
    out = os.path.join(files["tmp"], "out")
    cmd = [a.coretrain, "ner" if task == "ner" else "glue", "--model_name_or_path", files["model"],
           "--train_file", files["train"], "--validation_file", files["eval"], "--do_train", "--do_eval",
           "--pad_to_max_length", "False"]
    if task != "ner":
        cmd += ["--max_seq_length", str(MAX_SEQ)]
    cmd += ["--per_device_train_batch_size", str(a.batch), "--per_device_eval_batch_size", str(a.eval_batch),
            "--max_steps", str(a.steps), "--weight_decay", "0.01", "--seed", str(a.seed), "--logging_steps",
            str(a.steps), "--save_strategy", "no", "--output_dir", out, "--overwrite_output_dir", "--disable_tqdm"]
    E.run(cmd, env, f"coretrain {cmd[1]} ({task})")
    with open(os.path.join(out, "train_results.json")) as f:
        tr = json.load(f)
    with open(os.path.join(out, "eval_results.json")) as f:
        er = json.load(f)
    return dict(train=tr, eval=er, cmd=" ".join(cmd[1:]))


def torch_run(a, task, files, env, modes):
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--config",
           os.path.join(files["model"], "config.json"), "--weights", os.path.join(files["model"], "model.safetensors"),
           "--features", files["features"], "--batch", str(a.batch), "--steps", str(a.steps), "--eval_batch",
           str(a.eval_batch), "--threads", str(a.threads), "--seed", str(a.seed), "--modes", ",".join(modes)]
    res = None
    for line in E.run(cmd, env, f"PyTorch ({task})"):
        if line.startswith("json: "):
            res = json.loads(line[6:])
    if res is None:
        sys.exit("tasks_vs_torch: the PyTorch worker printed no result")
    return res


TITLES = dict(mrpc="glue, MRPC-shaped (sentence pairs)", sst2="glue, SST-2-shaped (single sentences)",
              ner="ner, CoNLL-2003-shaped (word lists)")


def run_task(a, task, tmp, vocab, words, env):
    d = os.path.join(tmp, task)
    os.makedirs(d, exist_ok=True)
    rng = random.Random(f"{a.seed}-{task}")
    if task == "mrpc":
        train_rows, eval_rows = gen_mrpc(rng, words, a.train_rows), gen_mrpc(rng, words, a.eval_rows)
    elif task == "sst2":
        train_rows, eval_rows = gen_sst2(rng, words, a.train_rows, SST2_TRAIN), gen_sst2(rng, words, a.eval_rows,
                                                                                          SST2_DEV)
    else:
        train_rows, eval_rows = gen_conll(rng, words, a.train_rows), gen_conll(rng, words, a.eval_rows)
    ext = "json" if task == "ner" else "csv"
    files = dict(tmp=d, train=os.path.join(d, f"train.{ext}"), eval=os.path.join(d, f"dev.{ext}"),
                 model=os.path.join(d, "model"), features=os.path.join(d, "features.json"))
    write_rows(task, train_rows, files["train"])
    write_rows(task, eval_rows, files["eval"])
    cfg, labels = write_model(a, task, files["model"], vocab)
    label_id = {n: i for i, n in enumerate(labels)}
    tf, ef = features(task, train_rows, words, label_id), features(task, eval_rows, words, label_id)
    with open(files["features"], "w") as f:
        json.dump(dict(task=task, train=tf, eval=ef), f)
    if a.steps * a.batch > len(tf):
        sys.exit(f"tasks_vs_torch: {a.steps} x {a.batch} exceeds the {len(tf)} training rows (one epoch)")
    st_train, st_eval = length_stats(tf), length_stats(ef)
    print(f"\n=== {TITLES[task]}: train {fmt_stats(st_train)}; dev {fmt_stats(st_eval)}", flush=True)
    tok_train = tokenize_check(a, task, files["model"], train_rows, tf, env, "train")
    tok_eval = tokenize_check(a, task, files["model"], eval_rows, ef, env, "dev")
    token_line = (f"coretrain tokenize = this script's ids on every row ({tok_train} train / {tok_eval} dev tokens)")
    print(token_line, flush=True)

    ct = coretrain_run(a, task, files, env)
    got_t, got_e = ct["train"].get("train_samples"), ct["eval"].get("eval_samples")
    if got_t != len(tf) or got_e != len(ef):
        sys.exit(f"tasks_vs_torch: {task}: coretrain train_samples {got_t} / eval_samples {got_e}, "
                 f"the files have {len(tf)} / {len(ef)} rows")
    if a.check_only:
        return dict(task=task, ct=ct, pt=None, st_train=st_train, st_eval=st_eval, token_line=token_line)
    modes = ["dynamic"] if task == "ner" else ["pad128", "dynamic"]
    pt = torch_run(a, task, files, env, modes)
    used = [tf[i] for i in E.coretrain_permutation(len(tf), a.seed)[:a.steps * a.batch]]
    return dict(task=task, ct=ct, pt=pt, st_train=st_train, st_eval=st_eval, st_used=length_stats(used),
                token_line=token_line, modes=modes)


def print_report(a, results, head):
    for line in head:
        print(line)
    for r in results:
        task, ct, pt = r["task"], r["ct"], r["pt"]
        print(f"\n### {TITLES[task]}\n")
        print(f"`coretrain {ct['cmd'].split(' --model_name_or_path')[0]} ... --pad_to_max_length False` "
              f"(OMP_NUM_THREADS={a.threads}); train: {fmt_stats(r['st_train'])}; the {a.steps} x {a.batch} "
              f"trained: mean {r['st_used']['mean']:.1f}, max {r['st_used']['max']}; dev: {fmt_stats(r['st_eval'])}; "
              f"{r['token_line']}\n")
        if task == "ner":
            print("| phase | coretrain (features/s) | PyTorch dynamic padding | ratio (target) |")
            print("|---|---|---|---|")
        else:
            print("| phase | coretrain --pad_to_max_length False (features/s) | PyTorch pad 128 | ratio (target) | "
                  "PyTorch dynamic padding | ratio (target) |")
            print("|---|---|---|---|---|---|")
        for phase, key in (("train", "train_samples_per_second"), ("eval", "eval_samples_per_second")):
            cv = ct[phase][key]
            pd = pt[f"{phase}_dynamic"]["features_per_s"]
            if task == "ner":
                r2 = E.verdict(cv / pd, 2) if phase == "train" else f"{cv / pd:.2f}x (no target)"
                print(f"| {phase} | {cv:.2f} | {pd:.2f} | {r2} |")
            else:
                pp = pt[f"{phase}_pad128"]["features_per_s"]
                r1 = E.verdict(cv / pp, 3) if phase == "train" else f"{cv / pp:.2f}x (no target)"
                r2 = E.verdict(cv / pd, 1.5) if phase == "train" else f"{cv / pd:.2f}x (no target)"
                print(f"| {phase} | {cv:.2f} | {pp:.2f} | {r1} | {pd:.2f} | {r2} |")
        toks = ", ".join(f"{m} {pt['train_' + m]['computed_tokens']}" for m in r["modes"])
        print(f"\nPyTorch computed tokens in training (batch x padded length): {toks}; coretrain train_runtime "
              f"{ct['train']['train_runtime']} s, eval_runtime {ct['eval']['eval_runtime']} s; PyTorch step ms "
              + "; ".join(f"{m}: {pt['train_' + m]['step_ms']}" for m in r["modes"])
              + f"; peak RSS {pt['peak_rss_mb']:.0f} MB, torch {pt['torch']}")


def isa_flags():
    try:
        flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "").split()
    except OSError:
        return "?"
    keep = [f for f in flags if f.startswith(("avx512", "amx")) or f in ("avx2", "fma", "avx_vnni")]
    return " ".join(keep) or "none of avx2/avx512/amx"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    ap.add_argument("--quick", action="store_true", help="tiny model (2 x 128), 3 steps of batch 8: a smoke test")
    ap.add_argument("--tasks", default="mrpc,sst2,ner")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--batch", type=int, help="per_device_train_batch_size (default 32, run_glue's usual; quick 8)")
    ap.add_argument("--steps", type=int, help="training steps (default 5; quick 3)")
    ap.add_argument("--eval_batch", type=int, default=8, help="per_device_eval_batch_size (HF's default 8)")
    ap.add_argument("--train_rows", type=int, help="rows in each train file (default 2000; quick 200)")
    ap.add_argument("--eval_rows", type=int, help="rows in each dev file (default 128; quick 16)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    ap.add_argument("--workdir", help="work here instead of a temp dir (kept)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--stats", action="store_true", help="only print the generated length distributions")
    ap.add_argument("--check_only", action="store_true",
                    help="data, tokenizer check and one coretrain run per task; no PyTorch timing")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--weights", help=argparse.SUPPRESS)
    ap.add_argument("--features", help=argparse.SUPPRESS)
    ap.add_argument("--modes", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)

    base = dict(layers=12, hidden=768, heads=12, intermediate=3072, batch=32, steps=5, train_rows=2000,
                eval_rows=128)
    quick = dict(layers=2, hidden=128, heads=2, intermediate=512, batch=8, steps=3, train_rows=200, eval_rows=16)
    for k, v in (quick if a.quick else base).items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    tasks = [t for t in a.tasks.split(",") if t]
    for t in tasks:
        if t not in TITLES:
            sys.exit(f"tasks_vs_torch: unknown task {t!r} (mrpc, sst2, ner)")

    vocab = SD.build_vocab(a.vocab)
    words = Words(vocab)
    if a.stats:
        n = max(a.train_rows, 20000)
        for t in tasks:
            rng = random.Random(f"{a.seed}-{t}")
            lid = {n_: i for i, n_ in enumerate(sorted(CONLL_TAGS))}
            if t == "mrpc":
                sets = [("train/dev", gen_mrpc(rng, words, n))]
            elif t == "sst2":
                sets = [("train", gen_sst2(rng, words, n, SST2_TRAIN)), ("dev", gen_sst2(rng, words, n, SST2_DEV))]
            else:
                sets = [("train/dev", gen_conll(rng, words, n))]
            for name, rows in sets:
                print(f"{t} {name}: {fmt_stats(length_stats(features(t, rows, words, lid)))}")
        return 0

    print(fix_openblas_core(), flush=True)  # before any PyTorch process starts (bench/openblas_core.py)
    try:
        importlib.import_module("torch")
    except ImportError as e:
        print(f"tasks_vs_torch: skipped: {sys.executable} cannot import torch ({e})")
        return SKIP
    if not os.access(a.coretrain, os.X_OK):
        sys.exit(f"tasks_vs_torch: no coretrain binary at {a.coretrain} (--coretrain)")

    tmp = a.workdir or tempfile.mkdtemp(prefix="tasks_vs_torch.")
    os.makedirs(tmp, exist_ok=True)
    try:
        private = os.path.join(tmp, "coretrain")  # others rebuild the shared tree while a long run is under way
        shutil.copy2(a.coretrain, private)
        a.coretrain = private
        t_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load0 = os.getloadavg()
        env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), HF_DATASETS_CACHE=os.path.join(tmp, "cache"),
                   HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        peak, isa, _, _ = E.matmul_peak(a, env)
        results = [run_task(a, t, tmp, vocab, words, env) for t in tasks]
        load1 = os.getloadavg()
        if a.check_only:
            print("check_only: tokens and row counts agree; no PyTorch timing")
            return 0
        dims = f"{a.layers} layers, hidden {a.hidden}, {a.heads} heads, intermediate {a.intermediate}, vocab {a.vocab}"
        head = [f"\nTasks end to end{' (QUICK: tiny model, few steps)' if a.quick else ''}: BERT {dims}, random init; "
                f"{a.steps} steps x batch {a.batch}, eval batch {a.eval_batch}; {a.threads} thread(s)",
                f"machine: {E.machine()}; ISA flags: {isa_flags()}; {t_start}",
                f"load average (1/5/15 min) at start {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}, at end "
                f"{load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f} ({os.cpu_count()} CPUs)",
                f"f32 matmul peak (coretrain bench matmul, {isa.replace('matmul ', '')}): {peak} GFLOP/s"]
        print_report(a, results, head)
        return 0
    finally:
        if not (a.workdir or a.keep):
            shutil.rmtree(tmp, ignore_errors=True)
        elif not a.workdir:
            print(f"kept {tmp}")


if __name__ == "__main__":
    sys.exit(main())

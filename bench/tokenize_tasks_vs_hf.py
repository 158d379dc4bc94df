#!/usr/bin/python3
"""Each task command's feature build: coretrain against HF's Rust tokenizer, same files, same thread count.

For each tokenizer kind and each task, one after the other on the same generated file (bench/task_shaped_text.py:
English-like text at each task's real lengths):
  coretrain bench tokenize --task T --tokenizer_name DIR --train_file F --threads N --json
      (the feature build the command runs: QaTokenizer::build_features, build_sequence_features,
      build_token_features, build_mlm_chunks, build_multiple_choice_features; then a 1-thread pass)
  node bench/tokenize_vs_hf.js (qa) or bench/tokenize_tasks_vs_hf.js (the others), with RAYON_NUM_THREADS and
      UV_THREADPOOL_SIZE = N, then = 1: HF `tokenizers` (the Rust crate through its Node binding) doing what
      run_qa / run_glue / run_ner / run_mlm / run_swag ask of it (see the two .js files for what is emulated)
and prints features/s of each at 1 and N threads, the ratio, and both sides' feature and token counts.

Tokenizer kinds:
  wordpiece  bert-base-uncased's tokenizer.json settings over a generated 30,522-entry vocabulary
             (bench/tokenize_vs_hf.py); config.json model_type bert, so qa runs coretrain's BERT fast path and the
             other tasks the tokenizer.json engine
  bpe        RoBERTa-shaped byte-level BPE: GPT-2's real tokenizer.json (tests/text/data/tokenizers/gpt2.json,
             50,257 tokens) with <s> <pad> </s> <mask> added and RobertaProcessing; model_type roberta (ner:
             add_prefix_space=True, as transformers forces for pre-split words)
  unigram    XLM-R-shaped SentencePiece Unigram (tests/text/data/tokenizers/unigram_nmt.json: the real nmt_nfkc
             precompiled charsmap, Metaspace, `<s> A </s></s> B </s>`; a 1,798-piece vocabulary, not XLM-R's 250k);
             model_type xlm-roberta

  npm install --prefix /tmp/tok-bench tokenizers@0.23.2          # once; not into the repo
  /usr/bin/python3 bench/tokenize_tasks_vs_hf.py --tokenizers /tmp/tok-bench/node_modules/tokenizers \
      [--coretrain build/release/apps/coretrain] [--threads 2] [--kinds wordpiece,bpe,unigram]
      [--tasks qa,glue,ner,mlm,swag] [--scale 1.0] [--iters 3] [--quick]

--quick: tiny files, 1 iteration, coretrain's side only unless --tokenizers is given (a smoke test; ctest runs it:
bench.tokenize_tasks_quick). Exits non-zero when a run fails or lacks one of its fields.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import task_shaped_text as T  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "text", "data", "tokenizers")
TASKS = ["qa", "glue", "ner", "mlm", "swag"]
KINDS = ["wordpiece", "bpe", "unigram"]
# Examples per task at --scale 1 (mlm: megabytes). MRPC and CoNLL whole; SQuAD and SWAG a part, mlm 2 MB.
SCALE1 = dict(qa=4000, glue=3668, ner=14041, swag=5000, mlm=2.0)
QUICK = dict(qa=40, glue=50, ner=50, swag=20, mlm=0.02)
MAX_LEN = dict(qa=384, glue=128, ner=512, mlm=512, swag=128)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)


def make_tokenizers(corpus, tmp, kinds):
    """{kind: (folder, pad token, tokenizer.json for HF's ner run)}."""
    out = {}
    if "wordpiece" in kinds:
        d = os.path.join(tmp, "wordpiece")
        corpus.write_wordpiece(d)
        out["wordpiece"] = (d, "[PAD]", os.path.join(d, "tokenizer.json"))
    if "bpe" in kinds:
        d = os.path.join(tmp, "bpe")
        os.makedirs(d)
        with open(os.path.join(FIXTURES, "gpt2.json"), encoding="utf-8") as f:
            tj = json.load(f)
        n = len(tj["model"]["vocab"])
        specials = {"<s>": n, "<pad>": n + 1, "</s>": n + 2, "<mask>": n + 3}
        tj["added_tokens"] = [t for t in tj.get("added_tokens", []) if t["content"] not in specials] + [
            {"id": i, "content": t, "single_word": False, "lstrip": t == "<mask>", "rstrip": False,
             "normalized": False, "special": True} for t, i in specials.items()]
        tj["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", n + 2], "cls": ["<s>", n],
                                "trim_offsets": True, "add_prefix_space": False}
        tj["truncation"] = tj["padding"] = None
        write_json(os.path.join(d, "tokenizer.json"), tj)
        write_json(os.path.join(d, "tokenizer_config.json"),
                   {"model_max_length": 512, "pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>",
                    "mask_token": "<mask>", "tokenizer_class": "RobertaTokenizer"})
        write_json(os.path.join(d, "config.json"), {"model_type": "roberta"})
        # run_ner's from_pretrained(add_prefix_space=True): the ByteLevel pre-tokenizer prefixes every word.
        ner = os.path.join(tmp, "bpe_ner_tokenizer.json")
        tj["pre_tokenizer"]["add_prefix_space"] = True
        tj["post_processor"]["add_prefix_space"] = True
        write_json(ner, tj)
        out["bpe"] = (d, "<pad>", ner)
    if "unigram" in kinds:
        d = os.path.join(tmp, "unigram")
        os.makedirs(d)
        shutil.copyfile(os.path.join(FIXTURES, "unigram_nmt.json"), os.path.join(d, "tokenizer.json"))
        write_json(os.path.join(d, "tokenizer_config.json"),
                   {"model_max_length": 512, "pad_token": "<pad>", "mask_token": "<mask>",
                    "tokenizer_class": "XLMRobertaTokenizer"})
        write_json(os.path.join(d, "config.json"), {"model_type": "xlm-roberta"})
        out["unigram"] = (d, "<pad>", os.path.join(d, "tokenizer.json"))
    return out


def run_json(cmd, env, label):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{label} failed (rc {r.returncode}): {r.stdout.strip()[-800:]} {r.stderr.strip()[-800:]}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        sys.exit(f"{label} printed no JSON line: {r.stdout.strip()}")
    return json.loads(lines[-1])


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def find_binding(a):
    if a.tokenizers:
        return a.tokenizers
    if a.quick:  # a smoke test depends on no state outside the repo
        return None
    for p in ("/tmp/tok-bench/node_modules/tokenizers", "/tmp/hf-tok/node_modules/tokenizers"):
        if os.path.isdir(p):
            return p
    return None


def hf_run(a, binding, task, data, tok_json, pad, threads):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), UV_THREADPOOL_SIZE=str(threads))
    if task == "qa":
        cmd = [a.node, os.path.join(ROOT, "bench", "tokenize_vs_hf.js"), "--data", data, "--tokenizer", tok_json,
               "--max-length", str(MAX_LEN[task]), "--stride", "128", "--pad-token", pad]
    else:
        cmd = [a.node, os.path.join(ROOT, "bench", "tokenize_tasks_vs_hf.js"), "--task", task, "--data", data,
               "--tokenizer", tok_json, "--max-length", str(MAX_LEN[task])]
    cmd += ["--iters", str(a.iters), "--tokenizers", binding, "--json"]
    return run_json(cmd, env, f"HF {task}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    p.add_argument("--tokenizers", help="the npm `tokenizers` package folder (default: /tmp/tok-bench/...)")
    p.add_argument("--node", default="node")
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--threads", type=int, default=None, help="default: OMP_NUM_THREADS, else all CPUs")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every file's size")
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--quick", action="store_true", help="tiny files, 1 iteration: a smoke test")
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()
    kinds = [k for k in a.kinds.split(",") if k]
    tasks = [t for t in a.tasks.split(",") if t]
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"--kinds: {k} is not one of {','.join(KINDS)}")
    for t in tasks:
        if t not in TASKS:
            sys.exit(f"--tasks: {t} is not one of {','.join(TASKS)}")
    if a.quick:
        a.iters = 1
    threads = a.threads or int(os.environ.get("OMP_NUM_THREADS") or 0) or os.cpu_count()
    binding = find_binding(a)
    if binding is None or shutil.which(a.node) is None:
        if not a.quick:
            sys.exit("no Node binding: npm install --prefix /tmp/tok-bench tokenizers@0.23.2, or pass --tokenizers")
        print("note: no Node `tokenizers` binding found; coretrain's side only", flush=True)
        binding = None

    tmp = tempfile.mkdtemp(prefix="ct_tokenize_tasks.")
    try:
        corpus = T.Corpus(a.seed)
        toks = make_tokenizers(corpus, tmp, kinds)
        sizes = QUICK if a.quick else SCALE1
        files = {}
        for t in tasks:
            path = os.path.join(tmp, f"{t}.{'txt' if t == 'mlm' else 'json'}")
            if t == "mlm":
                T.write_task(corpus, t, path, mb=sizes[t] * a.scale)
            else:
                T.write_task(corpus, t, path, n=max(1, round(sizes[t] * a.scale)))
            files[t] = path
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load_start = loadavg()
        rows, mismatch = [], []
        for k in kinds:
            d, pad, ner_json = toks[k]
            for t in tasks:
                ct = run_json([a.coretrain, "bench", "tokenize", "--task", t, "--tokenizer_name", d, "--train_file",
                               files[t], "--max_seq_length", str(MAX_LEN[t]), "--threads", str(threads),
                               "--iters", str(a.iters), "--json"], dict(os.environ), f"coretrain bench tokenize {t}")
                for key in ("examples", "features", "tokens", "features_per_s", "tokens_per_s", "examples_per_s"):
                    if key not in ct:
                        sys.exit(f"coretrain bench tokenize --task {t}: no \"{key}\" in {ct}")
                hf = hf1 = None
                if binding:
                    tj = ner_json if t == "ner" else os.path.join(d, "tokenizer.json")
                    hf = hf_run(a, binding, t, files[t], tj, pad, threads)
                    hf1 = hf_run(a, binding, t, files[t], tj, pad, 1) if threads > 1 else hf
                    if hf["features"] != ct["features"]:
                        mismatch.append(f"{k} {t}: features coretrain {ct['features']}, HF {hf['features']}")
                rows.append((k, t, ct, hf, hf1))
        load_end = loadavg()

        print()
        print(f"feature build per task, coretrain vs HF tokenizers {hf['version'] if binding and hf else '(none)'}; "
              f"mean of {a.iters} passes after 1 untimed; {started}; load average {load_start} -> {load_end}")
        print()
        more = f" {threads} threads: ct | HF | ratio |" if threads > 1 else ""
        print(f"| tokenizer | task | examples | features (ct / HF) | tokens (ct / HF) | 1 thread: ct features/s | "
              f"HF | ratio |{more}")
        print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if threads > 1 else ""))
        for k, t, ct, hf, hf1 in rows:
            ct1 = ct.get("single_thread_features_per_s", ct["features_per_s"])
            hf_tokens = hf.get("tokens", "-") if hf else "-"

            def cell(c, h):
                return (f"{h['features_per_s']:,.0f} | **{c / h['features_per_s']:.2f}x**" if h else "- | -")

            more = f" {ct['features_per_s']:,.0f} | {cell(ct['features_per_s'], hf)} |" if threads > 1 else ""
            print(f"| {k} | {t} | {ct['examples']} | {ct['features']} / {hf['features'] if hf else '-'} | "
                  f"{ct['tokens']} / {hf_tokens} | {ct1:,.0f} | {cell(ct1, hf1)} |{more}")
        print("\n(qa: tokens = question + context tokens once per example on coretrain's side; HF's qa script "
              "counts no tokens)")
        if mismatch:
            print("\nfeature counts differ (see the .js files for what HF's side emulates): " + "; ".join(mismatch))
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

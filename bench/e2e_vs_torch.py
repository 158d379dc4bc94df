#!/usr/bin/python3
"""End to end on SQuAD-shaped data: `coretrain qa --pad_to_max_length False` against PyTorch on the same features.

    /usr/bin/python3 bench/e2e_vs_torch.py                 # BERT-base (12 x 768, 12 heads, 3072, 30522): many minutes
    /usr/bin/python3 bench/e2e_vs_torch.py --quick         # tiny model, few steps: < 1 minute, a smoke test
    /usr/bin/python3 bench/e2e_vs_torch.py --bf16          # also bf16 (only where coretrain has fast bf16, see below)
    options: --coretrain PATH  --batch B  --steps S  --eval_batch E  --threads N  --keep  --workdir DIR  --check_only

(/usr/bin/python3: Debian's python3 with python3-torch 1.13; without torch the script exits 77, CTest's "skipped".)

What it does, in order:
 1. bench/squad_shaped_data.py writes SQuAD v1.1 JSON train/dev files whose feature lengths at max_seq_length 384 /
    doc_stride 128 follow SQuAD v1.1's (distribution and its source: that file's header), a vocab in which every
    word is one wordpiece, and sidecars with every feature's token ids, made by the same windowing as coretrain.
 2. writes a config.json (random init; BERT-base, or tiny with --quick) and measures this machine's f32 matmul peak
    with `coretrain bench matmul` (it also tells whether bf16 is real here).
 3. coretrain, one process per precision:
        coretrain qa --config_name CFG --tokenizer_name TOK --train_file train.json --validation_file dev.json
          --do_train --do_eval --pad_to_max_length False --max_seq_length 384 --doc_stride 128
          --per_device_train_batch_size B --per_device_eval_batch_size E --max_steps S --seed 42 --save_strategy no
          [--bf16 --bf16_full_eval]
    train features/s = train_samples_per_second of train_results.json (HF's definition: S * B / train_runtime,
    the first step included); eval features/s = eval_samples_per_second of eval_results.json. The feature counts
    in those files (train_samples, eval_samples) must equal the generator's, and `coretrain bench tokenize` must
    count the generator's question + context tokens (so every word is one wordpiece), else the script fails.
 4. PyTorch, a separate process with the same thread count (torch.set_num_threads; OMP_NUM_THREADS for both):
    scripts/torch_reference.py's BertForQuestionAnswering from the same config, AdamW with HF's no-decay groups,
    linear LR decay, clip_grad_norm_(1.0) (as bench/step_vs_torch.py), bf16 as torch.autocast("cpu", bfloat16).
    Training runs the very same S batches coretrain runs: the sidecar's token ids, batched in coretrain's sampler
    order (its seeded Philox Fisher-Yates permutation, re-implemented below), in two modes:
        pad 384   every batch padded to max_seq_length (run_qa's default, --pad_to_max_length True)
        dynamic   every batch padded to its longest feature (DataCollatorWithPadding)
    timed like HF's train_runtime: all S steps including the first, collation included.
    Eval: every dev feature in order, batches of E, under torch.no_grad(), pad 384 and dynamic; with --bf16 the
    model is cast to bf16 (what HF's --bf16_full_eval does).
 5. prints a table: features/s of each, ratios, targets (train >= 3x pad 384 and >= 2x dynamic, issue 10; eval
    >= 3x pad 384, issue 10, and >= 2x dynamic, issue 21), and the padded-token shares.

Like with like, and what is not:
  - coretrain's eval_runtime covers the prediction loop (sharded forward passes and the gather of logits), as HF's
    QuestionAnsweringTrainer times it (its clock stops before post-processing): src/train/trainer.cpp
    Trainer::evaluate (since 93e3b16; before, it also covered post-processing and the prediction files). The
    PyTorch side times the forward passes of its no_grad loop.
  - coretrain's train_runtime starts after the model and features exist, as HF's; the PyTorch side's clock starts
    at the first batch after the model and optimizer are built. Neither side excludes a warm-up step.
  - Same features, same batches, same order, same padding rule; PyTorch's batches are collated in the timed
    loop (python lists to tensors), as a DataLoader's collation falls inside HF's train_runtime.
  - bf16: coretrain runs bf16 only on CPUs with AVX512-BF16 or AMX; elsewhere `--bf16` falls back to f32 with a
    warning. Then this script prints "bf16 not measurable here" and reports no bf16 ratio (PyTorch's autocast
    bf16 is still run when --bf16 is given, for reference: on AVX2 it is emulated and slow).
"""

import argparse
import importlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import squad_shaped_data as SD  # noqa: E402  (the generator, same folder)

from openblas_core import fix_openblas_core

SKIP = 77  # CTest's SKIP_RETURN_CODE for this script's test


# ------------------------------------------------------------------------------------------------------------
# coretrain's sampler order, so the PyTorch side trains the very same batches. src/core/rng.cpp (Philox4x32-10,
# Generator on stream ~0) and src/data/sampler.cpp (random_permutation: Fisher-Yates from the end, with
# seed + epoch). If coretrain's sampler ever changes, the batches differ but the features and their length
# distribution stay the same; the feature-count check does not depend on this.

M32 = 0xFFFFFFFF


def philox4x32(key, ctr_hi, ctr_lo):
    c0, c1, c2, c3 = ctr_lo & M32, (ctr_lo >> 32) & M32, ctr_hi & M32, (ctr_hi >> 32) & M32
    k0, k1 = key & M32, (key >> 32) & M32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


assert philox4x32(0, 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)  # Random123's known answer


class CtGenerator:
    """ct::Generator: 32-bit word number `offset` of stream ~0 under `seed`."""

    def __init__(self, seed):
        self.seed, self.offset, self.block, self.words = seed, 0, None, None

    def u32(self):
        b = self.offset // 4
        if b != self.block:
            self.block, self.words = b, philox4x32(self.seed, (1 << 64) - 1, b)
        v = self.words[self.offset % 4]
        self.offset += 1
        return v

    def below(self, n):
        top = (1 << 64) - 1
        limit = top - top % n
        while True:
            v = (self.u32() << 32) | self.u32()
            if v < limit:
                return v % n


def coretrain_permutation(n, seed):
    p = list(range(n))
    g = CtGenerator(seed)
    for i in range(n - 1, 0, -1):
        j = g.below(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


# ------------------------------------------------------------------------------------------------------------
# The PyTorch side (a separate process: --torch-worker).


def collate(torch, feats, idx, T):
    """Tensors of one batch padded to T: what coretrain's FeatureSet::collate builds (token types 1 from the
    context start through the last [SEP], attention mask 1 on real tokens)."""
    B = len(idx)
    ids = [[0] * T for _ in range(B)]
    types = [[0] * T for _ in range(B)]
    mask = [[0] * T for _ in range(B)]
    for r, i in enumerate(idx):
        f = feats[i]
        n = len(f["input_ids"])
        ids[r][:n] = f["input_ids"]
        types[r][f["context_start"]:n] = [1] * (n - f["context_start"])
        mask[r][:n] = [1] * n
    sp = torch.tensor([feats[i]["start_position"] for i in idx])
    ep = torch.tensor([feats[i]["end_position"] for i in idx])
    return torch.tensor(ids), torch.tensor(mask), torch.tensor(types), sp, ep


def torch_worker(a):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch_reference as R

    torch.set_num_threads(a.threads)
    with open(a.config) as f:
        cfg = json.load(f)
    with open(a.train_sidecar) as f:
        train = json.load(f)
    with open(a.eval_sidecar) as f:
        ev = json.load(f)
    max_len = train["max_seq_length"]
    tf, ef = train["features"], ev["features"]
    order = coretrain_permutation(len(tf), a.seed)  # coretrain's epoch 0 (seed + 0)
    batches = [order[s * a.batch:(s + 1) * a.batch] for s in range(a.steps)]
    out = dict(torch=torch.__version__, threads=torch.get_num_threads())

    def pad_to(idx, feats, mode):
        return max_len if mode == "pad384" else max(len(feats[i]["input_ids"]) for i in idx)

    for mode in ("pad384", "dynamic"):
        torch.manual_seed(a.seed)
        model = R.model_from_config(cfg)
        model.train()
        decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
        no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=5e-5)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1.0 - s / a.steps))
        times, tokens = [], 0
        t_all = time.perf_counter()
        for s, idx in enumerate(batches):
            t0 = time.perf_counter()
            T = pad_to(idx, tf, mode)
            tokens += T * len(idx)
            ids, mask, types, sp, ep = collate(torch, tf, idx, T)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
                loss, _, _ = model(ids, mask, types, sp, ep)
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

    for mode in ("pad384", "dynamic"):
        torch.manual_seed(a.seed)
        model = R.model_from_config(cfg)
        model.eval()
        if a.bf16:
            model = model.to(torch.bfloat16)  # HF's --bf16_full_eval casts the model
        t_all, tokens = time.perf_counter(), 0
        with torch.no_grad():
            for b0 in range(0, len(ef), a.eval_batch):
                idx = list(range(b0, min(len(ef), b0 + a.eval_batch)))
                T = pad_to(idx, ef, mode)
                tokens += T * len(idx)
                ids, mask, types, _, _ = collate(torch, ef, idx, T)
                _, s_logits, e_logits = model(ids, mask, types)
                s_logits.float().numpy(), e_logits.float().numpy()  # HF gathers the logits on the host
        total = time.perf_counter() - t_all
        out[f"eval_{mode}"] = dict(features_per_s=len(ef) / total, runtime_s=total, computed_tokens=tokens)
        print(f"  eval {mode}: {len(ef)} features in {total:.2f} s", flush=True)
        del model
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("json: " + json.dumps(out), flush=True)


# ------------------------------------------------------------------------------------------------------------
# The driver.


def run(cmd, env, label):
    """Runs cmd streaming its output (indented); returns the output lines. Fails the script on a non-zero exit."""
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in p.stdout:
        lines.append(line.rstrip("\n"))
        print("    " + lines[-1], flush=True)
    p.wait()
    if p.returncode != 0:
        sys.exit(f"e2e_vs_torch: {label} failed (exit {p.returncode})")
    return lines


def matmul_peak(a, env):
    """(f32 GFLOP/s, ISA line, bf16 status): `coretrain bench matmul` at the FFN shape of BERT-base, batch 4."""
    lines = run([a.coretrain, "bench", "matmul", "--reps", "3" if a.quick else "10"], env, "coretrain bench matmul")
    f32, isa, bf16_ok, bf16_note = None, "", False, "no bf16 line"
    for line in lines:
        if line.startswith("matmul "):
            isa = line
        m = re.match(r"f32:\s+([0-9.]+) GFLOP/s", line)
        if m:
            f32 = float(m.group(1))
        if line.startswith("bf16:"):
            if "not available" in line or "emulated" in line:
                bf16_ok, bf16_note = False, line[5:].strip()
            else:
                bf16_ok, bf16_note = True, line[5:].strip()
    return f32, isa, bf16_ok, bf16_note


def tokenizer_check(a, files, env):
    """`coretrain bench tokenize --json` on both files: its feature count and its question + context token count
    must equal the generator's, i.e. coretrain's tokenizer splits every generated word into exactly one wordpiece
    and windows exactly as the sidecars. Returns a line for the report; fails the script on a mismatch. Binaries
    from before `bench tokenize` existed (7b7af89) skip this and rely on the feature-count check alone."""
    got = []
    for split, path in (("train", files["train"]), ("eval", files["eval"])):
        cmd = [a.coretrain, "bench", "tokenize", "--train_file", path, "--tokenizer_name", files["tokenizer"],
               "--max_seq_length", str(a.max_seq_length), "--doc_stride", str(a.doc_stride), "--iters", "1",
               "--threads", "1", "--json"]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        js = [line for line in p.stdout.splitlines() if line.startswith("{")]
        if p.returncode != 0 or not js:
            return "token check skipped: this coretrain has no `bench tokenize`"
        r = json.loads(js[-1])
        want = files["stats"][split]
        if (r["features"], r["tokens"]) != (want["features"], want["question_context_tokens"]):
            sys.exit(f"e2e_vs_torch: {split}: coretrain bench tokenize found {r['features']} features and "
                     f"{r['tokens']} question + context tokens, the generator made {want['features']} and "
                     f"{want['question_context_tokens']}: the lengths differ")
        got.append(f"{split} {r['features']} features / {r['tokens']} tokens")
    line = "tokens agree (coretrain bench tokenize = generator): " + ", ".join(got)
    print(line, flush=True)
    return line


def coretrain_run(a, files, prec, env):
    out = os.path.join(files["tmp"], f"out_{prec}")
    cmd = [a.coretrain, "qa", "--config_name", files["cfg"], "--tokenizer_name", files["tokenizer"],
           "--train_file", files["train"], "--validation_file", files["eval"], "--do_train", "--do_eval",
           "--pad_to_max_length", "False", "--max_seq_length", str(a.max_seq_length), "--doc_stride",
           str(a.doc_stride), "--per_device_train_batch_size", str(a.batch), "--per_device_eval_batch_size",
           str(a.eval_batch), "--max_steps", str(a.steps), "--weight_decay", "0.01", "--seed", str(a.seed),
           "--logging_steps", str(a.steps), "--save_strategy", "no", "--output_dir", out, "--overwrite_output_dir",
           "--disable_tqdm"]
    if prec == "bf16":
        cmd += ["--bf16", "--bf16_full_eval"]
    lines = run(cmd, env, f"coretrain qa ({prec})")
    with open(os.path.join(out, "train_results.json")) as f:
        tr = json.load(f)
    with open(os.path.join(out, "eval_results.json")) as f:
        er = json.load(f)
    fell_back = any("running f32 instead" in line for line in lines)
    return dict(train=tr, eval=er, fell_back=fell_back)


def torch_run(a, files, prec, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--config", os.path.join(files["cfg"],
           "config.json"), "--train_sidecar", files["train_features"], "--eval_sidecar", files["eval_features"],
           "--batch", str(a.batch), "--steps", str(a.steps), "--eval_batch", str(a.eval_batch), "--threads",
           str(a.threads), "--seed", str(a.seed)]
    if prec == "bf16":
        cmd.append("--bf16")
    res = None
    for line in run(cmd, env, f"PyTorch ({prec})"):
        if line.startswith("json: "):
            res = json.loads(line[6:])
    if res is None:
        sys.exit("e2e_vs_torch: the PyTorch worker printed no result")
    return res


def model_config(a):
    return dict(architectures=["BertForQuestionAnswering"], model_type="bert", vocab_size=a.vocab,
                hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
                intermediate_size=a.intermediate, max_position_embeddings=512, type_vocab_size=2,
                hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0)


def verdict(ratio, target):
    return f"{ratio:.2f}x (>= {target}x: {'met' if ratio >= target else 'MISSED'})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    ap.add_argument("--quick", action="store_true",
                    help="tiny model (2 x 128), 5 steps of batch 4, a few dozen eval features: a smoke test")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--batch", type=int, help="per_device_train_batch_size (default 12, HF's SQuAD example; quick 4)")
    ap.add_argument("--steps", type=int, help="training steps (default 8; quick 5)")
    ap.add_argument("--eval_batch", type=int, default=8, help="per_device_eval_batch_size (HF's default 8)")
    ap.add_argument("--train_paragraphs", type=int,
                    help="training paragraphs in the file, ~4.6 questions each; S x B of its features are trained "
                         "(default 1000; quick 100)")
    ap.add_argument("--eval_paragraphs", type=int, help="dev paragraphs, ~4.6 questions each (default 40; quick 6)")
    ap.add_argument("--max_seq_length", type=int, default=384)
    ap.add_argument("--doc_stride", type=int, default=128)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    ap.add_argument("--bf16", action="store_true", help="also bf16 (coretrain only where bf16 is real)")
    ap.add_argument("--workdir", help="work here instead of a temp dir (kept)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--check_only", action="store_true",
                    help="generate data and run coretrain once (f32), check the feature counts, no PyTorch timing")
    # worker-only flags
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    ap.add_argument("--train_sidecar", help=argparse.SUPPRESS)
    ap.add_argument("--eval_sidecar", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        return torch_worker(a)
    print(fix_openblas_core(), flush=True)  # before any PyTorch process starts (bench/openblas_core.py)

    # Sizes: BERT-base by default, a tiny model with --quick; explicit flags win over both.
    base = dict(layers=12, hidden=768, heads=12, intermediate=3072, batch=12, steps=8, train_paragraphs=1000,
                eval_paragraphs=40)
    quick = dict(layers=2, hidden=128, heads=2, intermediate=512, batch=4, steps=5, train_paragraphs=100,
                 eval_paragraphs=6)
    for k, v in (quick if a.quick else base).items():
        if getattr(a, k) is None:
            setattr(a, k, v)

    try:  # the PyTorch side needs torch in this interpreter; without it there is nothing to compare
        importlib.import_module("torch")
    except ImportError as e:
        print(f"e2e_vs_torch: skipped: {sys.executable} cannot import torch ({e})")
        return SKIP
    if not os.access(a.coretrain, os.X_OK):
        sys.exit(f"e2e_vs_torch: no coretrain binary at {a.coretrain} (--coretrain)")

    tmp = a.workdir or tempfile.mkdtemp(prefix="e2e_vs_torch.")
    os.makedirs(tmp, exist_ok=True)
    try:
        # A private copy of the binary: others rebuild the shared tree while a long run is under way.
        private = os.path.join(tmp, "coretrain")
        shutil.copy2(a.coretrain, private)
        a.coretrain = private
        return drive(a, tmp)
    finally:
        if not (a.workdir or a.keep):
            shutil.rmtree(tmp, ignore_errors=True)
        elif not a.workdir:
            print(f"kept {tmp}")


def drive(a, tmp):
    t_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load0 = os.getloadavg()[0]
    # The training file is larger than the S x B features trained so that its statistics show the distribution;
    # the trained ones are coretrain's sampler's first S x B, a random sample of it (their own statistics below).
    gen = argparse.Namespace(train_paragraphs=a.train_paragraphs, eval_paragraphs=a.eval_paragraphs,
                             seed=a.seed, vocab_size=a.vocab, max_seq_length=a.max_seq_length,
                             doc_stride=a.doc_stride, context_median=SD.CONTEXT_MEDIAN,
                             context_sigma=SD.CONTEXT_SIGMA, question_median=SD.QUESTION_MEDIAN,
                             question_sigma=SD.QUESTION_SIGMA)
    print(f"$ bench/squad_shaped_data.py --out {tmp}/data --train_paragraphs {gen.train_paragraphs} "
          f"--eval_paragraphs {gen.eval_paragraphs} --seed {a.seed}", flush=True)
    files = SD.write_dataset(gen, os.path.join(tmp, "data"))
    files["tmp"] = tmp
    files["cfg"] = os.path.join(tmp, "config")
    os.makedirs(files["cfg"], exist_ok=True)
    with open(os.path.join(files["cfg"], "config.json"), "w") as f:
        json.dump(model_config(a), f, indent=2)
    n_train, n_eval = files["stats"]["train"]["features"], files["stats"]["eval"]["features"]
    if a.steps * a.batch > n_train:
        sys.exit(f"e2e_vs_torch: {a.steps} x {a.batch} exceeds the {n_train} training features (one epoch)")

    # coretrain's feature cache lives in the temp dir, not in the user's HF cache.
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), HF_DATASETS_CACHE=os.path.join(tmp, "cache"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    peak, isa, bf16_ok, bf16_note = matmul_peak(a, env)
    token_line = tokenizer_check(a, files, env)

    precs = ["f32"] + (["bf16"] if a.bf16 else [])
    rows, notes = [], []
    for prec in precs:
        ct = None
        if prec == "bf16" and not bf16_ok:
            notes.append(f"bf16 not measurable here: coretrain --bf16 would run f32 ({bf16_note}); no bf16 ratio")
            print(notes[-1], flush=True)
        else:
            ct = coretrain_run(a, files, prec, env)
            # The same features on both sides: coretrain's counts must be the generator's.
            got_t, got_e = ct["train"].get("train_samples"), ct["eval"].get("eval_samples")
            if got_t != n_train or got_e != n_eval:
                sys.exit(f"e2e_vs_torch: feature counts differ: coretrain train_samples {got_t} / eval_samples "
                         f"{got_e}, generator {n_train} / {n_eval}")
            print(f"feature counts agree: train {n_train}, eval {n_eval}", flush=True)
            if ct["fell_back"]:
                notes.append("bf16 not measurable here: coretrain logged that it ran f32 instead; no bf16 ratio")
                print(notes[-1], flush=True)
                ct = None
        if a.check_only:
            print("check_only: feature counts agree; no PyTorch timing")
            return 0
        pt = torch_run(a, files, prec, env)
        rows.append((prec, ct, pt))

    # The table.
    with open(files["train_features"]) as f:
        tf = json.load(f)["features"]
    used = [tf[i] for i in coretrain_permutation(n_train, a.seed)[:a.steps * a.batch]]
    trained = SD.length_stats(used, [1], a.max_seq_length)[0]
    tr_st, ev_st = files["stats"]["train"], files["stats"]["eval"]
    dims = f"{a.layers} layers, hidden {a.hidden}, {a.heads} heads, intermediate {a.intermediate}, vocab {a.vocab}"
    print(f"\nEnd to end on SQuAD-shaped data{' (QUICK: tiny model, few steps)' if a.quick else ''}: BERT QA {dims}; "
          f"max_seq_length {a.max_seq_length}, doc_stride {a.doc_stride}; {a.threads} thread(s)")
    print(f"machine: {machine()}; {t_start}; load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end")
    print(f"f32 matmul peak (coretrain bench matmul, {isa.replace('matmul ', '')}): {peak} GFLOP/s; bf16: {bf16_note}")
    print(f"train: {a.steps} steps x batch {a.batch} = {a.steps * a.batch} features of the {n_train} in the file "
          f"(mean length {tr_st['mean']:.1f}, median {tr_st['p50']}, p90 {tr_st['p90']}, "
          f"{100 * tr_st['multi_window_fraction']:.1f}% of questions multi-window); "
          f"eval: {n_eval} features (mean length {ev_st['mean']:.1f}), batch {a.eval_batch}")
    print(f"trained features (coretrain's first {a.steps} batches): mean length {trained['mean']:.1f}, median "
          f"{trained['p50']}, max {trained['max']}; {100 * trained['mean'] / a.max_seq_length:.1f}% of the tokens "
          f"padded to {a.max_seq_length} are real")
    print(f"feature counts: coretrain train_samples / eval_samples = generator's ({n_train} / {n_eval}); "
          f"{token_line}\n")
    print("| phase | precision | coretrain --pad_to_max_length False (features/s) | PyTorch pad 384 | ratio "
          "(target) | PyTorch dynamic padding | ratio (target) |")
    print("|---|---|---|---|---|---|---|")
    for prec, ct, pt in rows:
        for phase, key, tgt_pad, tgt_dyn in (("train", "train_samples_per_second", 3, 2),
                                             ("eval", "eval_samples_per_second", 3, 2)):
            pp, pd = pt[f"{phase}_pad384"]["features_per_s"], pt[f"{phase}_dynamic"]["features_per_s"]
            if ct is None:
                c, r1, r2 = "not measurable here", "-", "-"
            else:
                cv = ct[phase][key]
                c = f"{cv:.3f}"
                r1 = verdict(cv / pp, tgt_pad)
                r2 = verdict(cv / pd, tgt_dyn) if tgt_dyn else f"{cv / pd:.2f}x (no target)"
            pname = f"{prec}{' (autocast)' if prec == 'bf16' and phase == 'train' else ''}"
            print(f"| {phase} | {pname} | {c} | {pp:.3f} | {r1} | {pd:.3f} | {r2} |")
    for prec, ct, pt in rows:
        tp, td = pt["train_pad384"]["computed_tokens"], pt["train_dynamic"]["computed_tokens"]
        print(f"\n{prec}: PyTorch computed {tp} tokens (batch x padded length) padded to 384 and {td} with dynamic "
              f"padding (dynamic = {td / tp:.2f} of padded); PyTorch peak RSS {pt['peak_rss_mb']:.0f} MB; "
              f"torch {pt['torch']}")
        if ct is not None:
            print(f"{prec}: coretrain train_runtime {ct['train']['train_runtime']} s, eval_runtime "
                  f"{ct['eval']['eval_runtime']} s (the prediction loop, as HF's trainer_qa times it)")
    for n in notes:
        print(n)
    return 0


def machine():
    model, cpus = "?", str(os.cpu_count())
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                model = v.strip()
    except OSError:
        pass
    return f"{model}, {cpus} CPUs"


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The feature build of an epoch against that epoch's training time, measured in one run per case (issues 16 and
19: "the feature build of an epoch never more than 2% of that epoch's training time").

Cases (data: bench/task_shaped_text.py, whose header says where each length distribution comes from):
  squad  SQuAD v1.1-sized (87,599 questions, ~88k+ windows), WordPiece (bert-base-uncased's settings, 30,522
         entries), `coretrain qa`'s feature build (--task qa, 384 / 128); training: BERT-base QA step at seq 384
         padded (run_qa's padding="max_length"), batch --qa-batch
  mrpc   GLUE MRPC-sized (3,668 pairs), the same WordPiece, run_glue's features (--task glue, 128); training:
         BERT-base sequence-classification step, rows packed at the features' mean length (`--pad_to_max_length
         False`, coretrain's fastest training, so the largest share), batch --glue-batch
  mlm    a 10 MB wikitext-2-shaped corpus, RoBERTa-shaped byte-level BPE (GPT-2's real vocabulary, RobertaProcessing),
         run_mlm's tokenize + group_texts into 512-token chunks (--task mlm); training: RoBERTa-base (50,265 tokens)
         MLM step at seq 512, batch --mlm-batch
For each: t_feat = `coretrain bench tokenize --task T --threads N --iters 1 --no_single_thread` (mean of one timed
build after an untimed one; reading the file not included, as HF's dataset loading is not in its map either),
t_epoch = features / samples_per_s of `coretrain bench step` (its --steps timed steps after --warmup), both at
N = --threads (2) OpenMP threads in this run; prints t_feat / t_epoch.

  /usr/bin/python3 bench/feature_share.py [--coretrain build/release/apps/coretrain] [--threads 2]
      [--cases squad,mrpc,mlm] [--chrt] [--quick]
--chrt runs the timed commands under `chrt -f 10` (real-time priority: on a machine shared with other builds this
gives the timed process whole cores, as an idle machine would). --quick: small data, tiny model (a smoke test; the
share it prints means nothing).
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
import tokenize_tasks_vs_hf as V  # noqa: E402  (the tokenizer folders)

CASES = {
    # case: task, tokenizer kind, examples (mlm: MB), max_seq_length, bench step arguments but --batch
    "squad": ("qa", "wordpiece", 87599, 384, ["--head", "qa", "--seq", "384"]),
    "mrpc": ("glue", "wordpiece", 3668, 128, ["--head", "seq-cls", "--seq", "128", "--packed"]),
    "mlm": ("mlm", "bpe", 10.0, 512,
            ["--model_type", "roberta", "--vocab", "50265", "--head", "mlm", "--seq", "512"]),
}
TINY = ["--layers", "1", "--hidden", "64", "--heads", "2", "--intermediate", "128"]


def run(cmd, env, label):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{label} failed (rc {r.returncode}): {r.stdout.strip()[-800:]} {r.stderr.strip()[-800:]}")
    return r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--qa-batch", type=int, default=4)
    p.add_argument("--glue-batch", type=int, default=8)
    p.add_argument("--mlm-batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--chrt", action="store_true", help="timed commands under chrt -f 10")
    p.add_argument("--quick", action="store_true", help="small data, tiny model: a smoke test")
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            sys.exit(f"--cases: {c} is not one of {','.join(CASES)}")
    if a.quick:
        a.steps, a.warmup = 1, 0
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    rt = ["chrt", "-f", "10"] if a.chrt else []

    tmp = tempfile.mkdtemp(prefix="ct_feature_share.")
    try:
        corpus = T.Corpus(a.seed)
        toks = V.make_tokenizers(corpus, tmp, {CASES[c][1] for c in cases})
        results = []
        for c in cases:
            task, kind, size, max_len, step_args = CASES[c]
            path = os.path.join(tmp, f"{c}.{'txt' if task == 'mlm' else 'json'}")
            t0 = time.time()
            if task == "mlm":
                T.write_task(corpus, task, path, mb=0.05 if a.quick else size)
            else:
                T.write_task(corpus, task, path, n=50 if a.quick else size)
            print(f"{c}: wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB) in {time.time() - t0:.0f} s", flush=True)
            load_before = V.loadavg()
            out = run(rt + [a.coretrain, "bench", "tokenize", "--task", task, "--tokenizer_name", toks[kind][0],
                            "--train_file", path, "--max_seq_length", str(max_len), "--threads", str(a.threads),
                            "--iters", "1", "--no_single_thread", "--json"], env, f"bench tokenize {c}")
            feat = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
            batch = {"qa": a.qa_batch, "glue": a.glue_batch, "mlm": a.mlm_batch}[task]
            args = step_args + ["--batch", str(batch), "--steps", str(a.steps), "--warmup", str(a.warmup)]
            if "--packed" in args:
                # Every row at the features' mean length: packed rows cost their tokens.
                args += ["--lengths", str(max(1, round(feat["tokens"] / feat["features"])))]
            if a.quick:
                args += TINY
            out = run(rt + [a.coretrain, "bench", "step"] + args, env, f"bench step {c}")
            step = json.loads([ln for ln in out.splitlines() if ln.startswith("json: ")][-1][6:])
            t_epoch = feat["features"] / step["samples_per_s"]
            results.append(dict(case=c, kind=kind, feat=feat, step=step, step_cmd="coretrain bench step " +
                                " ".join(args), t_epoch=t_epoch, share=feat["seconds"] / t_epoch,
                                load=f"{load_before} -> {V.loadavg()}"))

        print()
        print(f"feature build vs training, {a.threads} threads{' (chrt -f 10)' if a.chrt else ''}, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        print()
        print("| case | tokenizer | examples | features | feature build s | training step | samples/s | "
              "epoch s | share |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in results:
            f = r["feat"]
            print(f"| {r['case']} | {r['kind']} | {f['examples']:,} | {f['features']:,} | {f['seconds']:.3f} | "
                  f"`{r['step_cmd']}` | {r['step']['samples_per_s']:.3f} | {r['t_epoch']:,.0f} | "
                  f"**{100 * r['share']:.4f}%** |")
        for r in results:
            print(f"{r['case']}: load average {r['load']}")
        worst = max(r["share"] for r in results)
        print(f"\nlargest share {100 * worst:.4f}% (target: at most 2%)")
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

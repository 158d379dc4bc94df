#!/usr/bin/python3
"""QA feature creation: coretrain against HF's Rust tokenizer, same input, same vocab, same run.

Writes (or takes) a SQuAD-shaped train file and a BERT uncased tokenizer folder (vocab.txt, tokenizer.json,
tokenizer_config.json), then runs, one after the other:
  coretrain bench tokenize --train_file F --tokenizer_name TOK --max_seq_length 384 --doc_stride 128 --json
      (FeatureSet::build, what `coretrain qa` runs before training; also a 1-thread pass)
  node bench/tokenize_vs_hf.js  with UV_THREADPOOL_SIZE = the same thread count, then = 1
      (HF `tokenizers`, the Rust crate through its Node binding, with run_qa's arguments on the same tokenizer.json;
      the binding's batch call takes no pairs, so the sequences are encode tasks on libuv's pool; --mode split, which
      avoids 0.23's truncation early-exit regression: see tokenize_vs_hf.js), and once more with --mode pair
      (0.23.2's own pair encode, for reference)
and prints features/s of each, the ratio, a check that both made the same number of features, and the share of an
epoch that feature creation takes: t_tok / (t_tok + t_train), t_train = features / training features/s.

  npm install --prefix /tmp/hf-tok tokenizers@0.23.2            # once; not into the repo
  /usr/bin/python3 bench/tokenize_vs_hf.py --coretrain build/release/apps/coretrain \
      --tokenizers /tmp/hf-tok/node_modules/tokenizers [--train-features-per-s 0.843 | --measure-step]

Threads: OMP_NUM_THREADS if set, else all CPUs, for both sides (--threads overrides).
Input: bench/squad_shaped_data.py when present and it works, else this script's own generator (--own-data forces
it); --data FILE --tokenizer DIR use given files instead (DIR needs tokenizer.json for the HF side).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# docs/benchmarks.md, "Training step", quiet machine: coretrain BERT-base f32, seq 384, batch 4, 2 threads.
DEFAULT_TRAIN_FPS = 0.843

# ---------------------------------------------------------------------------------------------------------------
# Input generator: English-like text over a 30,522-token WordPiece vocabulary (bert-base-uncased's size). Whole
# words are drawn Zipf-like; a share of words is not in the vocabulary and splits into ## pieces; sentences have
# capitals, digits, punctuation and some accented letters, so normalizer, pre-tokenizer and WordPiece all work.

COMMON = """the of and to a in is was for on that with as by at from his it an were are which this be or had
her their not but have one its after first new has been also who he they all two other she time when into
during more school there only some world may most between over about than can later city many would years
became state up while war under three where team year season through both these music known film out such
family second him then series before being if national early people what them so part made several including
well however used since following university first each government until house american life north south west
east album river town work members area game born same large public high show four county band played original
well church best number found group main five game power back team second local music known history film
english home called around name million album against because left came water general old like film state
president based great during led end place although early day last small major name day company like later
final system court general support among march april june july music member role began took former release
""".split()

SYLLABLES = ("ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge go ha he hi ho hu ja jo ka ke ki ko "
             "la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti "
             "to tu va ve vi vo wa we wi ya yo za ze an en in on un ar er ir or ur al el il ol st tr pr br cr dr "
             "gr pl bl cl fl sl th sh ch wh ng nd nt rd rt ck ll ss tt mp").split()
SUFFIXES = "s es ed ing ly er ers est tion tions ment ments ness able ful less ous ive al ally ity ism ist ists".split()
PUNCT = list(".,;:!?'\"()-[]/&%$#@*+=<>")
ACCENTED = {"e": "é", "a": "á", "o": "ö", "u": "ü", "i": "í", "n": "ñ", "c": "ç"}


def make_vocab(rng, size=30522):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
    vocab = specials + PUNCT + chars + ["##" + c for c in chars] + ["##" + s for s in SUFFIXES]
    vocab += ["##" + s for s in SYLLABLES]
    seen = set(vocab)
    words = []
    for w in COMMON:
        if w not in seen:
            seen.add(w)
            words.append(w)
    # Subword pieces: about a fifth of the rest, as in BERT's vocabulary.
    pieces_target = (size - len(vocab) - len(words)) // 5
    pieces = []
    while len(pieces) < pieces_target:
        p = "##" + "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        if p not in seen:
            seen.add(p)
            pieces.append(p)
    while len(vocab) + len(words) + len(pieces) < size:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return vocab + words + pieces, words


class TextGen:
    def __init__(self, rng, words):
        self.rng = rng
        self.words = words
        # Zipf-like: P(rank r) ~ 1/(r + 10); cumulative weights for rng.choices.
        w = [1.0 / (r + 10) for r in range(len(words))]
        self.cum = []
        acc = 0.0
        for x in w:
            acc += x
            self.cum.append(acc)

    def word(self):
        rng = self.rng
        r = rng.random()
        if r < 0.06:  # out of vocabulary: WordPiece splits it into pieces
            w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(3, 5)))
        elif r < 0.08:
            w = str(rng.randint(1, 2025))
        else:
            w = rng.choices(self.words, cum_weights=self.cum)[0]
            if rng.random() < 0.1:
                w += rng.choice(SUFFIXES)
        if rng.random() < 0.02:
            w = "".join(ACCENTED.get(ch, ch) if rng.random() < 0.5 else ch for ch in w)
        if rng.random() < 0.08:
            w = w.capitalize()
        return w

    def sentence(self, n):
        ws = [self.word() for _ in range(n)]
        ws[0] = ws[0].capitalize()
        for i in range(1, n - 1):
            if self.rng.random() < 0.07:
                ws[i] += self.rng.choice([",", ",", ";", ":", "'s"])
            elif self.rng.random() < 0.02:
                ws[i] = "(" + ws[i] + ")"
        return " ".join(ws)

    def text(self, n_words):
        out, left = [], n_words
        while left > 0:
            k = min(left, self.rng.randint(8, 24))
            out.append(self.sentence(k) + self.rng.choice([".", ".", ".", "!", "?"]))
            left -= k
        return " ".join(out)


def generate_squad(path, vocab_path, paragraphs, questions_per_paragraph, seed):
    rng = random.Random(seed)
    vocab, words = make_vocab(rng)
    with open(vocab_path, "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    gen = TextGen(rng, words)
    data, qid = [], 0
    for a in range(0, paragraphs, 10):
        article = {"title": f"article_{a // 10}", "paragraphs": []}
        for _ in range(min(10, paragraphs - a)):
            # Most paragraphs 120-200 words; about one in six 300-450 words, longer than 384 tokens.
            n = rng.randint(300, 450) if rng.random() < 0.17 else rng.randint(120, 200)
            context = gen.text(n)
            qas = []
            tokens = context.split(" ")
            for _ in range(questions_per_paragraph):
                i = rng.randrange(len(tokens))
                k = rng.randint(1, 4)
                answer = " ".join(tokens[i:i + k])
                start = len(" ".join(tokens[:i])) + (1 if i > 0 else 0)
                assert context[start:start + len(answer)] == answer
                question = gen.sentence(rng.randint(10, 15)) + "?"
                qas.append({"id": f"q{qid}", "question": question,
                            "answers": [{"text": answer, "answer_start": start}]})
                qid += 1
            article["paragraphs"].append({"context": context, "qas": qas})
        data.append(article)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": data}, f, ensure_ascii=False)
    return qid


def write_tokenizer_files(folder, vocab_path):
    """bert-base-uncased's tokenizer.json settings over this vocab (truncation and padding null, as HF ships it;
    transformers sets them per call, and so does tokenize_vs_hf.js)."""
    with open(vocab_path, encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    ids = {t: i for i, t in enumerate(vocab)}
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    if os.path.abspath(vocab_path) != os.path.abspath(os.path.join(folder, "vocab.txt")):
        shutil.copyfile(vocab_path, os.path.join(folder, "vocab.txt"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "model_max_length": 512, "tokenizer_class": "BertTokenizer"}, f)


def shaped_data(tmp, a):
    """bench/squad_shaped_data.py's train file and vocab (SQuAD v1.1's length distribution, every word one vocab
    entry) when that helper exists and runs; None otherwise."""
    script = os.path.join(ROOT, "bench", "squad_shaped_data.py")
    if a.own_data or not os.path.exists(script):
        return None
    out = os.path.join(tmp, "shaped")
    cmd = [sys.executable, script, "--out", out, "--train_paragraphs", str(a.paragraphs), "--eval_paragraphs", "1",
           "--seed", str(a.seed)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    data, vocab = os.path.join(out, "train.json"), os.path.join(out, "tokenizer", "vocab.txt")
    if r.returncode != 0 or not os.path.exists(data) or not os.path.exists(vocab):
        print(f"note: {' '.join(cmd)} failed (rc {r.returncode}) or wrote no train.json + tokenizer/vocab.txt; "
              f"using this script's generator\n{r.stderr.strip()[-500:]}", flush=True)
        return None
    return data, vocab, "bench/squad_shaped_data.py " + " ".join(cmd[3:])


def run_json(cmd, env, label):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    for line in r.stderr.splitlines():
        print("    " + line, flush=True)
    if r.returncode != 0:
        sys.exit(f"{label} failed (rc {r.returncode}): {r.stdout.strip()}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        sys.exit(f"{label} printed no JSON line: {r.stdout.strip()}")
    res = json.loads(lines[-1])
    print("    " + lines[-1], flush=True)
    return res


def measure_train_fps(a, threads):
    cmd = [a.coretrain, "bench", "step", "--seq", str(a.max_seq_length), "--batch", "4", "--steps", "1",
           "--warmup", "1"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("json: "):
            return json.loads(line[6:])["samples_per_s"]
    sys.exit(f"bench step failed (rc {r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}")


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coretrain", default=os.path.join(ROOT, "build/release/apps/coretrain"))
    p.add_argument("--tokenizers", default=None,
                   help="path of the npm `tokenizers` package folder (default: require('tokenizers') via NODE_PATH,"
                        " else /tmp/hf-tok/node_modules/tokenizers)")
    p.add_argument("--node", default="node")
    p.add_argument("--data", help="SQuAD JSON to use instead of generating one (needs --tokenizer)")
    p.add_argument("--tokenizer", help="folder with tokenizer.json (and vocab.txt) for --data")
    p.add_argument("--own-data", action="store_true", help="use this script's generator even if "
                                                           "bench/squad_shaped_data.py exists")
    p.add_argument("--paragraphs", type=int, default=2000, help="paragraphs to generate (either generator)")
    p.add_argument("--questions-per-paragraph", type=int, default=5, help="this script's generator only")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--max-seq-length", type=int, default=384)
    p.add_argument("--doc-stride", type=int, default=128)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--train-features-per-s", type=float, default=None,
                   help=f"training throughput for the epoch share (default {DEFAULT_TRAIN_FPS}: docs/benchmarks.md's"
                        " BERT-base f32 step, 2 threads)")
    p.add_argument("--measure-step", action="store_true",
                   help="measure the training throughput with a quick `coretrain bench step` (BERT-base, batch 4)")
    p.add_argument("--no-pair-mode", action="store_true", help="skip the reference run of HF's --mode pair")
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = p.parse_args()

    threads = a.threads or int(os.environ.get("OMP_NUM_THREADS") or 0) or os.cpu_count()
    tokenizers = a.tokenizers
    if tokenizers is None and not os.environ.get("NODE_PATH") and os.path.isdir("/tmp/hf-tok/node_modules/tokenizers"):
        tokenizers = "/tmp/hf-tok/node_modules/tokenizers"

    tmp = tempfile.mkdtemp(prefix="ct_tokenize_vs_hf.")
    try:
        if a.data:
            if not a.tokenizer or not os.path.exists(os.path.join(a.tokenizer, "tokenizer.json")):
                sys.exit("--data needs --tokenizer DIR holding tokenizer.json")
            data, tok_dir, source = a.data, a.tokenizer, a.data
        else:
            tok_dir = os.path.join(tmp, "tokenizer")
            shaped = shaped_data(tmp, a)
            if shaped:
                data, vocab, source = shaped
            else:
                data, vocab = os.path.join(tmp, "train.json"), os.path.join(tmp, "vocab.txt")
                n = generate_squad(data, vocab, a.paragraphs, a.questions_per_paragraph, a.seed)
                source = (f"this script's generator: {a.paragraphs} paragraphs x {a.questions_per_paragraph} "
                          f"questions = {n} examples, seed {a.seed}")
            write_tokenizer_files(tok_dir, vocab)
        print(f"input: {data} ({os.path.getsize(data) / 1e6:.1f} MB; {source}); tokenizer: {tok_dir}", flush=True)

        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load_start = loadavg()
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        ct = run_json([a.coretrain, "bench", "tokenize", "--train_file", data, "--tokenizer_name", tok_dir,
                       "--max_seq_length", str(a.max_seq_length), "--doc_stride", str(a.doc_stride),
                       "--iters", str(a.iters), "--json"], env, "coretrain bench tokenize")
        js = os.path.join(ROOT, "bench", "tokenize_vs_hf.js")
        hf_cmd = [a.node, js, "--data", data, "--tokenizer", os.path.join(tok_dir, "tokenizer.json"),
                  "--max-length", str(a.max_seq_length), "--stride", str(a.doc_stride), "--iters", str(a.iters),
                  "--json"]
        if tokenizers:
            hf_cmd += ["--tokenizers", tokenizers]
        hf = run_json(hf_cmd, dict(os.environ, UV_THREADPOOL_SIZE=str(threads)), "tokenize_vs_hf.js")
        hf1 = None
        if threads > 1:
            hf1 = run_json(hf_cmd, dict(os.environ, UV_THREADPOOL_SIZE="1"), "tokenize_vs_hf.js (1 thread)")
        # 0.23.2's own pair encode with truncation set (its early-exit regression): reference only.
        hfp = None
        if not a.no_pair_mode:
            hfp = run_json(hf_cmd + ["--mode", "pair"], dict(os.environ, UV_THREADPOOL_SIZE=str(threads)),
                           "tokenize_vs_hf.js --mode pair")
        load_end = loadavg()

        print()
        print(f"QA feature creation, max_seq_length {a.max_seq_length}, doc_stride {a.doc_stride}; "
              f"{ct['examples']} examples; mean of {a.iters} passes after 1 untimed; {started}; "
              f"load average {load_start} -> {load_end}")
        ok = ct["features"] == hf["features"] and ct["examples"] == hf["examples"]
        ok = ok and (hf1 is None or hf1["features"] == hf["features"])
        print(f"features: coretrain {ct['features']}, HF tokenizers {hf['features']} "
              f"({'equal' if ok else 'MISMATCH'}); examples: coretrain {ct['examples']} "
              f"(skipped {ct['skipped']}), HF {hf['examples']}")
        sidecar = os.path.join(os.path.dirname(data), "train_features.json")
        if os.path.exists(sidecar):
            with open(sidecar) as f:
                n_side = len(json.load(f)["features"])
            print(f"features by bench/squad_shaped_data.py's own windowing (train_features.json): {n_side}")
        print()
        print("| threads | coretrain features/s | HF tokenizers features/s (encode) | ratio | "
              "HF incl. reading the encodings | ratio |")
        print("|---|---|---|---|---|---|")
        rows = [(ct["threads"], ct["features_per_s"], hf)]
        if hf1 is not None and "single_thread_features_per_s" in ct:
            rows.append((1, ct["single_thread_features_per_s"], hf1))
        for t, cfps, h in rows:
            print(f"| {t} | {cfps:,.0f} | {h['features_per_s']:,.0f} | **{cfps / h['features_per_s']:.2f}x** | "
                  f"{h['read_features_per_s']:,.0f} | {cfps / h['read_features_per_s']:.2f}x |")
        if hfp is not None:
            same = ("the same count" if hfp["features"] == hf["features"]
                    else f"{hfp['features']} features, not {hf['features']}")
            print(f"\nfor reference, HF {hfp['version']}'s own encode(question, context) with truncation set "
                  f"(--mode pair, {threads} threads): {hfp['features_per_s']:,.0f} features/s ({same}); its early exit "
                  f"(huggingface/tokenizers#2091) stops tokenizing a context at max_length tokens, so windows past "
                  f"them are cut short or missing")
        print(f"\ncoretrain tokens/s ({ct['threads']} threads): {ct['tokens_per_s']:,.0f} "
              f"({ct['tokens']} question + context tokens per pass); examples/s {ct['examples_per_s']:,.0f}")

        if a.train_features_per_s:
            train_fps, how = a.train_features_per_s, "--train-features-per-s"
        elif a.measure_step:
            train_fps = measure_train_fps(a, threads)
            how = f"coretrain bench step, BERT-base f32, seq {a.max_seq_length}, batch 4, {threads} threads, just now"
        else:
            train_fps, how = DEFAULT_TRAIN_FPS, "docs/benchmarks.md: BERT-base f32 step, seq 384, batch 4, 2 threads"
        squad = 87599  # SQuAD v1.1 train questions
        print(f"at SQuAD v1.1 train size ({squad:,} examples): coretrain {squad / ct['examples_per_s']:.1f} s, "
              f"HF tokenizers {squad / hf['examples_per_s']:.1f} s ({threads} threads)")
        t_tok = ct["seconds"]
        t_train = ct["features"] / train_fps
        share = t_tok / (t_tok + t_train)
        print(f"\nshare of an epoch: feature creation {t_tok:.3f} s vs training {ct['features']} features at "
              f"{train_fps} features/s ({how}) = {t_train:,.0f} s: {100 * share:.4f}% of the epoch")
        if not ok:
            sys.exit("feature counts differ: coretrain and HF cut the examples differently")
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

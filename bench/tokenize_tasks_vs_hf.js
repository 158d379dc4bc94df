// HF's side of `coretrain bench tokenize --task glue|ner|mlm|swag` (bench/tokenize_tasks_vs_hf.py runs both; qa's
// side is bench/tokenize_vs_hf.js): the preprocessing each HF example script asks of its fast tokenizer (the Rust
// `tokenizers` crate, here through its Node binding, npm `tokenizers` 0.23.2), on the file coretrain reads:
//   glue  run_glue's tokenizer(s1, s2, truncation=True, max_length): truncation longest_first, the template's
//         special tokens; reads ids and type ids.
//   ner   run_ner's tokenizer(words, truncation=True, max_length, is_split_into_words=True) and its label
//         alignment through word_ids. The binding ignores pre-split input (isPretokenized), so each sentence's
//         words are joined by single spaces and encoded as one string; for the whitespace-splitting
//         pre-tokenizers benchmarked here (BERT's, Metaspace, ByteLevel with add_prefix_space) that yields the
//         same pieces as word-by-word encoding. The Rust work differs a little: one normalize/pre-tokenize call
//         over the sentence instead of one per word (less per-call overhead for HF), plus the spaces.
//   mlm   run_mlm's tokenize_function (tokenizer(texts, return_special_tokens_mask=True), no truncation) and
//         group_texts (each 1,000-text batch concatenated and cut into max_length chunks, remainder dropped),
//         the grouping in JS (HF runs it in Python, slower).
//   swag  run_swag's four rows per example: tokenizer([sent1] * 4, [f"{sent2} {ending_i}"], truncation=True,
//         max_length).
// Single texts go through encodeBatch (Rust's encode_batch on Rayon's pool: RAYON_NUM_THREADS); pairs through
// one async encode per pair on libuv's pool (UV_THREADPOOL_SIZE), because the binding's batch call takes no pairs
// (tokenizers 0.23.2, bindings/node/src/tokenizer.rs: `sentences: Vec<String>`); a batch of 1,000 examples
// (datasets.map's default) is in flight at once. Truncation here is 0.23.2's own, whose early exit
// (huggingface/tokenizers#2091) stops tokenizing once max_length tokens exist: less work for HF on over-long
// inputs, never more.
//
//   node bench/tokenize_tasks_vs_hf.js --task glue --data F --tokenizer tokenizer.json [--max-length 128]
//        [--iters 3] [--tokenizers PATH_OF_THE_NPM_PACKAGE] [--json]
'use strict';
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = { iters: 3, json: false, batchSize: 1000 };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k}: needs a value`);
      return argv[++i];
    };
    if (k === '--task') a.task = v();
    else if (k === '--data') a.data = v();
    else if (k === '--tokenizer') a.tokenizer = v();
    else if (k === '--tokenizers') a.tokenizers = v();
    else if (k === '--max-length') a.maxLength = parseInt(v(), 10);
    else if (k === '--iters') a.iters = parseInt(v(), 10);
    else if (k === '--json') a.json = true;
    else throw new Error(`unknown flag ${k}`);
  }
  if (!['glue', 'ner', 'mlm', 'swag'].includes(a.task)) throw new Error(`--task: expected glue, ner, mlm or swag`);
  if (!a.data || !a.tokenizer) throw new Error('--data FILE and --tokenizer tokenizer.json are required');
  if (a.maxLength === undefined) a.maxLength = a.task === 'glue' ? 128 : 512;
  if (!(a.maxLength > 0) || !(a.iters > 0)) throw new Error('--max-length and --iters: positive integers');
  return a;
}

// What every pass reads out of the encodings adds up here, so none of the reads is dead code.
let sink = 0;

function jsonLines(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const { Tokenizer } = require(a.tokenizers || 'tokenizers');
  const version = (() => {
    try {
      const dir = a.tokenizers || path.dirname(require.resolve('tokenizers/package.json'));
      return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
    } catch (e) {
      return 'unknown';
    }
  })();
  const tok = Tokenizer.fromFile(a.tokenizer);
  tok.disablePadding();
  if (a.task === 'mlm') tok.disableTruncation();
  else tok.setTruncation(a.maxLength, { strategy: 'LongestFirst', stride: 0, direction: 'right' });

  // Each task: its examples, and one pass that returns {features, tokens}.
  let examples, pass;
  if (a.task === 'glue') {
    const rows = jsonLines(a.data).map((r) => [r.sentence1, r.sentence2 == null ? null : r.sentence2]);
    examples = rows.length;
    pass = async () => {
      let features = 0, tokens = 0;
      for (let s = 0; s < rows.length; s += a.batchSize) {
        const batch = rows.slice(s, s + a.batchSize);
        const encs = batch.every((r) => r[1] === null)
          ? await tok.encodeBatch(batch.map((r) => r[0]))
          : await Promise.all(batch.map(([x, y]) => tok.encode(x, y, { addSpecialTokens: true })));
        for (const e of encs) {
          const ids = e.getIds(), types = e.getTypeIds();
          features += 1;
          tokens += ids.length;
          sink += types.length;
        }
      }
      return { features, tokens };
    };
  } else if (a.task === 'ner') {
    const sentences = jsonLines(a.data).map((r) => r.tokens.join(' '));
    examples = sentences.length;
    pass = async () => {
      let features = 0, tokens = 0;
      for (let s = 0; s < sentences.length; s += a.batchSize) {
        for (const e of await tok.encodeBatch(sentences.slice(s, s + a.batchSize))) {
          const ids = e.getIds(), words = e.getWordIds();
          // run_ner's tokenize_and_align_labels: the label on each word's first token, -100 elsewhere.
          const labels = new Array(ids.length);
          let prev = null;
          for (let i = 0; i < words.length; ++i) {
            const w = words[i];
            labels[i] = w === null || w === undefined || w === prev ? -100 : 0;
            prev = w;
          }
          features += 1;
          tokens += ids.length;
          sink += labels.length;
        }
      }
      return { features, tokens };
    };
  } else if (a.task === 'mlm') {
    const texts = fs.readFileSync(a.data, 'utf8').split('\n');
    if (texts.length && texts[texts.length - 1] === '') texts.pop();
    examples = texts.length;
    pass = async () => {
      let features = 0, tokens = 0;
      for (let s = 0; s < texts.length; s += a.batchSize) {
        const ids = [], special = [];
        for (const e of await tok.encodeBatch(texts.slice(s, s + a.batchSize))) {
          for (const x of e.getIds()) ids.push(x);
          for (const x of e.getSpecialTokensMask()) special.push(x);
        }
        const n = Math.floor(ids.length / a.maxLength) * a.maxLength;
        for (let c = 0; c < n; c += a.maxLength) {
          const chunk = ids.slice(c, c + a.maxLength), mask = special.slice(c, c + a.maxLength);
          features += 1;
          tokens += chunk.length;
          sink += mask.length;
        }
      }
      return { features, tokens };
    };
  } else {
    const rows = jsonLines(a.data);
    examples = rows.length;
    const pairs = [];
    for (const r of rows)
      for (let c = 0; c < 4; ++c) pairs.push([r.sent1, `${r.sent2} ${r[`ending${c}`]}`]);
    pass = async () => {
      let features = 0, tokens = 0;
      for (let s = 0; s < pairs.length; s += 4 * a.batchSize) {
        const encs = await Promise.all(
          pairs.slice(s, s + 4 * a.batchSize).map(([x, y]) => tok.encode(x, y, { addSpecialTokens: true })));
        for (const e of encs) {
          const ids = e.getIds(), types = e.getTypeIds();
          features += 1;
          tokens += ids.length;
          sink += types.length;
        }
      }
      return { features, tokens };
    };
  }

  const first = await pass();  // untimed, as coretrain's first build
  let total = 0, best = Infinity;
  for (let i = 0; i < a.iters; ++i) {
    const t0 = process.hrtime.bigint();
    const r = await pass();
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.features !== first.features) throw new Error(`feature count changed: ${first.features} then ${r.features}`);
    total += s;
    best = Math.min(best, s);
  }
  const seconds = total / a.iters;
  const res = {
    impl: 'hf-tokenizers', version, task: a.task, examples, features: first.features, tokens: first.tokens,
    max_length: a.maxLength, iters: a.iters,
    rayon_threads: process.env.RAYON_NUM_THREADS || 'all', uv_threads: process.env.UV_THREADPOOL_SIZE || '4',
    seconds, best_seconds: best, examples_per_s: examples / seconds, features_per_s: first.features / seconds,
    tokens_per_s: first.tokens / seconds,
  };
  if (a.json) {
    console.log(JSON.stringify(res));
    return;
  }
  console.log(`HF tokenizers ${version} --task ${a.task}: ${examples} examples, ${res.features} features, ` +
              `${res.tokens} tokens; ${seconds.toFixed(4)} s per pass (best ${best.toFixed(4)}); examples/s ` +
              `${res.examples_per_s.toFixed(0)} features/s ${res.features_per_s.toFixed(0)} tokens/s ` +
              `${res.tokens_per_s.toFixed(0)}`);
}

main().catch((e) => {
  console.error(`tokenize_tasks_vs_hf.js: error: ${e.message}`);
  process.exit(1);
});

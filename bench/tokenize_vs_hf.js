// tokenize_vs_hf.js: HF's side of bench/tokenize_vs_hf.py. Times what run_qa's prepare_train_features asks of
// HF's fast tokenizer (the Rust `tokenizers` crate, here through its Node binding, npm `tokenizers`):
//   tokenizer(questions, contexts, truncation="only_second", max_length=384, stride=128,
//             return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length")
// on the examples of a SQuAD JSON file, with the tokenizer.json that coretrain reads too, and counts the features
// (each encoding plus its overflowing windows).
//
// Parallelism: the Node binding's encodeBatch takes single sequences only (tokenizers 0.23.2,
// bindings/node/src/tokenizer.rs: `sentences: Vec<String>`), so every sequence is its own encode call, one async
// task each on libuv's pool (UV_THREADPOOL_SIZE threads; 1 for the single-thread figure), with a whole batch of
// 1000 examples (datasets.map's default batch) in flight at once. The Rust work per example is that of one item of
// Python's encode_batch on Rayon's pool: normalize, pre-tokenize and WordPiece each sequence, truncation with
// overflow, the post-processor and fixed padding. A call costs about 25 us of binding overhead (20,000 one-word
// encodes: 0.45-0.5 s), under 5% of HF's time here.
//
//   NODE_PATH=/tmp/hf-tok/node_modules node bench/tokenize_vs_hf.js --data train.json --tokenizer tok/tokenizer.json
//   [--tokenizers /tmp/hf-tok/node_modules/tokenizers] [--max-length 384] [--stride 128] [--iters 3]
//   [--batch-size 1000] [--mode split|pair] [--pad-token [PAD]] [--json]
//
// --mode split (default) works around a regression of tokenizers 0.23.1+ (huggingface/tokenizers#2091, fix
// pending in #2098): with truncation set, encode stops tokenizing once max_length tokens exist (#1990's early
// exit), so a context longer than that loses the windows past it (here: context of 617 tokens, question 19 ->
// windows at 0 and 234 covering tokens 0-383 only, where 0.22.2 and coretrain give 0, 234 and 468). Split mode
// runs 0.22.2's pipeline with the same Rust code: question and context encoded whole by a tokenizer without
// truncation (as encode_char_offsets encodes each sequence), then Tokenizer.postProcess of a tokenizer with
// run_qa's truncation and padding (truncate_encodings with overflow, the template, fixed padding). Its
// postProcess runs on the main JS thread. --mode pair times 0.23.2's own encode(question, context) with
// truncation set: less work and fewer features, shown for reference only.
//
// Two times per pass: "encode" is the encoding alone; "encode+read" also reads every feature's ids, type ids,
// attention mask and offsets out of the Rust encodings, as transformers' _convert_encoding does for each
// feature. HF then computes the start/end labels in Python, which is not timed here (coretrain's build
// includes its labels).
'use strict';
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = { maxLength: 384, stride: 128, iters: 3, batchSize: 1000, json: false, mode: 'split', padToken: '[PAD]' };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k}: needs a value`);
      return argv[++i];
    };
    if (k === '--data') a.data = v();
    else if (k === '--tokenizer') a.tokenizer = v();
    else if (k === '--tokenizers') a.tokenizers = v();
    else if (k === '--max-length') a.maxLength = parseInt(v(), 10);
    else if (k === '--stride') a.stride = parseInt(v(), 10);
    else if (k === '--iters') a.iters = parseInt(v(), 10);
    else if (k === '--batch-size') a.batchSize = parseInt(v(), 10);
    else if (k === '--json') a.json = true;
    else if (k === '--mode') a.mode = v();
    else if (k === '--pad-token') a.padToken = v();
    else throw new Error(`unknown flag ${k}`);
  }
  if (a.mode !== 'split' && a.mode !== 'pair') throw new Error(`--mode: expected split or pair, got '${a.mode}'`);
  if (!a.data || !a.tokenizer) throw new Error('--data FILE and --tokenizer tokenizer.json are required');
  for (const k of ['maxLength', 'iters', 'batchSize'])
    if (!(a[k] > 0)) throw new Error(`--${k}: expected a positive integer`);
  return a;
}

// (question, context) pairs in file order: SQuAD nested JSON ({"data": [{"paragraphs": [{"context", "qas"}]}]}),
// a flat {"data": [{question, context}]} or JSON lines, the shapes coretrain's read_squad takes.
function readSquad(file) {
  const text = fs.readFileSync(file, 'utf8');
  const out = [];
  const addFlat = (r) => out.push([r.question, r.context]);
  let doc = null;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    for (const line of text.split('\n')) if (line.trim()) addFlat(JSON.parse(line));
    return out;
  }
  const records = Array.isArray(doc) ? doc : doc.data;
  for (const r of records) {
    if (r.paragraphs) {
      for (const p of r.paragraphs) for (const q of p.qas) out.push([q.question, p.context]);
    } else {
      addFlat(r);
    }
  }
  return out;
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
  const whole = Tokenizer.fromFile(a.tokenizer);  // no truncation or padding (tokenizer.json has none)
  const tok = Tokenizer.fromFile(a.tokenizer);
  // What transformers' set_truncation_and_padding puts on the backend tokenizer for these arguments.
  tok.setTruncation(a.maxLength, { strategy: 'OnlySecond', stride: a.stride, direction: 'right' });
  const padId = tok.tokenToId(a.padToken);
  if (padId === undefined || padId === null) throw new Error(`--pad-token ${a.padToken}: not in the vocabulary`);
  tok.setPadding({ maxLength: a.maxLength, direction: 'right', padId, padTypeId: 0, padToken: a.padToken });

  // run_qa strips the question's leading whitespace before tokenizing.
  const pairs = readSquad(a.data).map(([q, c]) => [q.replace(/^\s+/, ''), c]);

  const runOnce = async (read) => {
    let features = 0, checksum = 0;
    for (let s = 0; s < pairs.length; s += a.batchSize) {
      const batch = pairs.slice(s, s + a.batchSize);
      const encs = a.mode === 'pair'
        ? await Promise.all(batch.map(([q, c]) => tok.encode(q, c, { addSpecialTokens: true })))
        : (await Promise.all(batch.map(([q, c]) => Promise.all([
            whole.encode(q, null, { addSpecialTokens: false }), whole.encode(c, null, { addSpecialTokens: false })]))))
            .map(([qe, ce]) => tok.postProcess(qe, ce, true));
      for (const e of encs) {
        const all = [e, ...e.getOverflowing()];
        features += all.length;
        if (read) {
          for (const f of all) {
            const ids = f.getIds(), types = f.getTypeIds(), mask = f.getAttentionMask(), offs = f.getOffsets();
            checksum += ids.length + types.length + mask.length + offs.length;
          }
        }
      }
    }
    return { features, checksum };
  };

  const timed = async (read) => {
    const first = await runOnce(read);  // untimed, as coretrain's first build
    let total = 0, best = Infinity;
    for (let i = 0; i < a.iters; ++i) {
      const t0 = process.hrtime.bigint();
      const r = await runOnce(read);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.features !== first.features) throw new Error(`feature count changed: ${first.features} then ${r.features}`);
      total += s;
      best = Math.min(best, s);
    }
    return { features: first.features, seconds: total / a.iters, best_seconds: best };
  };

  const enc = await timed(false);
  const encRead = await timed(true);
  // libuv's default pool is 4 threads whatever the CPU count.
  const threads = parseInt(process.env.UV_THREADPOOL_SIZE || '4', 10);
  const res = {
    impl: 'hf-tokenizers', version, mode: a.mode, examples: pairs.length, features: enc.features, iters: a.iters,
    batch_size: a.batchSize, threads,
    seconds: enc.seconds, best_seconds: enc.best_seconds,
    examples_per_s: pairs.length / enc.seconds, features_per_s: enc.features / enc.seconds,
    read_seconds: encRead.seconds, read_features_per_s: enc.features / encRead.seconds,
  };
  if (a.json) {
    console.log(JSON.stringify(res));
    return;
  }
  console.log(`HF tokenizers ${version} (Rust, Node binding), mode ${a.mode}, ${threads} libuv pool threads: ` +
              `${pairs.length} examples, ${enc.features} features, max_length ${a.maxLength}, stride ${a.stride}, batches of ${a.batchSize}`);
  console.log(`encode:      ${enc.seconds.toFixed(4)} s per pass (best ${enc.best_seconds.toFixed(4)})  ` +
              `examples/s ${res.examples_per_s.toFixed(0)}  features/s ${res.features_per_s.toFixed(0)}`);
  console.log(`encode+read: ${encRead.seconds.toFixed(4)} s per pass  ` +
              `features/s ${res.read_features_per_s.toFixed(0)}`);
}

main().catch((e) => {
  console.error(`tokenize_vs_hf.js: error: ${e.message}`);
  process.exit(1);
});

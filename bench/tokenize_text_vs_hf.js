// HF's side of `coretrain bench tokenize-text`: the same tokenizer.json on the same lines, through HF's Rust
// tokenizer (npm tokenizers, its Node binding). encodeBatch of 1000 lines per call, char offsets (as
// encode_batch_char_offsets gives Python); the binding's batch runs on Rayon's pool, so RAYON_NUM_THREADS=1
// gives the one-thread figure. The best of --iters passes after one untimed pass.
//   RAYON_NUM_THREADS=1 NODE_PATH=/tmp/hf-tok/node_modules node bench/tokenize_text_vs_hf.js tokenizer.json text.txt [iters]
'use strict';
const { Tokenizer } = require('tokenizers');
const fs = require('fs');

const [tokPath, textPath, itersArg] = process.argv.slice(2);
const iters = Number(itersArg || 3);
const tok = Tokenizer.fromFile(tokPath);
const lines = fs.readFileSync(textPath, 'utf8').split('\n');
if (lines.length && lines[lines.length - 1] === '') lines.pop();
const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);

(async () => {
  let best = Infinity, tokens = 0;
  for (let it = 0; it <= iters; ++it) {
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (let i = 0; i < lines.length; i += 1000) {
      for (const e of await tok.encodeBatch(lines.slice(i, i + 1000))) n += e.getLength();
    }
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    tokens = n;
    if (it > 0) best = Math.min(best, s);
  }
  console.log(`HF ${tokPath}: ${lines.length} lines, ${(bytes / 1e6).toFixed(1)} MB, ${tokens} tokens; ` +
              `RAYON_NUM_THREADS=${process.env.RAYON_NUM_THREADS || 'all'}: best ${best.toFixed(4)} s, ` +
              `${Math.round(tokens / best)} tokens/s, ${(bytes / 1e6 / best).toFixed(2)} MB/s`);
})();

// Writes a SQuAD-train-sized Parquet file (87,599 rows in 18,896 paragraphs of ~120 made-up words, 442 titles,
// rajpurkar/squad's schema and HF metadata) the way the Hub's copy was written: snappy, dictionary, data page
// v1, row groups of 1,000 rows (datasets 2.x push_to_hub); then times hyparquet (npm) reading every row.
// bench/parquet_vs_hyparquet.sh runs it and `coretrain bench parquet` on the same file. Needs parquet-wasm,
// apache-arrow and hyparquet under $PQGEN (default /tmp/pqgen; see tests/parquet/tools/make_fixtures.mjs).
//   node bench/parquet_squad_file.mjs OUT.parquet
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const gen = process.env.PQGEN || '/tmp/pqgen';
const require = createRequire(path.join(gen, 'package.json'));
const arrow = require('apache-arrow');
const pw = require('parquet-wasm/node');
const out = process.argv[2];

let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
const words = [];
for (let i = 0; i < 20000; ++i) {
  const n = 2 + Math.floor(rand() * 9);
  let w = '';
  for (let k = 0; k < n; ++k) w += String.fromCharCode(97 + Math.floor(Math.pow(rand(), 1.5) * 26));
  words.push(i % 50 === 0 ? w[0].toUpperCase() + w.slice(1) : w);
}
const zipf = () => words[Math.floor(Math.pow(rand(), 12) * words.length)];
const sentence = (n) => Array.from({ length: n }, zipf).join(' ');
const N = 87599, P = 18896;
const ids = [], titles = [], contexts = [], questions = [], answers = [];
const paragraphs = Array.from({ length: P }, () => sentence(100 + Math.floor(rand() * 40)) + '.');
for (let i = 0; i < N; ++i) {
  const p = Math.floor((i * P) / N);
  const ctx = paragraphs[p];
  ids.push((0x5733be284776f41900661182n + BigInt(i * 7919)).toString(16));
  titles.push(`Title_${Math.floor((p * 442) / P)}`);
  contexts.push(ctx);
  questions.push(sentence(8 + Math.floor(rand() * 6)) + '?');
  const s = Math.floor(rand() * (ctx.length - 30));
  answers.push({ text: [ctx.slice(s, s + 3 + Math.floor(rand() * 20))], answer_start: [s] });
}
const { Table, vectorFromArray, List, Field, Struct, Utf8, Int32, tableToIPC } = arrow;
const list = (t) => new List(new Field('element', t, true));
const table = new Table({
  id: vectorFromArray(ids, new Utf8()), title: vectorFromArray(titles, new Utf8()),
  context: vectorFromArray(contexts, new Utf8()), question: vectorFromArray(questions, new Utf8()),
  answers: vectorFromArray(answers, new Struct([new Field('text', list(new Utf8()), true),
    new Field('answer_start', list(new Int32()), true)])),
});
const features = {
  id: { dtype: 'string', _type: 'Value' }, title: { dtype: 'string', _type: 'Value' },
  context: { dtype: 'string', _type: 'Value' }, question: { dtype: 'string', _type: 'Value' },
  answers: { text: { feature: { dtype: 'string', _type: 'Value' }, _type: 'List' },
    answer_start: { feature: { dtype: 'int32', _type: 'Value' }, _type: 'List' } },
};
const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.SNAPPY).setMaxRowGroupSize(1000)
  .setKeyValueMetadata(new Map([['huggingface', JSON.stringify({ info: { features } })]])).build();
const bytes = pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), props);
fs.writeFileSync(out, bytes);
console.log(`wrote ${out}: ${N} rows, ${bytes.length} bytes`);

const { parquetReadObjects } = await import(require.resolve('hyparquet'));
const buf = fs.readFileSync(out);
const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
let best = 1e9, total = 0;
const iters = 3;
for (let it = 0; it <= iters; ++it) {
  const t0 = process.hrtime.bigint();
  const rows = await parquetReadObjects({ file: ab });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (rows.length !== N) throw new Error(`hyparquet read ${rows.length} rows`);
  if (it === 0) continue;
  best = Math.min(best, s);
  total += s;
}
console.log(`hyparquet ${JSON.parse(fs.readFileSync(path.join(gen, 'node_modules/hyparquet/package.json'))).version}: ${N} rows, all columns: ${(total / iters).toFixed(4)} s per read (best ${best.toFixed(4)}), ${iters} timed after 1 untimed`);

// Writes tests/parquet/data/*.parquet and expected.json with two independent Parquet writers from npm:
// parquet-wasm (arrow-rs compiled to WebAssembly: every codec, dictionary/fallback, data page v2, per-column
// encodings) and hyparquet-writer (pure JavaScript). The tests never run node; rerun this only to change
// the fixtures, then commit the outputs:
//   mkdir -p /tmp/pqgen && cd /tmp/pqgen && npm init -y && \
//     npm install parquet-wasm@0.8.0 apache-arrow@21 hyparquet-writer@0.17.0
//   NODE_PATH=/tmp/pqgen/node_modules node tests/parquet/tools/make_fixtures.mjs tests/parquet/data
// (NODE_PATH does not apply to ES modules, so the script loads its packages from $PQGEN, default /tmp/pqgen.)
// The rows are generated deterministically here; expected.json holds them as JSON (float32 values rounded
// as float32, int64 as numbers, all within 2^53) for the C++ tests to compare every cell against.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const gen = process.env.PQGEN || '/tmp/pqgen';
const require = createRequire(path.join(gen, 'package.json'));
const arrow = require('apache-arrow');
const pw = require('parquet-wasm/node');
const { Table, vectorFromArray, List, Field, Struct, Utf8, Int8, Int16, Int32, Int64, Uint32, Float32, Float64, Bool,
  tableToIPC } = arrow;
const outDir = process.argv[2] || 'tests/parquet/data';
fs.mkdirSync(outDir, { recursive: true });

const list = (t, name = 'element') => new List(new Field(name, t, true));
const struct = (fields) => new Struct(fields.map(([n, t]) => new Field(n, t, true)));

// --- Tables: {columns: [[name, type, values]], rows (for expected.json)} -------------------------------------
function flatTable(n) {
  const vocab = ['the', 'café', '', 'naïve résumé', 'Saint Bernadette Soubirous', '日本語', 'x'];
  const cols = [
    ['i32', new Int32(), (i) => (i % 11 === 3 ? null : i * 7 - 300)],
    ['i64', new Int64(), (i) => (i % 13 === 5 ? null : (i - 100) * 1000000007)],
    ['f32', new Float32(), (i) => Math.fround(i * 0.25 - 10.5)],
    ['f64', new Float64(), (i) => (i % 17 === 0 ? null : i / 3 - 7)],
    ['b', new Bool(), (i) => (i % 7 === 6 ? null : i % 3 === 0)],
    ['s', new Utf8(), (i) => (i % 5 === 4 ? null : vocab[i % vocab.length])],
    ['u', new Utf8(), (i) => `row-${i}-` + 'ab'.repeat(i % 9)],
    ['i8', new Int8(), (i) => (i % 256) - 128],
    ['i16', new Int16(), (i) => i * 150 - 15000],
    ['u32', new Uint32(), (i) => 4000000000 - i * 3],
  ];
  return materialize(cols, n);
}

function nestedTable(n) {
  const li = (i) => [null, [], [null], [1, 2, 3], [i, -i, null, 4]][i % 5];
  const cols = [
    ['id', new Int32(), (i) => i],
    ['li', list(new Int32()), (i) => li(i)],
    ['ls_item', list(new Utf8(), 'item'), (i) => (i % 4 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => `w${i}.${k}`))],
    ['st', struct([['a', new Int32()], ['b', new Utf8()], ['c', list(new Float64())]]),
      (i) => (i % 6 === 5 ? null : { a: i % 3 === 0 ? null : i, b: `s${i}`, c: i % 2 ? [i / 2, null] : [] })],
    ['lst', list(struct([['x', new Int32()], ['y', new Utf8()]])),
      (i) => (i % 7 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => (k === 1 && i % 2 ? null : { x: i * 10 + k, y: k ? null : `y${i}` })))],
    ['ll', list(list(new Int64())),
      (i) => (i % 5 === 0 ? [] : [[i, i + 1], [], null, [i * 1000]].slice(0, 1 + (i % 4)))],
  ];
  return materialize(cols, n);
}

const squadContexts = [
  'Architecturally, the school has a Catholic character. It is a replica of the grotto at Lourdes, France where the Virgin Mary reputedly appeared to Saint Bernadette Soubirous in 1858.',
  'Beyoncé Giselle Knowles-Carter (born September 4, 1981) is an American singer, songwriter, record producer and actress.',
  'The Normans (Norman: Nourmands; French: Normands; Latin: Normanni) were the people who in the 10th and 11th centuries gave their name to Normandy.',
];
function squadTable(n) {
  const answers = (i) => {
    const ctx = squadContexts[i % 3];
    if (i % 10 === 9) return { text: [], answer_start: [] };  // SQuAD v2 unanswerable
    const k = i % 4 === 1 ? 3 : 1;
    const text = [], start = [];
    for (let j = 0; j < k; ++j) {
      const s = (i * 7 + j * 3) % 40;
      text.push(ctx.slice(s, s + 5 + j));
      start.push(s);
    }
    return { text, answer_start: start };
  };
  const cols = [
    ['id', new Utf8(), (i) => (0x5733be284776f41900661182n + BigInt(i)).toString(16)],
    ['title', new Utf8(), (i) => ['University_of_Notre_Dame', 'Beyoncé', 'Normans'][i % 3]],
    ['context', new Utf8(), (i) => squadContexts[i % 3]],
    ['question', new Utf8(), (i) => `Question number ${i} about ${['Lourdes', 'Beyoncé', 'Normandy'][i % 3]}?`],
    ['answers', struct([['text', list(new Utf8())], ['answer_start', list(new Int32())]]), answers],
  ];
  return materialize(cols, n);
}
const squadFeatures = {
  id: { dtype: 'string', _type: 'Value' }, title: { dtype: 'string', _type: 'Value' },
  context: { dtype: 'string', _type: 'Value' }, question: { dtype: 'string', _type: 'Value' },
  answers: {
    text: { feature: { dtype: 'string', _type: 'Value' }, _type: 'List' },
    answer_start: { feature: { dtype: 'int32', _type: 'Value' }, _type: 'List' },
  },
};

const nerNames = ['O', 'B-PER', 'I-PER', 'B-ORG', 'I-ORG', 'B-LOC', 'I-LOC', 'B-MISC', 'I-MISC'];
const chunkNames = ['O', 'B-ADJP', 'I-ADJP', 'B-ADVP', 'I-ADVP', 'B-CONJP', 'I-CONJP', 'B-INTJ', 'I-INTJ', 'B-LST',
  'I-LST', 'B-NP', 'I-NP', 'B-PP', 'I-PP', 'B-PRT', 'I-PRT', 'B-SBAR', 'I-SBAR', 'B-UCP', 'I-UCP', 'B-VP', 'I-VP'];
const posNames = ['"', "''", '#', '$', '(', ')', ',', '.', ':', '``', 'CC', 'CD', 'DT', 'EX', 'FW', 'IN', 'JJ', 'JJR',
  'JJS', 'LS', 'MD', 'NN', 'NNP', 'NNPS', 'NNS', 'NN|SYM', 'PDT', 'POS', 'PRP', 'PRP$', 'RB', 'RBR', 'RBS', 'RP', 'SYM',
  'TO', 'UH', 'VB', 'VBD', 'VBG', 'VBN', 'VBP', 'VBZ', 'WDT', 'WP', 'WP$', 'WRB'];
function conllTable(n) {
  const words = ['EU', 'rejects', 'German', 'call', 'to', 'boycott', 'British', 'lamb', '.', 'Peter', 'Blackburn'];
  const len = (i) => (i % 8 === 7 ? 0 : 1 + ((i * 5) % 9));
  const cols = [
    ['id', new Utf8(), (i) => String(i)],
    ['tokens', list(new Utf8()), (i) => Array.from({ length: len(i) }, (_, k) => words[(i + k) % words.length])],
    ['pos_tags', list(new Int64()), (i) => Array.from({ length: len(i) }, (_, k) => (i * 3 + k) % 47)],
    ['chunk_tags', list(new Int64()), (i) => Array.from({ length: len(i) }, (_, k) => (i + k * 2) % 23)],
    ['ner_tags', list(new Int64()), (i) => Array.from({ length: len(i) }, (_, k) => (i * k) % 9)],
  ];
  return materialize(cols, n);
}
const seqOfLabels = (names) => ({ feature: { num_classes: names.length, names, _type: 'ClassLabel' }, length: -1, id: null, _type: 'Sequence' });
const conllFeatures = {
  id: { dtype: 'string', id: null, _type: 'Value' },
  tokens: { feature: { dtype: 'string', id: null, _type: 'Value' }, length: -1, id: null, _type: 'Sequence' },
  pos_tags: seqOfLabels(posNames), chunk_tags: seqOfLabels(chunkNames), ner_tags: seqOfLabels(nerNames),
};

// stanfordnlp/imdb's plain_text schema (text, label: ClassLabel neg/pos), in the fixture tokenizer's words:
// "pos" exactly when the review holds "hello", so a tiny model learns it.
function imdbTable(n) {
  const words = ['world', 'cafe', 'resume', 'zurich', 'and', 'the', 'naive', 'istanbul'];
  const cols = [
    ['text', new Utf8(), (i) => Array.from({ length: 5 + (i % 4) }, (_, k) => (i % 2 === 1 && k === 2 ? 'hello' : words[(i * 3 + k * 5) % 8])).join(' ')],
    ['label', new Int64(), (i) => i % 2],
  ];
  return materialize(cols, n);
}
const imdbFeatures = {
  text: { dtype: 'string', _type: 'Value' },
  label: { names: ['neg', 'pos'], _type: 'ClassLabel' },
};

// Salesforce/wikitext's schema (one text column), its rows as the raw configs hold them: empty rows, " = Title = "
// headings and paragraphs, each ending in "\n".
function wikitextTable(n) {
  const words = ['the', 'hello', 'world', 'cafe', 'resume', 'zurich', 'and', 'naive', 'istanbul'];
  const cols = [['text', new Utf8(), (i) => {
    if (i % 4 === 0) return '';
    if (i % 8 === 1) return ` = ${words[i % 9]} ${words[(i + 4) % 9]} = \n`;
    return ' ' + Array.from({ length: 6 + (i % 7) }, (_, k) => words[(i + k * k) % 9]).join(' ') + ' . \n';
  }]];
  return materialize(cols, n);
}
const wikitextFeatures = { text: { dtype: 'string', _type: 'Value' } };

function materialize(cols, n) {
  const rows = Array.from({ length: n }, (_, i) => Object.fromEntries(cols.map(([name, , f]) => [name, f(i)])));
  return { cols, rows };
}

// Arrow JS wants BigInt for 64-bit integers, recursively.
function toArrowValues(v, type) {
  if (v === null) return null;
  if (type instanceof Int64) return BigInt(v);
  if (type instanceof List) return v.map((x) => toArrowValues(x, type.children[0].type));
  if (type instanceof Struct) return Object.fromEntries(type.children.map((f) => [f.name, toArrowValues(v[f.name], f.type)]));
  return v;
}

function wasmTable({ cols, rows }) {
  const vectors = {};
  for (const [name, type] of cols) vectors[name] = vectorFromArray(rows.map((r) => toArrowValues(r[name], type)), type);
  return pw.Table.fromIPCStream(tableToIPC(new Table(vectors), 'stream'));
}

const files = {};
const tables = {};
function write(file, tableName, table, configure, kv) {
  let b = new pw.WriterPropertiesBuilder().setCreatedBy('coretrain make_fixtures.mjs (parquet-wasm 0.8.0)');
  b = configure(b);
  if (kv) b = b.setKeyValueMetadata(new Map(Object.entries(kv)));
  const bytes = pw.writeParquet(wasmTable(table), b.build());
  fs.writeFileSync(path.join(outDir, file), bytes);
  files[file] = tableName;
  tables[tableName] = table.rows;
}

const C = pw.Compression, E = pw.Encoding, V = pw.WriterVersion;
const small = (b) => b.setMaxRowGroupSize(120).setDataPageSizeLimit(256).setWriteBatchSize(32);
const flat = flatTable(200);
for (const [codec, name] of [[C.UNCOMPRESSED, 'uncompressed'], [C.SNAPPY, 'snappy'], [C.GZIP, 'gzip'], [C.BROTLI, 'brotli'],
  [C.ZSTD, 'zstd'], [C.LZ4_RAW, 'lz4_raw'], [C.LZ4, 'lz4']]) {
  write(`flat_v1_${name}.parquet`, 'flat', flat, (b) => small(b).setCompression(codec).setWriterVersion(V.V1));
}
for (const [codec, name] of [[C.UNCOMPRESSED, 'uncompressed'], [C.SNAPPY, 'snappy'], [C.ZSTD, 'zstd'], [C.GZIP, 'gzip']]) {
  write(`flat_v2_${name}.parquet`, 'flat', flat, (b) => small(b).setCompression(codec).setWriterVersion(V.V2));
}
write('flat_plain.parquet', 'flat', flat, (b) => small(b).setDictionaryEnabled(false).setCompression(C.UNCOMPRESSED));
// A dictionary that outgrows its limit: dictionary-encoded pages, then PLAIN pages in the same chunk.
write('dict_fallback.parquet', 'flat', flat, (b) => b.setDataPageSizeLimit(512).setWriteBatchSize(16)
  .setDictionaryPageSizeLimit(300).setCompression(C.SNAPPY));
for (const [version, name] of [[V.V1, 'v1'], [V.V2, 'v2']]) {
  write(`encodings_${name}.parquet`, 'flat', flat, (b) => {
    b = small(b).setDictionaryEnabled(false).setWriterVersion(version).setCompression(C.ZSTD)
      .setColumnEncoding('i32', E.DELTA_BINARY_PACKED).setColumnEncoding('i64', E.DELTA_BINARY_PACKED)
      .setColumnEncoding('i16', E.BYTE_STREAM_SPLIT).setColumnEncoding('u32', E.DELTA_BINARY_PACKED)
      .setColumnEncoding('f32', E.BYTE_STREAM_SPLIT).setColumnEncoding('f64', E.BYTE_STREAM_SPLIT)
      .setColumnEncoding('s', E.DELTA_LENGTH_BYTE_ARRAY).setColumnEncoding('u', E.DELTA_BYTE_ARRAY);
    return version === V.V2 ? b.setColumnEncoding('b', E.RLE) : b;
  });
}
const nested = nestedTable(60);
write('nested_v1.parquet', 'nested', nested, (b) => b.setDataPageSizeLimit(128).setWriteBatchSize(8)
  .setMaxRowGroupSize(25).setCompression(C.SNAPPY));
write('nested_v2.parquet', 'nested', nested, (b) => b.setDataPageSizeLimit(128).setWriteBatchSize(8)
  .setMaxRowGroupSize(25).setCompression(C.ZSTD).setWriterVersion(V.V2));
write('nested_plain.parquet', 'nested', nested, (b) => b.setDictionaryEnabled(false).setCompression(C.UNCOMPRESSED));
write('squad.parquet', 'squad', squadTable(40), (b) => b.setMaxRowGroupSize(16).setCompression(C.SNAPPY),
  { huggingface: JSON.stringify({ info: { features: squadFeatures } }) });
write('conll.parquet', 'conll', conllTable(30), (b) => b.setMaxRowGroupSize(1000).setCompression(C.SNAPPY),
  { huggingface: JSON.stringify({ info: { features: conllFeatures } }) });
write('imdb.parquet', 'imdb', imdbTable(48), (b) => b.setCompression(C.SNAPPY),
  { huggingface: JSON.stringify({ info: { features: imdbFeatures } }) });
write('wikitext.parquet', 'wikitext', wikitextTable(120), (b) => b.setCompression(C.SNAPPY),
  { huggingface: JSON.stringify({ info: { features: wikitextFeatures } }) });

// Second, independent writer (pure JS): its own choice of encodings, snappy, statistics.
const { parquetWriteBuffer } = await import(require.resolve('hyparquet-writer'));
{
  const rows = flat.rows;
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'i32', data: rows.map((r) => r.i32), type: 'INT32' },
      { name: 'i64', data: rows.map((r) => (r.i64 === null ? null : BigInt(r.i64))), type: 'INT64' },
      { name: 'f64', data: rows.map((r) => r.f64), type: 'DOUBLE' },
      { name: 'b', data: rows.map((r) => r.b), type: 'BOOLEAN' },
      { name: 's', data: rows.map((r) => r.s), type: 'STRING' },
      { name: 'u', data: rows.map((r) => r.u), type: 'STRING' },
    ],
    rowGroupSize: 64,
    pageSize: 200,
  });
  fs.writeFileSync(path.join(outDir, 'hyparquet_flat.parquet'), new Uint8Array(buf));
  files['hyparquet_flat.parquet'] = 'flat';
}

fs.writeFileSync(path.join(outDir, 'expected.json'), JSON.stringify({ files, tables }) + '\n');
console.log(Object.keys(files).length, 'files written to', outDir);

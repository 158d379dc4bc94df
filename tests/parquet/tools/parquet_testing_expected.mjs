// Writes tests/parquet/data/parquet-testing/expected.json: the rows of the apache/parquet-testing files that
// tests/parquet/parquet_testing_test.cpp checks cell by cell, as an independent reader (hyparquet, npm) returns
// them. Files written by parquet-mr, parquet-cpp/pyarrow, Impala and Spark; copied from apache/parquet-testing
// @1a2a75127be06fc0123f03ebd36c966f7beda27d (data/, Apache-2.0, LICENSE.txt beside them). Cells hyparquet
// converts beyond the physical value (dates, INT96 timestamps, NaN) become "__skip__"; binary that is not UTF-8
// becomes {"hex": ...}; the first 40 rows of each file are kept. Rerun (needs hyparquet under $PQGEN, see make_fixtures.mjs):
//   node tests/parquet/tools/parquet_testing_expected.mjs tests/parquet/data/parquet-testing
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const gen = process.env.PQGEN || '/tmp/pqgen';
const require = createRequire(path.join(gen, 'package.json'));
const { parquetReadObjects } = await import(require.resolve('hyparquet'));
const dir = process.argv[2];
const files = ['nested_lists.snappy.parquet', 'repeated_no_annotation.parquet', 'old_list_structure.parquet',
  'list_columns.parquet', 'null_list.parquet', 'int32_with_null_pages.parquet', 'concatenated_gzip_members.parquet',
  'rle_boolean_encoding.parquet', 'datapage_v2.snappy.parquet',
  'alltypes_plain.parquet', 'alltypes_plain.snappy.parquet', 'alltypes_dictionary.parquet',
  'nulls.snappy.parquet', 'dict-page-offset-zero.parquet', 'plain-dict-uncompressed-checksum.parquet',
  'rle-dict-snappy-checksum.parquet', 'data_index_bloom_encoding_stats.parquet', 'delta_length_byte_array.parquet',
  'repeated_primitive_no_list.parquet', 'nonnullable.impala.parquet', 'datapage_v2_empty_datapage.snappy.parquet',
  'page_v2_empty_compressed.parquet', 'fixed_length_byte_array.parquet', 'binary.parquet'];

function norm(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : { bigint: v.toString() };
  if (typeof v === 'number') return Number.isFinite(v) ? v : '__skip__';
  if (v instanceof Date) return '__skip__';
  if (v instanceof Uint8Array) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(v);
    } catch {
      return { hex: Buffer.from(v).toString('hex') };
    }
  }
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
  return v;
}

// hyparquet decodes SNAPPY itself; GZIP and BROTLI through node's zlib. (LZ4 and ZSTD files are only checked
// for readability by the C++ test: no decoder for them here.)
const compressors = {
  GZIP: (input) => new Uint8Array(zlib.gunzipSync(input)),
  BROTLI: (input) => new Uint8Array(zlib.brotliDecompressSync(input)),
};
const out = {};
for (const f of files) {
  const b = fs.readFileSync(path.join(dir, f));
  try {
    const rows = await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength), utf8: false, compressors });
    out[f] = { num_rows: rows.length, first_rows: rows.slice(0, 40).map(norm) };
  } catch (e) {
    console.log(`skipped ${f}: hyparquet: ${e.message}`);
  }
}
fs.writeFileSync(path.join(dir, 'expected.json'), JSON.stringify(out) + '\n');
console.log(Object.keys(out).length, 'files');

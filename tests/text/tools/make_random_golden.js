// Regenerates tests/text/data/pipeline_golden/random_<variant>.json: ids and code-point offsets HF's tokenizer
// (npm tokenizers@0.23.2) gives for 1,500 random strings built from a pool that mixes scripts, combining marks
// (NFC and NFD), emoji with ZWJ and skin tones, fullwidth forms, controls, whitespace runs and the tokenizers'
// special-token spellings. Compact: per string the ids, then the flattened offsets. Deterministic.
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/make_random_golden.js tests/text/data
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dataDir = process.argv[2];
const pool = [
  'the', ' the', 'The', 'quick', 'fox', 'naïve', 'nai\u0308ve', 'café', 'cafe\u0301', 'Straße', 'İ', 'ı', 'ǅ',
  'ﬁ', 'Ｆｕｌｌ', 'ｶﾞ', 'ﾊﾟ', '中文', '漢字', 'カタカナ', 'ひらがな', '한국어', 'مرحبا', 'ـٰ', 'नमस्ते', 'क्षि', 'ไทย',
  'Ελλάδα', 'ΣΑΣ', 'Москва', 'עברית', '😀', '👍🏽', '👨‍👩‍👧', '🏳️‍🌈', '🇯🇵', '∑', '½', '①', '™', '€', '$', '¥',
  '1', '23', '456', '7890', '٣', '४', "'s", "'ll", "n't", ' ', '  ', '   ', '\t', '\n', '\r\n', '\u00a0', '\u3000',
  '\u200b', '\u200d', '\u00ad', '\u0001', '\u007f', '\ufeff', '.', ',', '!', '?', '...', '—', '«', '»', '"', '(',
  ')', '[', ']', '{', '}', '<', '>', '/', '\\', '#', '@', '&', '*', '_', '-', '~', '`', '^', '|', '<mask>',
  '<s>', '</s>', '<unk>', '<|endoftext|>', '<|begin_of_text|>', '[CLS]', '[SEP]', '[MASK]', '[UNK]', '▁', '▁▁',
  'x', 'y', 'z', 'A', 'B', 'Q', 'aaaa', 'zzzzzz', 'Ω', 'Å', 'Å', 'ǰ', 'ẞ', 'ŉ', '\u0345', '\u0301\u0323',
  '\u1abf', '\ud83e\udef0', '\u{1e944}', '\u{11c3f}', '\u{1f9d1}\u200d\u{1f9b0}',
];

let seed = 987654;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const strings = [];
for (let i = 0; i < 1500; ++i) {
  let s = '';
  const n = rnd(25);
  for (let k = 0; k < n; ++k) s += pool[rnd(pool.length)];
  strings.push(s);
}
const specs = JSON.parse(fs.readFileSync(path.join(__dirname, 'random_golden_variants.json')));
(async () => {
  for (const name of specs) {
    const g = JSON.parse(fs.readFileSync(path.join(dataDir, 'pipeline_golden', `${name}.json`)));
    const j = JSON.parse(fs.readFileSync(path.join(dataDir, 'tokenizers', g.base)));
    for (const [k, v] of Object.entries(g.set || {})) j[k] = v;
    for (const [k, v] of Object.entries(g.model_set || {})) j.model[k] = v;
    const file = path.join(os.tmpdir(), `random_golden_${name}.json`);
    fs.writeFileSync(file, JSON.stringify(j));
    const tok = Tokenizer.fromFile(file);
    const out = [];
    for (const s of strings) {
      const e = await tok.encode(s, null, { addSpecialTokens: true });
      out.push([e.getIds(), e.getOffsets().flat()]);
    }
    fs.writeFileSync(path.join(dataDir, 'pipeline_golden', `random_${name}.json`),
                     JSON.stringify({ generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate)', variant: name,
                                      strings, encodings: out }));
    console.error(name);
  }
})();

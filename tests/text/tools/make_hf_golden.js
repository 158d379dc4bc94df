// Regenerates tests/text/data/hf_golden.json with HF's own tokenizer (the Rust `tokenizers` crate through its
// Node binding): `npm install tokenizers@0.23.2` somewhere, then from that folder (or with NODE_PATH=<it>/node_modules)
//   /usr/bin/python3 <repo>/tests/text/tools/make_hf_cases.py   (writes cases.json: vocab + strings)
//   node <repo>/tests/text/tools/make_hf_golden.js cases.json <repo>/tests/text/data/hf_golden.json
// Not run by the test suite (nothing is downloaded at test time); the JSON it writes is.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [casesPath, outPath] = process.argv.slice(2);
const cases = JSON.parse(fs.readFileSync(casesPath));
const configs = {
  A: { lowercase: true, strip_accents: null, handle_chinese_chars: true, clean_text: true },
  B: { lowercase: false, strip_accents: null, handle_chinese_chars: true, clean_text: true },
  C: { lowercase: true, strip_accents: false, handle_chinese_chars: true, clean_text: true },
  D: { lowercase: false, strip_accents: true, handle_chinese_chars: false, clean_text: true },
  E: { lowercase: true, strip_accents: null, handle_chinese_chars: true, clean_text: false },
};
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

(async () => {
  const expected = {};
  for (const [name, cfg] of Object.entries(configs)) {
    const vocab = {};
    cases.vocab.forEach((t, i) => { vocab[t] = i; });
    const tj = {
      version: '1.0', truncation: null, padding: null,
      added_tokens: specials.map((t) => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
                                           normalized: false, special: true })),
      normalizer: { type: 'BertNormalizer', ...cfg },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: null,
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
               vocab },
    };
    const file = path.join(os.tmpdir(), `hf_golden_${name}.json`);
    fs.writeFileSync(file, JSON.stringify(tj));
    const tok = Tokenizer.fromFile(file);
    const res = [];
    for (const s of cases.strings) {
      const enc = await tok.encode(s, null, { addSpecialTokens: false });
      const ids = enc.getIds(), offs = enc.getOffsets();  // offsets in code points
      res.push(ids.map((id, i) => [id, offs[i][0], offs[i][1]]));
    }
    expected[name] = res;
  }
  const out = { generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate)', configs, vocab: cases.vocab,
                strings: cases.strings, expected };
  fs.writeFileSync(outPath, JSON.stringify(out));
})();

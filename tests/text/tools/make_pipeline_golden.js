// Regenerates tests/text/data/pipeline_golden/<variant>.json: what HF's own tokenizer (the Rust `tokenizers` crate through
// its Node binding, npm tokenizers@0.23.2) gives for the tokenizer.json files under data/tokenizers/ and variants
// of them, on the strings of data/hf_golden.json plus make_pipeline_golden's own (multilingual, emoji, added
// tokens, whitespace runs), singles and pairs, with truncation windows. Not run by the tests (no Node there).
//   cd /tmp/x && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/make_pipeline_golden.js tests/text/data
//
// 0.23.x stops tokenizing a sequence once it holds max_length tokens (huggingface/tokenizers#2091), which cuts
// overflow windows short; the window cases here keep every sequence at or under max_length tokens, where 0.23
// and 0.22 agree, and still overflow through the pair and the special tokens.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dataDir = process.argv[2];
const base = JSON.parse(fs.readFileSync(path.join(dataDir, 'hf_golden.json')));
const tokDir = path.join(dataDir, 'tokenizers');

const extra = [
  '', ' ', '  ', '\t\n', 'Hello world', ' Hello world', 'Hello  world   ', 'Hello\n\nworld\t\tend',
  "I'm sure they'll say it's John's; we've done what we'd do", "DON'T SHOUT, 'tis fine",
  'The year 1999 had 365 days and 8760 hours; π≈3.14159', '12345678901234567890',
  'Ça va? Où est la bibliothèque? Ærøskøbing, Ångström', 'Straße, Fußgänger, ÄÖÜ äöü',
  'Привет, как дела? Ёжик в тумане.', 'Γειά σου Κόσμε· ΑΘΗΝΑ', 'שלום עולם', 'مرحبا بالعالم، كيف حالك؟',
  'नमस्ते दुनिया, क्षत्रिय', 'สวัสดีชาวโลก', '你好，世界！今天天气很好。', 'こんにちは世界、カタカナとひらがな',
  '안녕하세요 세계', 'ｶﾞｷﾞｸﾞ ﾊﾝｶｸ', 'ﬁﬂ ﬀ ㍿ ℃ ™ ½ ①②③', 'Ｆｕｌｌｗｉｄｔｈ　ｓｐａｃｅ',
  '👋🏽 hi 👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 🇫🇷 👍', '😀😃😄😁', 'e\u0301 vs é, n\u0303 vs ñ, a\u0308\u0301',
  'Ä\u0323\u0307 q\u0307\u0323 ệ', '\u1100\u1161\u11a8 각', 'tab\there', 'nbsp\u00a0here', 'zero\u200bwidth',
  'line\u2028sep', 'ideo\u3000space', 'ctrl\u0001\u0002chars\u007f', 'soft\u00adhyphen',
  'supercalifragilisticexpialidocious', 'a'.repeat(120), 'x'.repeat(40) + 'y'.repeat(40),
  'https://example.com/path?q=1&r=two#frag', 'user@example.org', 'C++ and C# and F#', '$100.00 or €85,50',
  '<s>Hello</s>', 'Hello<mask>world', 'Hello <mask> world', 'Hello  <mask>  world', 'x<mask>', '<mask>',
  '<unk><unk>', '</s></s>', '<|endoftext|>tail', 'head<|endoftext|>', '<|begin_of_text|>Hi<|end_of_text|>',
  '[CLS] hi [SEP]', '<pad>pad', 'Ünïcödé <mask>', '   leading', 'trailing   ', '\n\nnewlines\n\n',
  'mixed English 和中文 and العربية and हिन्दी', 'numbers ١٢٣ ४५६ ໑໒', 'math 𝔾𝕠𝕠𝕕 𝒶𝒷𝒸',
  'Ⅻ Ⅳ ⅷ', 'ǅ ǈ ǋ', 'wor world wor. ⓐ xⓐ ⓐ1 ist  istanbul [MASK]x  [MASK] ZÜRICH zurich  café  CAFÉ', 'İIıi', 'ΣΑΣ σας', 'ﷺ ﷻ', '…', '—–-', '«»„“”‘’', '¿¡', '♥♦♣♠',
];

const strings = base.strings.concat(extra);

function readTok(name) { return JSON.parse(fs.readFileSync(path.join(tokDir, name))); }

function variant(spec) {
  const j = readTok(spec.base);
  for (const [k, v] of Object.entries(spec.set || {})) j[k] = v;
  for (const [k, v] of Object.entries(spec.model_set || {})) j.model[k] = v;
  const file = path.join(os.tmpdir(), `pipeline_golden_${spec.name}.json`);
  fs.writeFileSync(file, JSON.stringify(j));
  return Tokenizer.fromFile(file);
}

const added = (content, id, o = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                          normalized: false, special: true, ...o });
const llama3Split = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const qwen2Split = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const specs = [
  { name: 'gpt2', base: 'gpt2.json' },
  { name: 'roberta', base: 'gpt2.json', set: {
      added_tokens: [added('<|endoftext|>', 50256), added('<mask>', 50257, { lstrip: true })],
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', 50256], cls: ['<|endoftext|>', 50256],
                        trim_offsets: true, add_prefix_space: false } } },
  { name: 'roberta_prefix', base: 'gpt2.json', set: {
      added_tokens: [added('<|endoftext|>', 50256), added('<mask>', 50257, { lstrip: true, rstrip: true })],
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', 50256], cls: ['<|endoftext|>', 50256],
                        trim_offsets: true, add_prefix_space: true } } },
  { name: 'llama3_style', base: 'gpt2.json', model_set: { ignore_merges: true }, set: {
      added_tokens: [added('<|begin_of_text|>', 50257), added('<|end_of_text|>', 50258), added('<|endoftext|>', 50256)],
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: llama3Split }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
      post_processor: { type: 'Sequence', processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        { type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
                 { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
          special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [50257], tokens: ['<|begin_of_text|>'] } } }] } } },
  { name: 'qwen2_style', base: 'gpt2.json', set: {
      normalizer: { type: 'NFC' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: qwen2Split }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] } } },
  { name: 'modernbert_style', base: 'gpt2.json', set: {
      added_tokens: [added('<|endoftext|>', 50256), added('[CLS]', 50257), added('[SEP]', 50258),
                     added('[MASK]', 50259, { lstrip: true })],
      post_processor: { type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
                 { SpecialToken: { id: '[SEP]', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
               { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } },
               { SpecialToken: { id: '[SEP]', type_id: 0 } }],
        special_tokens: { '[CLS]': { id: '[CLS]', ids: [50257], tokens: ['[CLS]'] },
                          '[SEP]': { id: '[SEP]', ids: [50258], tokens: ['[SEP]'] } } } } },
  { name: 'llama2_style', base: 'llama2_style.json' },
  { name: 'llama2_nonlegacy', base: 'llama2_style.json', set: {
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false } } },
  { name: 'xlmr_style', base: 'unigram_nmt.json' },
  { name: 'unigram_plain', base: 'unigram_plain.json' },
  { name: 'bert', base: 'bert.json' },
  { name: 'added_flags', base: 'bert.json', set: {
      added_tokens: [added('[PAD]', 0), added('[UNK]', 1), added('[CLS]', 2), added('[SEP]', 3),
                     added('[MASK]', 4, { single_word: true, lstrip: true }),
                     added('ZÜRICH', 391, { normalized: true, special: false }),
                     added('wor', 392, { single_word: true, special: false }),
                     added('ist', 393, { rstrip: true, special: false }),
                     added('\u24d0', 394, { single_word: true }),
                     added('café', 395, { normalized: true, lstrip: true, rstrip: true, special: false })] } },
  { name: 'bert_misc', base: 'bert.json', set: {
      normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' },
        { type: 'Replace', pattern: { Regex: '\\d+' }, content: '0' }, { type: 'Strip', strip_left: true, strip_right: true }] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' },
        { type: 'Digits', individual_digits: true }, { type: 'Punctuation', behavior: 'MergedWithPrevious' }] } } },
];

function fields(e, withTokens) {
  const o = { ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets(),
              special: e.getSpecialTokensMask(), words: e.getWordIds().map((w) => (w === null || w === undefined ? -1 : w)),
              seq: e.getSequenceIds().map((w) => (w === null || w === undefined ? -1 : w)),
              attn: e.getAttentionMask() };
  if (withTokens) o.tokens = e.getTokens();
  const over = e.getOverflowing();
  if (over.length) o.overflowing = over.map((x) => fields(x, withTokens));
  return o;
}

// A cheap deterministic generator so the sampled pairs do not change between runs.
let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };

(async () => {
  fs.mkdirSync(path.join(dataDir, 'pipeline_golden'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'pipeline_golden', 'strings.json'), JSON.stringify(strings));
  const step = Number(process.env.STEP || 1);
  for (const spec of specs) {
    const tok = variant(spec);
    const singles = [];
    for (let i = 0; i < strings.length; i += step) {
      const e = await tok.encode(strings[i], null, { addSpecialTokens: true });
      singles.push([i, fields(e, true), await tok.decode(e.getIds(), true)]);
    }
    // One text cut into windows: only through the special tokens (see the top), so only where there are some.
    const truncated = [];
    for (let i = 0; i < strings.length; i += 7) {
      const n = (await tok.encode(strings[i], null, { addSpecialTokens: false })).getIds().length;
      const specials = (await tok.encode(strings[i], null, { addSpecialTokens: true })).getIds().length - n;
      if (specials === 0 || n < 2) continue;
      const maxLen = n + rnd(specials);
      const window = maxLen - specials;
      const stride = window > 1 ? rnd(2) : 0;
      tok.setTruncation(maxLen, { stride, direction: i % 3 === 0 ? 'left' : 'right' });
      const e = await tok.encode(strings[i], null, { addSpecialTokens: true });
      truncated.push({ i, max_length: maxLen, stride, left: i % 3 === 0, enc: fields(e, true) });
      tok.disableTruncation();
    }
    const pairs = [];
    for (let k = 0; k < 60; ++k) {
      const a = rnd(strings.length), b = rnd(strings.length);
      tok.disableTruncation();
      const full = await tok.encode(strings[a], strings[b], { addSpecialTokens: true });
      const entry = { a, b, full: fields(full, true) };
      // Window case: lengths of each sequence alone (no specials) bound max_length from below (see top).
      const ea = await tok.encode(strings[a], null, { addSpecialTokens: false });
      const eb = await tok.encode(strings[b], null, { addSpecialTokens: false });
      const na = ea.getIds().length, nb = eb.getIds().length;
      const strategies = ['LongestFirst', 'OnlySecond', 'OnlyFirst'];
      const strategy = strategies[k % 3];
      const specials = full.getIds().length - na - nb;
      const maxLen = Math.max(na, nb) + 1 + rnd(4) + specials;
      // HF panics (no error) when a window is not longer than the stride; keep the stride below every window.
      const eff = maxLen - specials;
      let w1 = na, w2 = nb;
      if (na + nb > eff) {
        if (strategy === 'OnlyFirst') w1 = na - (na + nb - eff);
        else if (strategy === 'OnlySecond') w2 = nb - (na + nb - eff);
        else {
          let n1 = Math.min(na, nb), n2 = Math.max(na, nb);
          n2 = n1 > eff ? n1 : Math.max(n1, eff - n1);
          if (n1 + n2 > eff) { n1 = Math.floor(eff / 2); n2 = n1 + (eff % 2); }
          if (na > nb) [n1, n2] = [n2, n1];
          w1 = Math.min(na, n1); w2 = Math.min(nb, n2);
        }
      }
      let stride = rnd(3);
      for (const w of [w1, w2]) if (w > 0 && stride >= w) stride = 0;
      try {
        tok.setTruncation(maxLen, { strategy, stride, direction: k % 7 === 6 ? 'left' : 'right' });
        const t = await tok.encode(strings[a], strings[b], { addSpecialTokens: true });
        entry.trunc = { max_length: maxLen, stride, strategy, left: k % 7 === 6, enc: fields(t, false) };
      } catch (err) {
        entry.trunc = { max_length: maxLen, stride, strategy, left: k % 7 === 6, error: String(err).slice(0, 80) };
      }
      tok.disableTruncation();
      if (k % 3 === 0) {
        const len = full.getIds().length + rnd(5);
        const left = k % 2 === 0, multiple = k % 9 === 0 ? 8 : 0;
        tok.setPadding({ maxLength: len, direction: left ? 'left' : 'right', ...(multiple ? { padToMultipleOf: multiple } : {}) });
        const p = await tok.encode(strings[a], strings[b], { addSpecialTokens: true });
        entry.padded = { length: len, left, multiple, enc: fields(p, true) };
        tok.disablePadding();
      }
      pairs.push(entry);
    }
    const out = { generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate)', ...spec, singles, truncated, pairs };
    fs.writeFileSync(path.join(dataDir, 'pipeline_golden', `${spec.name}.json`), JSON.stringify(out));
    console.error(spec.name, singles.length, truncated.length, pairs.length);
  }
})();

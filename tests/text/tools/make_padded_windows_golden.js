// Regenerates tests/text/data/padded_windows_golden.json: question/context pairs cut into only_second stride
// windows and padded to max_length, as a transformers tokenizer call pads them, for tokenizer folders whose pad
// token is not [PAD] / id 0. transformers (PreTrainedTokenizerFast.set_truncation_and_padding) calls the Rust
// tokenizer's enable_padding with the tokenizer's pad_token, pad_token_id, pad_token_type_id and padding_side:
// tokenizer_config.json's values, else those of tokenizer.json's `padding` section, which __init__ takes only as
// defaults (setdefault), the id looked up from the token. This script applies that rule to each case and hands
// the result to HF's own tokenizer (npm tokenizers@0.23.2, the Rust crate's Node binding); the test runs
// `coretrain tokenize` on the same folder and compares every field. Not run by the tests (no Node there).
//   cd /tmp/x && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/make_padded_windows_golden.js tests/text/data
//
// As in make_pipeline_golden.js, every sequence stays at or under max_length tokens (0.23 stops tokenizing a
// sequence at max_length, huggingface/tokenizers#2091); the windows come from the pair and the special tokens.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dataDir = process.argv[2];
const strings = JSON.parse(fs.readFileSync(path.join(dataDir, 'pipeline_golden', 'strings.json')));
const tokDir = path.join(dataDir, 'tokenizers');
const goldenSpec = (name) => {
  const g = JSON.parse(fs.readFileSync(path.join(dataDir, 'pipeline_golden', `${name}.json`)));
  return { base: g.base, ...(g.set ? { set: g.set } : {}), ...(g.model_set ? { model_set: g.model_set } : {}) };
};

const filePadding = (token, id, typeId, direction) => ({
  strategy: 'BatchLongest', direction, pad_to_multiple_of: null, pad_id: id, pad_type_id: typeId, pad_token: token,
});

const cases = [
  // XLM-R's shape: <pad> is id 1.
  { name: 'xlmr_pad', ...goldenSpec('xlmr_style'), config: { tokenizer_class: 'XLMRobertaTokenizer', pad_token: '<pad>' },
    max_length: 24, stride: 4 },
  // GPT-2 / RoBERTa byte-level BPE padded with its end-of-text token (id 50256), as decoders are.
  { name: 'roberta_eos_pad', ...goldenSpec('roberta'),
    config: { tokenizer_class: 'RobertaTokenizer', pad_token: '<|endoftext|>' }, max_length: 24, stride: 4 },
  // Llama-2's shape padded on the left with </s> (id 2).
  { name: 'llama2_left', ...goldenSpec('llama2_style'),
    config: { tokenizer_class: 'LlamaTokenizer', pad_token: '</s>', padding_side: 'left' }, max_length: 24, stride: 4 },
  // No tokenizer_config.json: the file's padding section gives token, type id and side.
  { name: 'unigram_file_padding', base: 'unigram_plain.json',
    set: { padding: filePadding('[UNK]', 3, 1, 'Left') }, config: null, max_length: 24, stride: 4 },
  // tokenizer_config.json's pad_token wins over the section's; the side still comes from the section.
  { name: 'unigram_config_over_file', base: 'unigram_plain.json',
    set: { padding: filePadding('[UNK]', 3, 0, 'Left') }, config: { pad_token: '[PAD]' }, max_length: 24, stride: 4 },
];

function variantFile(spec) {
  const j = JSON.parse(fs.readFileSync(path.join(tokDir, spec.base)));
  for (const [k, v] of Object.entries(spec.set || {})) j[k] = v;
  for (const [k, v] of Object.entries(spec.model_set || {})) j.model[k] = v;
  const file = path.join(os.tmpdir(), `padded_windows_${spec.name}.json`);
  fs.writeFileSync(file, JSON.stringify(j));
  return { file, json: j };
}

// transformers' rule (see the top).
function callPadding(tokJson, config, tok) {
  const section = tokJson.padding || null;
  const has = (k) => config && Object.prototype.hasOwnProperty.call(config, k);
  const token = has('pad_token') ? config.pad_token : section ? section.pad_token : null;
  if (token === null) throw new Error('no pad token');
  const id = tok.tokenToId(token);
  if (id === null || id === undefined) throw new Error(`pad token ${token} not in the vocabulary`);
  const typeId = has('pad_token_type_id') ? config.pad_token_type_id : section ? section.pad_type_id : 0;
  const side = has('padding_side') ? config.padding_side : section ? section.direction.toLowerCase() : 'right';
  return { pad_id: id, pad_token: token, pad_type_id: typeId, left: side === 'left' };
}

function fields(e) {
  const o = { ids: e.getIds(), type_ids: e.getTypeIds(), tokens: e.getTokens(), offsets: e.getOffsets(),
              attention_mask: e.getAttentionMask(), special_tokens_mask: e.getSpecialTokensMask() };
  const over = e.getOverflowing();
  if (over.length) o.overflowing = over.map(fields);
  return o;
}

let seed = 4242;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };

(async () => {
  const out = { generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate), padded as transformers pads',
                cases: [] };
  for (const spec of cases) {
    const { file, json } = variantFile(spec);
    const tok = Tokenizer.fromFile(file);
    const params = callPadding(json, spec.config, tok);
    const lens = [];
    for (const s of strings) lens.push((await tok.encode(s, null, { addSpecialTokens: false })).getIds().length);
    const pairSpecials = (await tok.encode('a', 'b', { addSpecialTokens: true })).getIds().length -
      (await tok.encode('a', null, { addSpecialTokens: false })).getIds().length -
      (await tok.encode('b', null, { addSpecialTokens: false })).getIds().length;
    const questions = [], contexts = [];
    strings.forEach((s, i) => {
      if (lens[i] >= 1 && lens[i] <= 6) questions.push(i);
      if (lens[i] >= 14 && lens[i] <= spec.max_length) contexts.push(i);
    });
    const pairs = [];
    for (let k = 0; k < 25; ++k) {
      const a = questions[rnd(questions.length)], b = contexts[rnd(contexts.length)];
      if (lens[a] + pairSpecials + spec.stride >= spec.max_length) continue;
      tok.setTruncation(spec.max_length, { strategy: 'OnlySecond', stride: spec.stride });
      tok.setPadding({ maxLength: spec.max_length, direction: params.left ? 'left' : 'right', padId: params.pad_id,
                       padTypeId: params.pad_type_id, padToken: params.pad_token });
      const e = await tok.encode(strings[a], strings[b], { addSpecialTokens: true });
      pairs.push({ text: strings[a], text_pair: strings[b], enc: fields(e) });
      tok.disablePadding();
      tok.disableTruncation();
    }
    const { name, base, set, model_set, config, max_length, stride } = spec;
    out.cases.push({ name, base, ...(set ? { set } : {}), ...(model_set ? { model_set } : {}), config, max_length,
                     stride, padding: params, pairs });
    const windows = pairs.reduce((n, p) => n + 1 + (p.enc.overflowing || []).length, 0);
    console.error(name, pairs.length, 'pairs', windows, 'windows', params);
  }
  fs.writeFileSync(path.join(dataDir, 'padded_windows_golden.json'), JSON.stringify(out));
})();

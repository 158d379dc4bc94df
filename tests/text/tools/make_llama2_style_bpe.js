// Writes tests/text/data/tokenizers/llama2_style.json: a SentencePiece-style BPE shaped as Llama-2's
// tokenizer.json (legacy normalizer Prepend + Replace, no pre-tokenizer, <0xNN> byte fallback, fused <unk>,
// <s> template), with a vocab HF's own BPE trainer learns on a small corpus of half the golden strings (so the
// other half meets characters only byte fallback can spell). Llama-2's real file is not committed (Meta's
// license); this one has its shape.
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/make_llama2_style_bpe.js tests/text/data
const { Tokenizer, BPE, metaspacePreTokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dataDir = process.argv[2];
const strings = JSON.parse(fs.readFileSync(path.join(dataDir, 'pipeline_golden', 'strings.json')));
const base = [
  'The quick brown fox jumps over the lazy dog. Tokenization splits text into subword units.',
  'Machine learning models are trained on large corpora of text in many languages.',
  'Question answering systems read a context and find the answer span inside it.',
  'Le chat est sur la table et le chien dort dans le jardin. Der Hund läuft schnell im Park.',
  'El niño come una manzana roja. Привет, как дела? 你好，世界！ こんにちは世界',
];
const lines = [];
for (let k = 0; k < 20; ++k) lines.push(...base);
strings.forEach((s, i) => { if (i % 2 === 0) lines.push(s.replace(/\n/g, ' ')); });
const corpus = path.join(os.tmpdir(), 'llama2_style_corpus.txt');
fs.writeFileSync(corpus, lines.join('\n') + '\n');

const tok = new Tokenizer(BPE.empty());
tok.setPreTokenizer(metaspacePreTokenizer('\u2581', 'always', true));
tok.train([corpus]);
const trained = path.join(os.tmpdir(), 'llama2_style_trained.json');
tok.save(trained);
const m = JSON.parse(fs.readFileSync(trained)).model;

const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
for (let b = 0; b < 256; ++b) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
let next = 259;
for (const t of Object.keys(m.vocab).sort((a, b) => m.vocab[a] - m.vocab[b])) {
  if (!(t in vocab)) vocab[t] = next++;
}
const added = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false,
                                  special: true });
const out = {
  version: '1.0', truncation: null, padding: null,
  added_tokens: [added('<unk>', 0), added('<s>', 1), added('</s>', 2)],
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' },
                                                { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
  pre_tokenizer: null,
  post_processor: { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
           { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
  decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
    { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
           fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab,
           // The [a, b] form (tokenizers >= 0.20); gpt2.json has the legacy "a b" form.
           merges: m.merges },
};
fs.writeFileSync(path.join(dataDir, 'tokenizers', 'llama2_style.json'), JSON.stringify(out));

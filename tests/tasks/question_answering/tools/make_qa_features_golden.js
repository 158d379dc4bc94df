// Regenerates tests/tasks/question_answering/data/qa_features/golden_<variant>.json: run_qa.py's prepare_train_features and
// prepare_validation_features (transformers examples/pytorch/question-answering, fast tokenizer, pad_on_right)
// on ../qa_features/examples.json, with HF's own tokenizer (the Rust crate through its Node binding, npm
// tokenizers@0.23.2) for the tokenizer.json variants of ../qa_features/variants.json (RoBERTa-shaped byte-level
// BPE, XLM-R-shaped Unigram, BERT WordPiece; files under tests/text/data/tokenizers/). Not run by the tests.
//   cd /tmp/x && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/x/node_modules node tests/tasks/question_answering/tools/make_qa_features_golden.js tests
//
// 0.23.x stops tokenizing a sequence once it holds max_length tokens (huggingface/tokenizers#2091), which cuts
// overflow windows short; max_length here is the longest context's token count, so every sequence fits and
// the pair still overflows into several windows (doc_stride near the smallest window). The texts stay inside
// the BMP, so JavaScript's UTF-16 indices are Python's code-point indices.
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const testsDir = process.argv[2];
const qaDir = path.join(testsDir, 'data', 'qa_features');
const tokDir = path.join(testsDir, 'text', 'data', 'tokenizers');
const variants = JSON.parse(fs.readFileSync(path.join(qaDir, 'variants.json')));
const squad = JSON.parse(fs.readFileSync(path.join(qaDir, 'examples.json')));

const examples = [];
for (const art of squad.data)
  for (const p of art.paragraphs)
    for (const q of p.qas)
      examples.push({ id: q.id, question: q.question, context: p.context,
                      answers: { text: q.answers.map((a) => a.text), answer_start: q.answers.map((a) => a.answer_start) } });

(async () => {
  for (const [name, v] of Object.entries(variants)) {
    const j = JSON.parse(fs.readFileSync(path.join(tokDir, v.base)));
    for (const [k, val] of Object.entries(v.set)) j[k] = val;
    const file = path.join(os.tmpdir(), `qa_features_${name}.json`);
    fs.writeFileSync(file, JSON.stringify(j));
    const tok = Tokenizer.fromFile(file);
    const clsId = tok.tokenToId(v.cls);
    const padId = tok.tokenToId(v.pad);
    let maxCtx = 0, maxQ = 0;
    for (const ex of examples) {
      maxCtx = Math.max(maxCtx, (await tok.encode(ex.context, null, { addSpecialTokens: false })).getIds().length);
      maxQ = Math.max(maxQ, (await tok.encode(ex.question.trimStart(), null, { addSpecialTokens: false })).getIds().length);
    }
    const specials = (await tok.encode('a', 'a', { addSpecialTokens: true })).getIds().length -
                     2 * (await tok.encode('a', null, { addSpecialTokens: false })).getIds().length;
    const maxLength = maxCtx;
    const docStride = Math.max(0, maxLength - maxQ - specials - 5);
    tok.setTruncation(maxLength, { stride: docStride, strategy: 'OnlySecond' });
    tok.setPadding({ maxLength, padId, padToken: v.pad });
    const features = [];
    for (const ex of examples) {
      const e = await tok.encode(ex.question.trimStart(), ex.context, { addSpecialTokens: true });
      const windows = [e, ...e.getOverflowing()];
      for (const w of windows) {
        const ids = w.getIds(), offsets = w.getOffsets();
        const seq = w.getSequenceIds().map((s) => (s === null || s === undefined ? -1 : s));
        // prepare_train_features
        const cls = ids.indexOf(clsId) >= 0 ? ids.indexOf(clsId) : 0;
        let start = cls, end = cls;
        if (ex.answers.answer_start.length > 0) {
          const startChar = ex.answers.answer_start[0];
          const endChar = startChar + ex.answers.text[0].length;
          let ts = 0;
          while (seq[ts] !== 1) ts += 1;
          let te = ids.length - 1;
          while (seq[te] !== 1) te -= 1;
          if (offsets[ts][0] <= startChar && offsets[te][1] >= endChar) {
            while (ts < offsets.length && offsets[ts][0] <= startChar) ts += 1;
            start = ts - 1;
            while (offsets[te][1] >= endChar) te -= 1;
            end = te + 1;
          }
        }
        // Padding (padding="max_length") is stored as its length only: the rows end at the attention mask's end.
        const n = w.getAttentionMask().reduce((a, b) => a + b, 0);
        features.push({
          example_id: ex.id, input_ids: ids.slice(0, n), token_type_ids: w.getTypeIds().slice(0, n),
          padding: ids.slice(n).every((x) => x === padId) ? ids.length - n : -1,
          start_positions: start, end_positions: end,
          // prepare_validation_features: offsets of the context only
          offset_mapping: offsets.slice(0, n).map((o, k) => (seq[k] === 1 ? o : null)),
        });
      }
    }
    const out = { generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate), run_qa.py preprocessing',
                  variant: name, max_seq_length: maxLength, doc_stride: docStride, features };
    fs.writeFileSync(path.join(qaDir, `golden_${name}.json`), JSON.stringify(out));
    console.error(name, 'max_seq_length', maxLength, 'doc_stride', docStride, 'features', features.length);
  }
})();

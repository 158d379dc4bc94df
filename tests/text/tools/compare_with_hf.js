// Checks `coretrain tokenize` against HF's own tokenizer (npm tokenizers@0.23.2) on any tokenizer.json, e.g. the
// large real files that are not committed (Llama-3, Gemma, Llama-2):
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/compare_with_hf.js <coretrain> <tokenizer.json> <strings.json>
// strings.json: a JSON list of strings (tests/text/data/pipeline_golden/strings.json). Singles and consecutive
// pairs, with special tokens; prints the first differences and a count.
const { Tokenizer } = require('tokenizers');
const { execFileSync } = require('child_process');
const fs = require('fs');

const [bin, tokPath, stringsPath] = process.argv.slice(2);
const strings = JSON.parse(fs.readFileSync(stringsPath));
const tok = Tokenizer.fromFile(tokPath);
const inputs = strings.map((s) => ({ text: s }));
for (let i = 0; i + 1 < strings.length; i += 2) inputs.push({ text: strings[i], text_pair: strings[i + 1] });
const ours = execFileSync(bin, ['tokenize', '--tokenizer_name', tokPath],
                          { input: inputs.map((x) => JSON.stringify(x)).join('\n') + '\n', maxBuffer: 1 << 30 })
  .toString().trim().split('\n').map((l) => JSON.parse(l));

const norm = (v) => (v === null || v === undefined ? null : v);
(async () => {
  let bad = 0;
  for (let k = 0; k < inputs.length; ++k) {
    const e = await tok.encode(inputs[k].text, inputs[k].text_pair ?? null, { addSpecialTokens: true });
    const want = { ids: e.getIds(), type_ids: e.getTypeIds(), tokens: e.getTokens(), offsets: e.getOffsets(),
                   special_tokens_mask: e.getSpecialTokensMask(), word_ids: e.getWordIds().map(norm),
                   sequence_ids: e.getSequenceIds().map(norm), attention_mask: e.getAttentionMask() };
    const got = ours[k];
    for (const key of Object.keys(want)) {
      if (JSON.stringify(want[key]) !== JSON.stringify(got[key])) {
        if (++bad <= 5) console.log(`#${k} ${JSON.stringify(inputs[k]).slice(0, 120)}\n ${key} got  ${JSON.stringify(got[key]).slice(0, 300)}\n ${key} want ${JSON.stringify(want[key]).slice(0, 300)}`);
        break;
      }
    }
  }
  console.log(`${tokPath}: ${inputs.length - bad}/${inputs.length} encodings equal`);
  process.exitCode = bad ? 1 : 0;
})();

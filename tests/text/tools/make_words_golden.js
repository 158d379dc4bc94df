// Regenerates tests/text/data/words_golden/: what HF's own tokenizer (the Rust `tokenizers` crate through its Node
// binding, npm tokenizers@0.23.2) gives for pre-split words (transformers' is_split_into_words, which run_ner
// uses), for the tokenizer variants of data/pipeline_golden/ (each golden file there names its base file and the
// parts it replaces), singles, pairs, stride windows and padding. Not run by the tests (no Node there).
//   cd /tmp/x && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/x/node_modules node tests/text/tools/make_words_golden.js tests/text/data
//
// The binding ignores `isPretokenized`, so the Rust path is rebuilt from binding calls that run the same Rust
// code (tokenizers/src/tokenizer/mod.rs, 0.22/0.23):
//   - encode_single_sequence(InputSequence::PreTokenized) runs added-token extraction, normalizer, pre-tokenizer
//     and model on each word as its own string and collects the words' encodings with Encoding::merge(_, false):
//     here each word is `encode(word, null, {addSpecialTokens: false})` on a copy of the tokenizer without
//     post-processor, truncation or padding (post_process with none of them returns the encoding as it is), and
//     `mergeEncodings(words, false)`: offsets stay relative to their word, in code points.
//   - post_process (truncation, post-processor, padding) is the binding's `postProcess` on the real tokenizer,
//     which is what encode_char_offsets calls after encode_single_sequence.
// Two fields need a second run of the same post_process on inputs of the same lengths:
//   - word ids: do_tokenize gives every token of word i the word id i; a raw encode gives its split index. A
//     WordLevel tokenizer ("t0".."tN", same post-processor, truncation and padding) post-processes the token
//     positions, so each output token of a sequence names its position before truncation, hence its word.
//   - the pair's type ids: encode_single_sequence(pair, 1) gives its tokens type id 1, a raw encode 0; what
//     survives of them (post-processors that keep type ids, ByteLevel alone; overflow windows, which
//     TemplateProcessing leaves as they come) is HF's. The pair's words are encoded again through a
//     TemplateProcessing "$A:1" without special tokens, which sets type id 1 but also gives each word a sequence
//     range that Encoding::merge carries along (a raw PreTokenized encoding has none), so only type ids are
//     taken from that run.
// Check of the method: a one-word list gives what a plain encode of that word gives (ids, offsets, type and
// sequence ids; 45 of 45 for each of roberta_ner, xlmr_style, bert, llama2_nonlegacy).
const { Tokenizer, mergeEncodings } = require('tokenizers');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dataDir = process.argv[2];
const tokDir = path.join(dataDir, 'tokenizers');
const pipeDir = path.join(dataDir, 'pipeline_golden');
const outDir = path.join(dataDir, 'words_golden');

const variants = ['gpt2', 'roberta', 'roberta_prefix', 'roberta_ner', 'llama3_style', 'qwen2_style', 'modernbert_style',
                  'llama2_style', 'llama2_nonlegacy', 'xlmr_style', 'unigram_plain', 'bert', 'added_flags',
                  'bert_misc'];
// The variants run_ner meets most (RoBERTa as RobertaTokenizerFast.from_pretrained(add_prefix_space=True) builds
// it, which run_ner does for RoBERTa and GPT-2 because transformers refuses pre-split words without it; XLM-R;
// BERT; Llama-2 Metaspace "first") get every word list, the others a sample.
const full = new Set(['roberta_ner', 'xlmr_style', 'bert', 'llama2_nonlegacy']);
// roberta_ner is the `roberta` variant after RobertaTokenizerFast(add_prefix_space=True, trim_offsets=True):
// ByteLevel and RobertaProcessing with add_prefix_space, `<mask>` lstrip (tokenize_command_test builds it from
// the `roberta` variant and a tokenizer_config.json through `coretrain tokenize --add_prefix_space`).
const extraSpecs = {
  roberta_ner: { name: 'roberta_ner', base: 'gpt2.json', set: {
    added_tokens: [
      { id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 50257, content: '<mask>', single_word: false, lstrip: true, rstrip: false, normalized: false, special: true }],
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', 50256], cls: ['<|endoftext|>', 50256],
                      trim_offsets: true, add_prefix_space: true } } },
};

// CoNLL-2003-like sentences (punctuation split off, as the dataset has it) and other languages' NER-style ones.
const conll = [
  'EU rejects German call to boycott British lamb .', 'Peter Blackburn', 'BRUSSELS 1996-08-22',
  'The European Commission said on Thursday it disagreed with German advice to consumers to shun British lamb until scientists determine whether mad cow disease can be transmitted to sheep .',
  "Germany 's representative to the European Union 's veterinary committee Werner Zwingmann said on Wednesday consumers should buy sheepmeat from countries other than Britain until the scientific advice was clearer .",
  '" We do n\'t support any such recommendation because we do n\'t see any grounds for it , " the Commission \'s chief spokesman Nikolaus van der Pas told a news briefing .',
  'SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT .', 'Nadim Ladki', 'AL-AIN , United Arab Emirates 1996-12-06',
  'Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria in a Group C championship match on Friday .',
  'Hapoel Haifa 3 Maccabi Tel Aviv 1', 'CRICKET - LEICESTERSHIRE TAKE OVER AT TOP AFTER INNINGS VICTORY .',
  'Results of South Korean K-League soccer matches on Saturday : Ulsan 2 ( Hyundai ) 1 Pohang 0',
  'Der Bundestag stimmte am Donnerstag in Berlin über das Gesetz ab .', 'Müller traf zweimal für Bayern München .',
  'El presidente del Gobierno , José Luis Rodríguez Zapatero , viajó a Bogotá .',
  'De Nederlandse premier Mark Rutte sprak in Den Haag met Ángela Merkel .',
  'Владимир Путин встретился в Москве с Си Цзиньпином .', 'Ο Αλέξης Τσίπρας επισκέφθηκε την Αθήνα .',
  'محمد بن سلمان زار القاهرة يوم الأحد .', 'नरेंद्र मोदी ने नई दिल्ली में भाषण दिया ।',
  '東京 都 の 小池 百合子 知事 が 会見 し た 。', '北京 大学 的 王 教授 访问 了 上海 。', '서울 시장 은 부산 을 방문 했다 .',
  'Apple Inc. CEO Tim Cook announced the iPhone 15 in Cupertino , California .',
  'e-mail john.doe@example.com or visit https://example.org/a?b=1 #NER @user',
  'The U.S. , U.K. and E.U. signed the 2,500-page treaty on 3/4/2021 at 10:30am .',
];

const edge = [
  [], [''], ['', ''], ['', 'a'], ['a', ''], [' '], ['  '], [' ', 'a', ' '], ['\t'], ['\n'], ['a b'], [' a'], ['a '],
  ['  leading'], ['trailing  '], ['New York', 'City'], ['Hello', 'world'], ['hello'], ['HELLO', 'World', '!'],
  ['<mask>'], ['Hello<mask>world'], ['<mask>', 'x'], ['x', '<mask>'], [' <mask> '], ['[MASK]'], ['[MASK]x'],
  ['[CLS]', 'hi', '[SEP]'], ['<|endoftext|>'], ['head<|endoftext|>'], ['<s>', 'Hello', '</s>'], ['<unk>'],
  ['<|begin_of_text|>Hi'], ['ZÜRICH', 'zurich'], ['wor', 'world'], ['ist', 'istanbul'], ['café', 'CAFÉ'], ['\u24d0'],
  ['a'.repeat(150)], ['x'.repeat(60) + 'y'.repeat(60)], ['supercalifragilisticexpialidocious', 'antidisestablishmentarianism'],
  ['e\u0301', '\u00e9', 'n\u0303'], ['\u0301'], ['a\u0308\u0301'], ['\u1100\u1161\u11a8'], ['ﬁﬂ', '㍿', '½', '①'],
  ['Ｆｕｌｌｗｉｄｔｈ'], ['ｶﾞｷﾞ'], ['👋🏽', 'hi'], ['👨‍👩‍👧‍👦'], ['🏳️‍🌈', '🇫🇷'], ['😀😃😄'],
  ['\u0001', 'ctrl\u007f'], ['zero\u200bwidth'], ['nbsp\u00a0here'], ['\u3000'], ['soft\u00adhyphen'], ['İIıi'],
  ['ΣΑΣ', 'σας'], ['ﷺ'], ['…'], ['—', '–', '-'], ['«', 'hi', '»'], ['1999', '12345678901234567890', '3.14159'],
  ['１２３', '١٢٣', '४५६'], ["don't", "'s", "'ll"], ["I", "'m", "fine"], ['C++', 'C#', '$100.00', '€85,50'],
  ['(', ')', '[', ']', '{', '}'], ['.', ',', ';', ':', '!', '?'], ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
  ['你好', '世界'], ['こんにちは'], ['สวัสดี'], ['क्षत्रिय'], ['שלום'], ['Привет'],
];

const strings = JSON.parse(fs.readFileSync(path.join(pipeDir, 'strings.json')));
const fromStrings = [];
for (let i = 0; i < strings.length; i += 3) {
  // At most 8 words each: their characters are the point, and the goldens stay small.
  const ws = strings[i].split(/[ \t\n]+/).filter((w) => w.length > 0).slice(0, 8);
  if (ws.length > 0) fromStrings.push(ws);
}
const lists = conll.map((s) => s.split(' ')).concat(edge, fromStrings);

function readTok(name) { return JSON.parse(fs.readFileSync(path.join(tokDir, name))); }

function variantJson(spec) {
  const j = readTok(spec.base);
  for (const [k, v] of Object.entries(spec.set || {})) j[k] = v;
  for (const [k, v] of Object.entries(spec.model_set || {})) j.model[k] = v;
  return j;
}

function load(j, tag) {
  const file = path.join(os.tmpdir(), `words_golden_${tag}.json`);
  fs.writeFileSync(file, JSON.stringify(j));
  return Tokenizer.fromFile(file);
}

// The position tokenizer: token "tK" is id K; WhitespaceSplit keeps one token per position.
function positionTokenizer(j, n, tag) {
  const vocab = {};
  for (let k = 0; k < n; ++k) vocab[`t${k}`] = k;
  return load({ version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
                pre_tokenizer: { type: 'WhitespaceSplit' }, post_processor: j.post_processor, decoder: null,
                model: { type: 'WordLevel', vocab, unk_token: 't0' } }, tag);
}

const nul = (w) => (w === null || w === undefined ? -1 : w);

// Fields of the real encoding `e`; word ids from the position encoding `p` (same shape) and `wordOf`.
function fields(e, p, t, wordOf, withTokens) {
  const seq = e.getSequenceIds().map(nul);
  const pos = p.getIds();
  const o = { ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask(),
              words: seq.map((s, k) => (s < 0 ? -1 : wordOf[s][pos[k] - (s === 1 ? wordOf[0].length : 0)])),
              seq, attn: e.getAttentionMask() };
  if (t) o.type_ids = t.getTypeIds();
  if (withTokens) o.tokens = e.getTokens();
  const over = e.getOverflowing(), pover = p.getOverflowing(), tover = t ? t.getOverflowing() : null;
  if (over.length !== pover.length || (t && over.length !== tover.length)) throw new Error('other windows');
  if (over.length) o.overflowing = over.map((x, k) => fields(x, pover[k], t ? tover[k] : null, wordOf, withTokens));
  return o;
}

let seed = 4242;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return n > 0 ? seed % n : 0; };

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'word_lists.json'), JSON.stringify(lists));
  let maxTokens = 0;
  for (const name of variants) {
    const g = extraSpecs[name] || JSON.parse(fs.readFileSync(path.join(pipeDir, `${name}.json`)));
    const spec = { name: g.name, base: g.base, ...(g.set ? { set: g.set } : {}), ...(g.model_set ? { model_set: g.model_set } : {}) };
    const j = variantJson(spec);
    const tok = load(j, name);
    const bare = load({ ...j, post_processor: null, truncation: null, padding: null }, `${name}_bare`);
    const type1 = load({ ...j, truncation: null, padding: null, post_processor: {
      type: 'TemplateProcessing', single: [{ Sequence: { id: 'A', type_id: 1 } }],
      pair: [{ Sequence: { id: 'A', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }], special_tokens: {} } },
                       `${name}_type1`);
    const byWord = new Map();
    const wordEnc = async (w) => {
      if (!byWord.has(w)) byWord.set(w, await bare.encode(w, null, { addSpecialTokens: false }));
      return byWord.get(w);
    };
    const seqOf = async (ws) => {
      const encs = [], encs1 = [];
      const wordOf = [];
      for (let i = 0; i < ws.length; ++i) {
        const e = await wordEnc(ws[i]);
        encs.push(e);
        encs1.push(await type1.encode(ws[i], null, { addSpecialTokens: false }));
        for (let k = 0; k < e.getLength(); ++k) wordOf.push(i);
      }
      return { enc: mergeEncodings(encs, false), enc1: mergeEncodings(encs1, false), wordOf };
    };
    // posTok post-processes (with the truncation and padding of `tok`); posBare encodes, never truncating.
    const posTok = positionTokenizer(j, 4096, `${name}_pos`);
    const posBare = positionTokenizer({ post_processor: null }, 4096, `${name}_posbare`);
    const posEnc = async (a, n0) => posBare.encode(Array.from({ length: a.length }, (_, k) => `t${k + n0}`).join(' '),
                                                  null, { addSpecialTokens: false });
    const run = async (A, B, withTokens) => {
      const e = tok.postProcess(A.enc, B ? B.enc : null, true);
      const pa = await posEnc(A.wordOf, 0);
      const pb = B ? await posEnc(B.wordOf, A.wordOf.length) : null;
      const p = posTok.postProcess(pa, pb, true);
      const t = B ? tok.postProcess(A.enc, B.enc1, true) : null;
      return fields(e, p, t, B ? [A.wordOf, B.wordOf] : [A.wordOf], withTokens);
    };
    const setBoth = (f) => { f(tok); f(posTok); };
    const step = full.has(name) ? 6 : 10;
    const singles = [], truncated = [], pairs = [];
    for (let i = 0; i < lists.length; ++i) {
      if ((i >= conll.length + edge.length || !full.has(name)) && i % step !== 0) continue;
      const A = await seqOf(lists[i]);
      maxTokens = Math.max(maxTokens, A.wordOf.length);
      singles.push([i, await run(A, null, true)]);
      if (i % (full.has(name) ? 10 : 30) !== 0 || A.wordOf.length < 3) continue;
      const specials = tok.postProcess(A.enc, null, true).getLength() - A.wordOf.length;
      const maxLen = specials + Math.ceil(A.wordOf.length / 3) + rnd(Math.ceil(A.wordOf.length / 2));
      const window = maxLen - specials;
      const stride = window > 1 ? rnd(Math.min(window, 3)) : 0;
      const left = i % 3 === 0;
      setBoth((t) => t.setTruncation(maxLen, { stride, direction: left ? 'left' : 'right' }));
      truncated.push({ i, max_length: maxLen, stride, left, enc: await run(A, null, false) });
      setBoth((t) => t.disableTruncation());
    }
    const nPairs = full.has(name) ? 16 : 4;
    for (let k = 0; k < nPairs; ++k) {
      const a = rnd(lists.length), b = rnd(lists.length);
      const A = await seqOf(lists[a]), B = await seqOf(lists[b]);
      const entry = { a, b, full: await run(A, B, true) };
      const na = A.wordOf.length, nb = B.wordOf.length;
      const specials = tok.postProcess(A.enc, B.enc, true).getLength() - na - nb;
      if (na + nb >= 4) {
        const strategy = ['LongestFirst', 'OnlySecond', 'OnlyFirst'][k % 3];
        // Room for the sequence(s) cut, so that the cut is possible (one pair in 8 may ask for too much: HF's
        // "Sequence to truncate too short" error, which coretrain must give too).
        const other = strategy === 'OnlyFirst' ? nb : strategy === 'OnlySecond' ? na : 0;
        const cutLen = strategy === 'OnlyFirst' ? na : strategy === 'OnlySecond' ? nb : na + nb;
        const maxLen = specials + (k % 8 === 7 ? Math.max(2, Math.floor((na + nb) / 2) + rnd(3))
                                                : other + Math.ceil(cutLen / 2) + rnd(Math.ceil(cutLen / 2)));
        const eff = maxLen - specials;
        // HF panics when a window is not longer than the stride (see make_pipeline_golden.js); stride 0 where
        // the truncated sequence would be short.
        const cut = strategy === 'OnlyFirst' ? na : strategy === 'OnlySecond' ? nb : Math.min(na, nb, Math.floor(eff / 2));
        const stride = cut > 3 && eff > 3 ? rnd(2) : 0;
        const left = k % 4 === 3;
        try {
          setBoth((t) => t.setTruncation(maxLen, { strategy, stride, direction: left ? 'left' : 'right' }));
          entry.trunc = { max_length: maxLen, stride, strategy, left, enc: await run(A, B, false) };
        } catch (err) {
          entry.trunc = { max_length: maxLen, stride, strategy, left, error: String(err).slice(0, 80) };
        }
        setBoth((t) => t.disableTruncation());
      }
      if (k % 4 === 0) {
        const len = entry.full.ids.length + rnd(4);
        const left = k % 8 === 0;
        setBoth((t) => t.setPadding({ maxLength: len, direction: left ? 'left' : 'right' }));
        entry.padded = { length: len, left, enc: await run(A, B, false) };
        setBoth((t) => t.disablePadding());
      }
      pairs.push(entry);
    }
    const out = { generator: 'HF tokenizers 0.23.2 (npm binding of the Rust crate), word by word: tools/make_words_golden.js',
                  ...spec, singles, truncated, pairs };
    fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(out));
    console.error(name, singles.length, truncated.length, pairs.length, pairs.filter((p) => p.trunc && p.trunc.error).length);
  }
  if (maxTokens >= 4096) throw new Error('position vocab too small');
})();

// A second opinion on the chat-template goldens: renders every case of
// tests/text/data/chat_template_golden.json (made with Python's Jinja2) with HF's JavaScript engine,
// @huggingface/jinja, and reports where the two agree. Informative only (not a test): it shows which
// behaviours are Jinja2's own, and so what a port of HF's engine would have gotten wrong.
//
//   (cd /tmp/hfjinja && npm install @huggingface/jinja)
//   NODE_PATH=/tmp/hfjinja/node_modules node tests/text/tools/compare_chat_template_hf_jinja.mjs
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const require = createRequire(import.meta.url);
const { Template } = require("@huggingface/jinja");

const here = path.dirname(url.fileURLToPath(import.meta.url));
const data = path.join(here, "..", "data");
const goldenPath = process.argv[2] || path.join(data, "chat_template_golden.json");
const golden = JSON.parse(fs.readFileSync(goldenPath, "utf8"));
const fixed = new Date(golden.fixed_now);
// @huggingface/jinja's own strftime_now reads `new Date()`; the goldens' clock is fixed.
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [fixed.getTime()]));
  }
  static now() {
    return fixed.getTime();
  }
};

let same = 0, differ = 0, bothFail = 0, onlyJsFails = 0, onlyJinjaFails = 0;
const differing = [];
for (const c of golden.cases) {
  const source = c.template ?? fs.readFileSync(path.join(data, "chat_templates", c.template_file), "utf8");
  const ctx = c.context;
  let text = null, err = null;
  try {
    const t = new Template(source);
    text = t.render({
      messages: ctx.messages, tools: ctx.tools, documents: ctx.documents,
      add_generation_prompt: ctx.add_generation_prompt, ...ctx.special_tokens, ...ctx.kwargs,
    });
  } catch (e) {
    err = String(e.message || e);
  }
  const want = c.expected;
  if ("error" in want) {
    if (err !== null) bothFail++;
    else { onlyJinjaFails++; differing.push(`${c.name}: Jinja2 fails (${want.error_type}), @huggingface/jinja renders`); }
  } else if (err !== null) {
    onlyJsFails++;
    differing.push(`${c.name}: @huggingface/jinja fails: ${err.split("\n")[0]}`);
  } else if (text === want.text) {
    same++;
  } else {
    differ++;
    differing.push(`${c.name}: renders differ`);
  }
}
for (const d of differing) console.log(d);
console.log(`${golden.cases.length} cases: ${same} rendered equal, ${differ} rendered differently, ` +
            `${bothFail} fail in both, ${onlyJsFails} fail only in @huggingface/jinja, ` +
            `${onlyJinjaFails} fail only in Jinja2`);

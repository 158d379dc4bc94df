#!/usr/bin/env python3
"""report_check.py REPORT.html OUTPUT_DIR: checks coretrain's training report structurally against the run's
files (python3's html.parser only):

- well-formed enough: every non-void element closed in order, one <html>, <head>, <body>, <title>;
- self-contained: no <script>, <link>, <img>, <iframe>, no src/href attributes, no url(...) or @import, no
  "http://" or "https://" anywhere;
- the plots are inline <svg> with axis labels; polylines loss / learning_rate / grad_norm have one point per
  log_history entry holding that key, every eval metric series one per eval entry, samples_per_second one per
  ddp_timing.json log_times entry; the per-rank bars have compute / comm_exposed / eval_save for every rank;
- the summary table names the world size, the global batch, the train runtime, samples/s and the final EM/F1
  as all_results.json has them.
"""
import json
import os
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_EMPTY_OK = {"polyline", "line", "rect", "circle", "path"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.counts, self.errors = [], {}, []
        self.polylines, self.rects, self.texts = {}, [], []
        self.summary, self._row, self._in_summary, self._cell = {}, [], False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.errors.append(f"<{tag}> present")
        for k, v in attrs:
            if k in ("src", "href", "xlink:href"):
                self.errors.append(f"{k}={v!r} on <{tag}>")
        if tag == "polyline":
            pts = a.get("points", "").split()
            self.polylines[a.get("data-series")] = len(pts)
        if tag == "rect" and "data-rank" in a:
            self.rects.append((int(a["data-rank"]), a["data-part"], float(a["height"])))
        if tag == "table" and a.get("id") == "summary":
            self._in_summary = True
        if self._in_summary and tag in ("th", "td"):
            self._cell = ""
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        # <polyline .../> style: counted, not pushed.
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if self._in_summary and tag in ("th", "td"):
            self._row.append(self._cell)
            self._cell = None
        if self._in_summary and tag == "tr":
            if len(self._row) == 2:
                self.summary[self._row[0]] = self._row[1]
            self._row = []
        if tag == "table":
            self._in_summary = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self.stack and self.stack[-1] == "text":
            self.texts.append(data)


def main():
    path, out = sys.argv[1], sys.argv[2]
    html = open(path, encoding="utf-8").read()
    for bad in ("http://", "https://", "url(", "@import"):
        assert bad not in html, f"external reference {bad!r} in the report"
    c = Checker()
    c.feed(html)
    c.close()
    assert not c.errors, c.errors[:5]
    assert not c.stack, f"unclosed elements: {c.stack}"
    for t in ("html", "head", "body"):
        assert c.counts.get(t) == 1, f"<{t}> x {c.counts.get(t)}"
    assert "<head>\n<meta charset=\"utf-8\">\n<title>" in html, "no <title> in <head>"
    assert c.counts.get("svg", 0) >= 5, f"only {c.counts.get('svg', 0)} svg plots"
    for label in ("optimizer step", "loss (mean over the logging interval)", "learning rate", "samples/s (all ranks)",
                  "score (%)", "seconds", "rank"):
        assert label in c.texts, f"no axis label {label!r}"

    state = json.load(open(os.path.join(out, "trainer_state.json")))
    timing = json.load(open(os.path.join(out, "ddp_timing.json")))
    results = json.load(open(os.path.join(out, "all_results.json")))
    hist = state["log_history"]
    want = {k: sum(k in e for e in hist) for k in ("loss", "learning_rate", "grad_norm")}
    for k in ("eval_exact_match", "eval_f1"):
        want[k] = sum(k in e for e in hist)
    want["samples_per_second"] = len(timing["log_times"])
    for k, n in want.items():
        assert n > 0, f"the run logged no {k}"
        assert c.polylines.get(k) == n, f"polyline {k}: {c.polylines.get(k)} points, log has {n}"
    world = timing["world_size"]
    parts = sorted((r, p) for r, p, _ in c.rects)
    assert parts == sorted((r, p) for r in range(world) for p in ("compute", "comm_exposed", "eval_save")), parts
    assert all(h >= 0 for _, _, h in c.rects)

    s = c.summary
    assert s.get("world size", "").startswith(f"{world} rank"), s.get("world size")
    assert s.get("global batch", "").startswith(str(timing["global_batch"])), s.get("global batch")
    assert s.get("train runtime", "").startswith(f"{results['train_runtime']:.6g}"), s.get("train runtime")
    assert s.get("train samples/s", "").startswith(f"{results['train_samples_per_second']:.6g}")
    assert s.get("final exact_match") == f"{results['eval_exact_match']:.2f}", s.get("final exact_match")
    assert s.get("final f1") == f"{results['eval_f1']:.2f}", s.get("final f1")
    print(f"{path}: well-formed, self-contained, {c.counts['svg']} svg plots, polylines {c.polylines}, "
          f"{len(c.rects)} rank bars, summary {s}")


if __name__ == "__main__":
    main()

"""Checks coretrain's eval_nbest_predictions.json against a PyTorch forward of the saved model.

usage: /usr/bin/python3 nbest_vs_torch.py OUTPUT_DIR FEATURES_JSON

OUTPUT_DIR is a finished `coretrain qa --do_eval` run (config.json, model.safetensors,
eval_nbest_predictions.json); FEATURES_JSON is what `--dump_eval_features` wrote: every eval feature's
input_ids / token_type_ids / attention_mask as the eval loop fed them, each token's byte span in the context.
The saved weights are loaded into scripts/torch_reference.py's HF-named BertForQuestionAnswering (strict), the
features are run through it, and every n-best candidate must be explained by one (feature, start, end) of its
example: torch's start and end logits equal the candidate's (within tolerance) and the context bytes between
the two tokens' offsets are the candidate's text. Prints the largest logit difference; exit 1 on any mismatch.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import torch_reference as ref  # noqa: E402


def main():
    out_dir, feats_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(out_dir, "config.json")) as f:
        cfg = json.load(f)
    model = ref.model_from_config(cfg)
    tensors, _ = ref.load_safetensors(os.path.join(out_dir, "model.safetensors"))
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    model.eval()
    with open(feats_path) as f:
        dump = json.load(f)
    feats = dump["features"]
    contexts = {k: v.encode("utf-8") for k, v in dump["contexts"].items()}
    with open(os.path.join(out_dir, "eval_nbest_predictions.json")) as f:
        nbest = json.load(f)

    by_len = {}
    for i, ft in enumerate(feats):
        by_len.setdefault(len(ft["input_ids"]), []).append(i)
    starts, ends = [None] * len(feats), [None] * len(feats)
    with torch.no_grad():
        for _, idx in by_len.items():
            ids = torch.tensor([feats[i]["input_ids"] for i in idx], dtype=torch.long)
            mask = torch.tensor([feats[i]["attention_mask"] for i in idx], dtype=torch.long)
            tt = None
            if feats[idx[0]]["token_type_ids"] is not None:
                tt = torch.tensor([feats[i]["token_type_ids"] for i in idx], dtype=torch.long)
            _, s, e = model(ids, attention_mask=mask, token_type_ids=tt)
            for r, i in enumerate(idx):
                starts[i], ends[i] = s[r].tolist(), e[r].tolist()

    feats_of = {}
    for i, ft in enumerate(feats):
        feats_of.setdefault(ft["example_id"], []).append(i)

    tol = 2e-3
    checked, worst, failures = 0, 0.0, []
    for ex_id, cands in nbest.items():
        ctx = contexts[ex_id]
        for c in cands:
            if c["text"] == "empty" and c["start_logit"] == 0.0 and c["end_logit"] == 0.0:
                continue
            best = None
            for fi in feats_of[ex_id]:
                off = feats[fi]["offsets"]
                s_tok = [t for t, o in enumerate(off) if o is not None and abs(starts[fi][t] - c["start_logit"]) <= tol + 1e-4 * abs(c["start_logit"])]
                e_tok = [t for t, o in enumerate(off) if o is not None and abs(ends[fi][t] - c["end_logit"]) <= tol + 1e-4 * abs(c["end_logit"])]
                for s in s_tok:
                    for e in e_tok:
                        if e < s:
                            continue
                        if ctx[off[s][0]:off[e][1]].decode("utf-8", "replace") != c["text"]:
                            continue
                        d = max(abs(starts[fi][s] - c["start_logit"]), abs(ends[fi][e] - c["end_logit"]))
                        if best is None or d < best:
                            best = d
            if best is None:
                failures.append(f"{ex_id}: candidate {c['text']!r} ({c['start_logit']}, {c['end_logit']}) "
                                f"matches no torch (feature, start, end)")
            else:
                worst = max(worst, best)
                checked += 1
    print(f"checked {checked} n-best candidates over {len(nbest)} examples; max |logit diff| {worst:.2e}")
    if checked == 0:
        failures.append("no candidate was checked")
    if failures:
        for f in failures[:10]:
            print("MISMATCH", f)
        sys.exit(1)


if __name__ == "__main__":
    main()

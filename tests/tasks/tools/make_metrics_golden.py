#!/usr/bin/env python3
"""Regenerates tests/tasks/data/metrics_golden.json: the scores HF `evaluate`'s metrics give on fixed predictions.

Classification and regression scores come from the libraries `evaluate` calls (scikit-learn, SciPy: Debian's
python3-sklearn and python3-scipy); seqeval is not packaged, so `seqeval_reference` below re-implements seqeval
1.2.2's default mode after its source (metrics/sequence_labeling.py: get_entities, end_of_chunk, start_of_chunk,
precision_recall_fscore_support, classification_report) and checks itself on hand-worked IOB cases first.
Run:  /usr/bin/python3 tests/tasks/tools/make_metrics_golden.py tests/tasks/data/metrics_golden.json
"""
import json
import math
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef, mean_squared_error


def get_entities(seq):
    if any(isinstance(s, list) for s in seq):
        seq = [item for sublist in seq for item in sublist + ["O"]]
    prev_tag, prev_type, begin, chunks = "O", "", 0, []
    for i, chunk in enumerate(seq + ["O"]):
        tag = chunk[0]
        type_ = chunk[1:].split("-", maxsplit=1)[-1] or "_"
        if end_of_chunk(prev_tag, tag, prev_type, type_):
            chunks.append((prev_type, begin, i - 1))
        if start_of_chunk(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return chunks


def end_of_chunk(prev_tag, tag, prev_type, type_):
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag != "O" and prev_tag != "." and prev_type != type_


def start_of_chunk(prev_tag, tag, prev_type, type_):
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag != "O" and tag != "." and prev_type != type_


def seqeval_reference(predictions, references):
    true, pred = defaultdict(set), defaultdict(set)
    for t, s, e in get_entities(references):
        true[t].add((s, e))
    for t, s, e in get_entities(predictions):
        pred[t].add((s, e))

    def prf(tp, p, a):
        precision = tp / p if p else 0.0
        recall = tp / a if a else 0.0
        denom = precision + recall
        f1 = (1 + 1) * precision * recall / (denom if denom else 1)
        return {"precision": precision, "recall": recall, "f1": f1, "number": a}

    out, sums = {}, [0, 0, 0]
    for t in sorted(set(true) | set(pred)):
        tp = len(true[t] & pred[t])
        out[t] = prf(tp, len(pred[t]), len(true[t]))
        sums = [sums[0] + tp, sums[1] + len(pred[t]), sums[2] + len(true[t])]
    micro = prf(*sums)
    flat_t = [x for s in references for x in s]
    flat_p = [x for s in predictions for x in s]
    out["overall_precision"] = micro["precision"]
    out["overall_recall"] = micro["recall"]
    out["overall_f1"] = micro["f1"]
    out["overall_accuracy"] = sum(a == b for a, b in zip(flat_t, flat_p)) / len(flat_t)
    return out


def self_check():
    # Worked by hand from the conlleval rules.
    assert get_entities([["B-PER", "I-PER", "O", "B-LOC"]]) == [("PER", 0, 1), ("LOC", 3, 3)]
    assert get_entities([["I-PER", "I-PER", "O"]]) == [("PER", 0, 1)]             # I- without B- starts a chunk
    assert get_entities([["B-PER", "I-LOC"]]) == [("PER", 0, 0), ("LOC", 1, 1)]   # a type change ends one
    assert get_entities([["B-PER"], ["I-PER"]]) == [("PER", 0, 0), ("PER", 2, 2)]  # a sentence end ends one
    assert get_entities([["S-PER", "E-PER"]]) == [("PER", 0, 0), ("PER", 1, 1)]
    assert get_entities([["B", "I", "O"]]) == [("_", 0, 1)]


def nan_to_none(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def main(out_path):
    self_check()
    rng = np.random.default_rng(20261126)
    cases = {"classification": [], "regression": [], "seqeval": []}

    def add_cls(name, preds, refs, binary):
        preds, refs = [int(x) for x in preds], [int(x) for x in refs]
        c = {"name": name, "predictions": preds, "references": refs,
             "accuracy": float(accuracy_score(refs, preds)),
             "matthews_correlation": float(matthews_corrcoef(refs, preds))}
        if binary:
            c["f1"] = float(f1_score(y_true=refs, y_pred=preds))
        cases["classification"].append(c)

    for n in (1, 7, 64, 408, 1043):
        add_cls(f"binary_{n}", rng.integers(0, 2, n), rng.integers(0, 2, n), True)
    for n in (9, 300):
        add_cls(f"three_class_{n}", rng.integers(0, 3, n), rng.integers(0, 3, n), False)
    refs = rng.integers(0, 2, 200)
    add_cls("mostly_right", np.where(rng.random(200) < 0.85, refs, 1 - refs), refs, True)
    add_cls("all_negative", [0] * 10, [0] * 10, True)
    add_cls("predicts_one_class", [1] * 12, list(rng.integers(0, 2, 12)), True)

    multilabel = []
    for rows, labels in ((5, 3), (50, 6)):
        p, r = rng.integers(0, 2, (rows, labels)), rng.integers(0, 2, (rows, labels))
        multilabel.append({"name": f"multilabel_{rows}x{labels}", "predictions": p.reshape(-1).tolist(),
                           "references": r.reshape(-1).tolist(),
                           "f1": float(f1_score(r, p, average="micro"))})
    cases["multilabel"] = multilabel

    def add_reg(name, preds, refs):
        preds, refs = np.asarray(preds, dtype=np.float32), np.asarray(refs, dtype=np.float32)
        cases["regression"].append({
            "name": name, "predictions": [float(x) for x in preds], "references": [float(x) for x in refs],
            "pearson": nan_to_none(float(pearsonr(preds, refs)[0])),
            "spearmanr": nan_to_none(float(spearmanr(preds, refs)[0])),
            "mse": float(mean_squared_error(refs, preds))})

    for n in (3, 50, 1500):
        refs = rng.random(n).astype(np.float32) * 5
        add_reg(f"stsb_like_{n}", refs + rng.normal(0, 1, n).astype(np.float32), refs)
    refs = np.round(rng.random(100) * 5 * 5) / 5  # stsb's labels come in steps of 0.2: many ties
    add_reg("ties", np.round((refs + rng.normal(0, 0.7, 100)) * 2) / 2, refs)
    add_reg("two_points", [0.5, 0.25], [1.0, 3.0])
    add_reg("constant_prediction", [2.0] * 6, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])

    def add_seq(name, preds, refs):
        cases["seqeval"].append({"name": name, "predictions": preds, "references": refs,
                                 "scores": seqeval_reference(preds, refs)})

    add_seq("perfect", [["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "B-LOC"]])
    add_seq("i_without_b", [["I-PER", "I-PER", "O", "O"]], [["B-PER", "I-PER", "O", "O"]])
    add_seq("type_change", [["B-PER", "I-ORG", "O"]], [["B-PER", "I-PER", "O"]])
    add_seq("sentence_end", [["O", "B-MISC"], ["I-MISC", "O"]], [["O", "B-MISC"], ["B-MISC", "O"]])
    add_seq("no_entities_predicted", [["O", "O", "O"]], [["B-LOC", "O", "B-PER"]])
    add_seq("ioes", [["S-PER", "B-LOC", "E-LOC"], ["B-ORG", "I-ORG", "E-ORG"]],
            [["S-PER", "B-LOC", "E-LOC"], ["B-ORG", "E-ORG", "O"]])
    add_seq("bare_and_unicode", [["B", "I", "O", "B-ÉTAT", "I-ÉTAT"]], [["B", "O", "O", "B-ÉTAT", "I-ÉTAT"]])
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
    refs, preds = [], []
    for _ in range(120):
        n = int(rng.integers(1, 30))
        r = [tags[int(i)] for i in rng.integers(0, len(tags), n)]
        p = [t if rng.random() < 0.8 else tags[int(rng.integers(0, len(tags)))] for t in r]
        refs.append(r)
        preds.append(p)
    add_seq("random_conll", preds, refs)

    with open(out_path, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

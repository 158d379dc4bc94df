#!/usr/bin/python3
"""The goldens of tests/tasks/task_step_test.sh: one SGD step's gradient of each task command, by PyTorch.

usage: /usr/bin/python3 scripts/task_step_golden.py BUILD_DIR [CASE...]

For each case (glue, regression, multilabel, ner, mlm, swag; all by default) it runs task_step_test.sh in its
store mode with BUILD_DIR's coretrain and ct_checkpoint_tool, which leaves the case's tiny BERT as initialized
(seed 7, dropout 0) and the step's features as `coretrain --dump_train_features` wrote them (labels, padding,
MLM's masks drawn for epoch 0). Then, in float64, torch_reference.py's TaskModel (HF's module names and math)
takes that checkpoint and those features and computes the loss as the HF model and Trainer do for the whole
set in one batch:
  glue (single-label)   cross-entropy, mean over the examples
  regression            MSE of the single logit (problem_type regression)
  multilabel            BCE with logits, mean over examples x labels (multi_label_classification)
  ner, mlm              cross-entropy over the labelled tokens (-100 ignored), mean over them, which is HF's
                        sum / num_items_in_batch for one batch
  swag                  cross-entropy over each example's 4 choices, mean over the examples
Its gradient, as float32, goes to tests/tasks/data/step/<case>_grad.safetensors (metadata: the loss, the
init checkpoint's sha256, and per tensor how far the same computation in float32 lands from it, the scale of
float32's summation noise there), and the features to <case>_features.json. torch.optim.SGD(lr) without momentum or
weight decay updates p -= lr * g, so the test reads g back from coretrain's saved model.
Packed rows (ner) are padded here with attention mask 0 and label -100, which leaves BERT's outputs on the
real tokens unchanged.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import torch_reference as ref  # noqa: E402

CASES = {"glue": "seq-cls", "regression": "seq-cls", "multilabel": "seq-cls", "ner": "token-cls",
         "mlm": "mlm", "swag": "multiple-choice"}
OUT = os.path.join(ROOT, "tests", "tasks", "data", "step")


def find(build, name):
    for d, _, files in os.walk(build):
        if name in files:
            return os.path.join(d, name)
    sys.exit(f"{build}: no {name} (build it first)")


def pad_rows(rows):
    """[input_ids, token_type_ids, attention_mask, labels] tensors [N, T] from rows of any lengths."""
    T = max(len(r["input_ids"]) for r in rows)

    def col(key, fill, default):
        out = []
        for r in rows:
            v = r.get(key)
            if v is None:
                v = [default] * len(r["input_ids"])
            out.append(list(v) + [fill] * (T - len(v)))
        return torch.tensor(out, dtype=torch.long)

    return (col("input_ids", 0, 0), col("token_type_ids", 0, 0), col("attention_mask", 0, 1),
            col("labels", -100, -100) if isinstance(rows[0].get("labels"), list) else None)


def loss_of(model, case, feats):
    if case == "swag":
        C = len(feats[0]["choices"])
        ids, tt, mask, _ = pad_rows([c for f in feats for c in f["choices"]])
        shape = (len(feats), C, ids.shape[1])
        labels = torch.tensor([f["labels"] for f in feats], dtype=torch.long)
        _, logits = model(ids.view(shape), mask.view(shape), tt.view(shape))
        return F.cross_entropy(logits, labels)
    ids, tt, mask, token_labels = pad_rows(feats)
    _, logits = model(ids, mask, tt)
    if case in ("ner", "mlm"):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), token_labels.view(-1), ignore_index=-100)
    labels = [f["labels"] for f in feats]
    if case == "glue":
        return F.cross_entropy(logits, torch.tensor(labels, dtype=torch.long))
    target = torch.tensor(labels, dtype=logits.dtype)
    if case == "regression":
        return F.mse_loss(logits.squeeze(), target.squeeze())
    return F.binary_cross_entropy_with_logits(logits, target)


def golden(case, stored):
    cfg = json.load(open(os.path.join(stored, f"{case}_config.json")))
    init_path = os.path.join(stored, f"{case}_init.safetensors")
    feats = json.load(open(os.path.join(stored, f"{case}_features.json")))["features"]
    weights, _ = ref.load_safetensors(init_path)
    grads = {}
    for dtype in (torch.float64, torch.float32):
        model = ref.TaskModel(cfg, CASES[case]).to(dtype)
        model.load_state_dict({k: v.to(dtype) for k, v in weights.items()}, strict=True)
        model.train()  # dropout probabilities are 0: train mode is the function eval mode is
        loss = loss_of(model, case, feats)
        loss.backward()
        grads[dtype] = {k: p.grad.double() if p.grad is not None else torch.zeros_like(p, dtype=torch.float64)
                        for k, p in model.named_parameters()}
        if dtype == torch.float64:
            loss64 = loss.item()
    truth = grads[torch.float64]
    # How far PyTorch's own float32 step is from the float64 truth, per tensor: where a gradient is a small
    # difference of large terms (a tensor whose true gradient is 0, as the attention key bias), float32 sums
    # in any order are off by about this much, and the test allows coretrain a multiple of it.
    noise = {k: (grads[torch.float32][k] - v).abs().max().item() for k, v in truth.items()}
    sha = hashlib.sha256(open(init_path, "rb").read()).hexdigest()
    ref.save_safetensors(os.path.join(OUT, f"{case}_grad.safetensors"), {k: v.float() for k, v in truth.items()},
                         {"init_sha256": sha, "loss": repr(loss64), "float32_noise": json.dumps(noise)})
    shutil.copy(os.path.join(stored, f"{case}_features.json"), os.path.join(OUT, f"{case}_features.json"))
    print(f"{case}: {len(feats)} features, loss {loss64:.6f}, {len(truth)} tensors")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    cases = sys.argv[2:] or list(CASES)
    coretrain, tool = find(build, "coretrain"), find(build, "ct_checkpoint_tool")
    with tempfile.TemporaryDirectory() as stored:
        for case in cases:
            if case not in CASES:
                sys.exit(f"unknown case {case}: expected one of {', '.join(CASES)}")
            subprocess.run(["bash", os.path.join(ROOT, "tests", "tasks", "task_step_test.sh"), case, coretrain,
                            tool, stored], check=True)
            golden(case, stored)


if __name__ == "__main__":
    main()

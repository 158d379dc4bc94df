#!/usr/bin/env python3
"""Regenerates tests/kernels/data/deberta_buckets.json: DeBERTa-v2/v3's log-bucketed relative positions as
transformers computes them (models/deberta_v2/modeling_deberta_v2.py: make_log_bucket_position, torch's f32
arithmetic), for every query-key distance of a 4,096-token sequence, under the bucket/max-position settings of
the Hub's checkpoints and two small ones.
Run:  /usr/bin/python3 tests/kernels/tools/make_relative_position_golden.py tests/kernels/data/deberta_buckets.json
"""
import json
import sys

import torch


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where(
        (relative_pos < mid) & (relative_pos > -mid),
        torch.tensor(mid - 1).type_as(relative_pos),
        torch.abs(relative_pos),
    )
    log_pos = (
        torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    )
    bucket_pos = torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)
    return bucket_pos


def main(out):
    d = torch.arange(-4095, 4096, dtype=torch.long)
    cases = []
    for bucket_size, max_position in ((256, 512), (256, 1024), (64, 128), (32, 2048)):
        b = make_log_bucket_position(d, bucket_size, max_position).to(torch.long)
        cases.append({"bucket_size": bucket_size, "max_position": max_position, "first_distance": -4095,
                      "buckets": b.tolist()})
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

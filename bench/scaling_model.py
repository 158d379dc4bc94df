#!/usr/bin/env python3
"""scaling_model.py: coretrain's data-parallel training step at cluster scale, on paper (docs/scaling.md).

An alpha-beta model of one optimizer step of `coretrain qa` (BERT QA fine-tuning, DDP) on N nodes with P ranks per
node, built from what coretrain measures on this machine:

  - compute: `coretrain bench step` (ms per step split into forward / backward / clip+AdamW, model GFLOP/s and the
    fraction of the measured matmul peak it reaches), scaled to a target node by a stated assumption (published
    peak FLOP/s and memory bandwidth of the target, and how much of this machine's efficiency carries over);
  - the node level of the hierarchical all-reduce: `coretrain bench comm --shared` between ranks of one node
    (latency at 8 B, bandwidth at 64 MiB), scaled by the memory-bandwidth ratio (`coretrain bench triad`);
  - the inter-node level: `coretrain bench comm` between two network namespaces (bench/scaling_netns_comm.sh):
    the per-message latency alpha; the link's bandwidth is a parameter (25 and 100 Gbit/s), derated by Ethernet
    framing;
  - the algorithm exactly as coretrain runs it: DdpReducer's buckets (a 1 MiB first bucket, then
    --ddp_bucket_cap_mb, 25 by default, filled in gradient-ready order = descending slab offset, launched in
    order on one comm worker lane as soon as backward has finished them), and Communicator::do_allreduce's
    hierarchy (shared-memory reduce-scatter in the node, a ring all-reduce of each rank's 1/P slice among the
    ranks with the same local rank on every node, shared-memory allgather).

It prints predicted step time, compute vs exposed communication and scaling efficiency (per-node throughput
against one node) for BERT-base and BERT-large at 1-64 nodes, 25 and 100 Gbit/s, without and with overlap, f32
and bf16 gradients on the wire; then which knob matters where (bucket size, ranks per node, bf16 on the wire,
per-flow TCP limits, compute speed, latency), and the model's figures for the published CPU results it is set
against (Intel's MLPerf Training v2.1 BERT-large on 8 and 16 Sapphire Rapids nodes, Hugging Face's DistilBERT
SQuAD on 1 and 4 Sapphire Rapids nodes). Plain python3, standard library only.

Usage:
  python3 bench/scaling_model.py --from bench/scaling_inputs.json      # the model from saved measurements
  python3 bench/scaling_model.py --measure [--rt] [--coretrain PATH] [--out FILE]
        # reruns the measurements first (a few minutes; see measure() for the exact commands), writes them to FILE
        # (default bench/scaling_inputs.json), then prints the model. The inter-node run needs root (network
        # namespaces); without it the inter-node entry of the previous inputs file is kept and says so. --rt runs
        # the latency measurements under chrt -f 10 (root), as the committed inputs' inter-node entry was.
  Options that change the assumptions: --ppn, --batch, --seq, --bucket-mb, --target-* (node), --carryover,
  --alpha-net-us, --flow-cap-gbps, --inter-algo ring|rabenseifner; --json prints the main table as JSON lines.
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MiB = 1 << 20

# Model shapes (HF config.json values). The QA models have no pooler (BertForQuestionAnswering builds the encoder
# without it) and a 2-output qa_outputs head; DistilBERT has no token types.
MODELS = {
    "bert-base": dict(layers=12, hidden=768, heads=12, intermediate=3072, vocab=30522, max_pos=512, types=2),
    "bert-large": dict(layers=24, hidden=1024, heads=16, intermediate=4096, vocab=30522, max_pos=512, types=2),
    "distilbert": dict(layers=6, hidden=768, heads=12, intermediate=3072, vocab=30522, max_pos=512, types=0),
}


# ------------------------------------------------------------------------------------------------ model shapes

def param_list(m):
    """(name, numel, bwd_flops_per_token) in coretrain's slab order (src/model/param_layout.cpp).

    bwd_flops_per_token is what backward spends on this parameter's matmul (dX and dW: 2 x 2 x numel per token),
    so that the time at which backward finishes a gradient can be placed along the measured backward time. The
    attention core's backward (scores and context products, 2 x its forward 4*T*H per token) is charged to the
    value weight, the first of the Q/K/V block that backward reaches.
    """
    H, I = m["hidden"], m["intermediate"]
    out = [("word_embeddings", m["vocab"] * H, 0.0), ("position_embeddings", m["max_pos"] * H, 0.0)]
    if m["types"]:
        out.append(("token_type_embeddings", m["types"] * H, 0.0))
    out += [("emb_ln.w", H, 0.0), ("emb_ln.b", H, 0.0)]
    for layer in range(m["layers"]):
        p = "layer%d." % layer
        out += [(p + "q.w", H * H, 4.0 * H * H), (p + "k.w", H * H, 4.0 * H * H), (p + "v.w", H * H, None),
                (p + "q.b", H, 0.0), (p + "k.b", H, 0.0), (p + "v.b", H, 0.0),
                (p + "attn_out.w", H * H, 4.0 * H * H), (p + "attn_out.b", H, 0.0),
                (p + "ln1.w", H, 0.0), (p + "ln1.b", H, 0.0),
                (p + "ffn_in.w", I * H, 4.0 * I * H), (p + "ffn_in.b", I, 0.0),
                (p + "ffn_out.w", H * I, 4.0 * H * I), (p + "ffn_out.b", H, 0.0),
                (p + "ln2.w", H, 0.0), (p + "ln2.b", H, 0.0)]
    out += [("qa_outputs.w", 2 * H, 4.0 * 2 * H), ("qa_outputs.b", 2, 0.0)]
    return out


def fwd_flops_per_token(m, T):
    """Matmul FLOPs of one forward pass per token: exactly apps/bench_step_command.cpp's forward_matmul_flops / N."""
    H, I = m["hidden"], m["intermediate"]
    per_layer = 2 * H * 3 * H + 2 * H * H + 2 * 2 * H * I + 2 * 2 * T * H
    return per_layer * m["layers"] + 2 * H * 2


def num_params(m):
    return sum(n for _, n, _ in param_list(m))


def ready_profile(m, T):
    """Per parameter in slab order: the fraction of backward done when its gradient is final (0 = start)."""
    params = param_list(m)
    H = m["hidden"]
    # Fill in the value weight's share: its own matmul plus the attention core's backward (8*T*H per token).
    costs = [c if c is not None else 4.0 * H * H + 8.0 * T * H for _, _, c in params]
    total = sum(costs)
    frac = [0.0] * len(params)
    done = 0.0
    for i in reversed(range(len(params))):  # backward reaches the top of the slab first
        done += costs[i]
        frac[i] = done / total
    return params, frac


def buckets(m, T, cap_mb, first_bytes=MiB, elem_bytes=4):
    """DdpReducer's buckets (src/train/ddp_reducer.cpp): [(bytes, ready_fraction)] in launch order.

    Parameters are taken in descending slab offset; a bucket closes once it holds >= the limit (1 MiB for the
    first, then the cap), so a parameter bigger than the cap ends up in a bucket of its own. A bucket is launched
    when its last (lowest-offset) parameter is final, and never before the bucket ahead of it (launch order is
    fixed so that all ranks issue the same collectives).
    """
    params, frac = ready_profile(m, T)
    cap = int(cap_mb * MiB)
    limit = min(cap, first_bytes)
    out, cur_bytes, cur_ready = [], 0, 0.0
    for i in reversed(range(len(params))):
        cur_bytes += params[i][1] * elem_bytes
        cur_ready = frac[i]
        if cur_bytes >= limit:
            out.append([cur_bytes, cur_ready])
            cur_bytes, limit = 0, cap
    if cur_bytes:
        out.append([cur_bytes, cur_ready])
    for k in range(1, len(out)):
        out[k][1] = max(out[k][1], out[k - 1][1])
    return out


# ------------------------------------------------------------------------------------------------ the inputs

def fit_comm(records, want_shared=None):
    """alpha (s) and algorithm bandwidth (B/s) from `bench comm --json` records of one allreduce series.

    alpha = time of the smallest message; bandwidth = bytes / time of the largest. For 2 ranks that is the whole
    information an alpha-beta fit has at the two ends, without a least-squares fit being pulled by the scheduling
    noise of mid sizes on a 2-core machine.
    """
    rs = [r for r in records if r.get("impl", "coretrain") == "coretrain" and r.get("op") == "allreduce"
          and r.get("dtype", "f32") == "f32" and (want_shared is None or r.get("shared") == want_shared)]
    if not rs:
        raise SystemExit("scaling_model.py: no coretrain f32 allreduce records (shared=%s) in the inputs"
                         % want_shared)
    small = min(rs, key=lambda r: r["bytes"])
    large = max(rs, key=lambda r: r["bytes"])
    return small["time_us"] * 1e-6, large["bytes"] / (large["time_us"] * 1e-6), small, large


class Inputs:
    """Everything the model takes from measurements, with the derived per-level constants."""

    def __init__(self, data):
        self.data = data
        st = data["step"]
        self.step_prec = st.get("use", "bf16")
        s = st[self.step_prec]
        cfg = st["config"]
        self.step_cfg = cfg
        m = dict(layers=cfg["layers"], hidden=cfg["hidden"], heads=cfg["heads"],
                 intermediate=cfg["intermediate"], vocab=cfg["vocab"], max_pos=512, types=2)
        self.step_params = num_params(m)
        self.step_tokens = cfg["batch"] * cfg["seq"]
        fb_ms = s["ms_forward"] + s["ms_backward"]
        self.fwd_frac = s["ms_forward"] / fb_ms
        # Achieved FLOP/s of forward+backward alone (bench step's model GFLOP/s divides by the whole step).
        self.here_fb_flops = 3 * fwd_flops_per_token(m, cfg["seq"]) * self.step_tokens / (fb_ms * 1e-3)
        self.here_peak = s["peak_gflops"] * 1e9          # measured matmul peak of this machine, run precision
        self.here_mfu = self.here_fb_flops / self.here_peak
        self.here_cores = s["threads"]
        self.opt_s_per_param = s["ms_opt"] * 1e-3 / self.step_params  # clip + AdamW (+ bf16 copy refresh)
        tr = data["triad"]
        self.here_bw_1proc = tr["one_process_gbps"] * 1e9
        self.here_bw_node = tr["two_processes_total_gbps"] * 1e9
        self.shm_alpha, self.shm_bw, _, _ = fit_comm(data["shm"]["records"], want_shared=True)
        a2, self.net_bw_measured, _, _ = fit_comm(data["inter"]["records"])
        # A 2-rank ring all-reduce is 2 messages per rank (reduce-scatter step + allgather step).
        self.net_alpha = a2 / 2.0


def calibrated_mfu(data, peak):
    """Whole-step fraction of peak Intel's MLPerf v2.1 BERT-large reached on its largest run, on a node of `peak`.

    Samples/s of the 16-node runs (mean) x 512 tokens x 3 x forward matmul FLOPs per token, per node, over the
    node's peak. An upper bound on the matmul work done (the runs used --unpad, so padding was not computed) and
    a lower bound on compute speed (the step includes communication); good to perhaps +-30%.
    """
    ml = data.get("published", {}).get("mlperf_v2_1_bert")
    if not ml:
        return 0.29
    big = max(r["nodes"] for r in ml["runs"])
    runs = [r for r in ml["runs"] if r["nodes"] == big]
    per_node = sum(r["samples_per_s"] for r in runs) / len(runs) / big
    return per_node * ml["seq"] * 3 * fwd_flops_per_token(MODELS["bert-large"], ml["seq"]) / peak


def target_node(args, inp):
    """The target node's constants, each from a stated assumption (printed by describe_node)."""
    peak = args.target_sockets * args.target_cores * args.target_ghz * 1e9 * args.target_flops_per_cycle
    mem = args.target_sockets * args.target_mem_channels * args.target_mem_gbps_per_channel * 1e9 \
        * args.target_mem_efficiency
    carry = args.carryover if args.carryover is not None else args.target_mfu / inp.here_mfu
    return dict(
        name=args.target_name,
        peak=peak,
        mfu=inp.here_mfu * carry,
        carryover=carry,
        mem_bw=mem,
        # The node-level all-reduce moves memory: scale this machine's zero-copy shm bandwidth by memory bandwidth.
        shm_bw=inp.shm_bw * mem / inp.here_bw_node,
        shm_alpha=inp.shm_alpha,
        net_alpha=(args.alpha_net_us * 1e-6) if args.alpha_net_us is not None else inp.net_alpha,
    )


# ------------------------------------------------------------------------------------------------ the model

def allreduce_time(nbytes, nodes, ppn, node, link_gbps, args):
    """Communicator::do_allreduce on one bucket of `nbytes` (already in the wire dtype), seconds.

    P > 1: shm reduce-scatter (each local rank reduces its 1/P slice) + shm allgather: 2 alpha + bytes / B_shm.
    N > 1: each local rank all-reduces its slice s = bytes/P with its peers of the same local rank on the other
    nodes. The P local-rank groups run at once and share the node's link: per rank min(link*eff/P, flow cap).
      ring (Gloo's default allreduce, the env/torchrun path): 2(N-1) alpha + 2(N-1)/N * s / beta
      rabenseifner (MPICH's large-message MPI_Allreduce, the mpirun path): 2 log2(N) alpha + 2(N-1)/N * s / beta
    """
    t = 0.0
    if ppn > 1:
        t += 2 * node["shm_alpha"] + nbytes / node["shm_bw"]
    if nodes > 1:
        s = nbytes / ppn
        beta = link_gbps * 1e9 / 8 * args.link_efficiency / ppn
        if args.flow_cap_gbps:
            beta = min(beta, args.flow_cap_gbps * 1e9 / 8)
        steps = 2 * (nodes - 1) if args.inter_algo == "ring" else 2 * math.ceil(math.log2(nodes))
        t += steps * node["net_alpha"] + 2.0 * (nodes - 1) / nodes * s / beta
    return t


def predict(model, nodes, ppn, batch, seq, link_gbps, wire, overlap, node, inp, args, cap_mb=None,
            t_fb_override=None, accum=1):
    """One optimizer step of one rank: dict of times (s) and per-node throughput (samples/s).

    accum > 1 is --gradient_accumulation_steps: accum forward+backward passes, of which only the last one's
    backward launches buckets (the trainer's no_sync), so communication overlaps that last backward only.
    """
    m = MODELS[model]
    cap_mb = args.bucket_mb if cap_mb is None else cap_mb
    flops = 3 * fwd_flops_per_token(m, seq) * batch * seq
    rate_rank = node["peak"] * node["mfu"] / ppn     # the node's cores split evenly between its ranks
    t_fb = flops / rate_rank if t_fb_override is None else t_fb_override
    t_fwd, t_bwd = t_fb * inp.fwd_frac, t_fb * (1 - inp.fwd_frac)
    # Clip + AdamW: memory-bound, every rank runs it over all parameters; scale the per-parameter time measured
    # here by memory bandwidth (this machine's one process vs the target's node bandwidth shared by P ranks).
    t_opt = inp.opt_s_per_param * num_params(m) * inp.here_bw_1proc / (node["mem_bw"] / ppn)
    wire_bytes = 2 if wire == "bf16" else 4
    bks = buckets(m, seq, cap_mb, elem_bytes=4)
    # Bucket boundaries are set in f32 bytes (the reducer's slab); bf16 on the wire halves what each one sends.
    lane_free = 0.0  # one comm worker lane (CCL_WORKER_COUNT=1): buckets run one after another, in order
    comm_total = 0.0
    for nbytes, ready in bks:
        t_ready = ready * t_bwd if overlap else t_bwd
        t_ar = allreduce_time(nbytes * wire_bytes / 4, nodes, ppn, node, link_gbps, args)
        comm_total += t_ar
        lane_free = max(lane_free, t_ready) + t_ar
    exposed = max(0.0, lane_free - t_bwd)
    t_fwd, t_bwd = t_fwd * accum, t_bwd * accum
    # The step's loss mean + stop flag: one 4-float all-reduce after the optimizer (latency only).
    t_loss = allreduce_time(16, nodes, ppn, node, link_gbps, args) if nodes * ppn > 1 else 0.0
    step = t_fwd + t_bwd + exposed + t_opt + t_loss
    return dict(step=step, compute=t_fwd + t_bwd, opt=t_opt, exposed=exposed + t_loss, comm_total=comm_total,
                buckets=len(bks), per_node=ppn * batch * accum / step)


def efficiency(model, nodes, cfg, node, inp, args, **kw):
    p = predict(model, nodes, node=node, inp=inp, args=args, **cfg, **kw)
    p1 = predict(model, 1, node=node, inp=inp, args=args, **cfg, **kw)
    return p, p["per_node"] / p1["per_node"]


# ------------------------------------------------------------------------------------------------ reports

NODES = [1, 2, 4, 8, 16, 32, 64]
LINKS = [25, 100]


def describe(inp, node, args):
    d = inp.data
    lines = []
    lines.append("## Inputs (from %s)" % args.source)
    st = d["step"]
    c = st["config"]
    lines.append("- compute, this machine: `bench step` %s, %d layers, hidden %d, seq %d, batch %d, %d threads "
                 "(%s): forward+backward %.0f GFLOP/s = %.1f%% of the measured %s matmul peak %.1f GFLOP/s; "
                 "forward %.0f%% of forward+backward; clip+AdamW %.2f ns per parameter"
                 % (inp.step_prec, c["layers"], c["hidden"], c["seq"], c["batch"], inp.here_cores,
                    st["source"], inp.here_fb_flops / 1e9, 100 * inp.here_mfu, inp.step_prec,
                    inp.here_peak / 1e9, 100 * inp.fwd_frac, inp.opt_s_per_param * 1e9))
    lines.append("- memory, this machine: triad %.1f GB/s one process, %.1f GB/s two (%s)"
                 % (inp.here_bw_1proc / 1e9, inp.here_bw_node / 1e9, d["triad"]["source"]))
    lines.append("- node level (shared memory, 2 ranks, zero-copy): alpha %.2f us, %.2f GB/s algorithm bandwidth "
                 "(%s)" % (inp.shm_alpha * 1e6, inp.shm_bw / 1e9, d["shm"]["source"]))
    lines.append("- inter-node level (Gloo/TCP between 2 network namespaces, 1 rank each): alpha %.1f us per "
                 "message, %.2f GB/s = %.1f Gbit/s per flow (%s)"
                 % (inp.net_alpha * 1e6, inp.net_bw_measured / 1e9, inp.net_bw_measured * 8 / 1e9,
                    d["inter"]["source"]))
    lines.append("")
    lines.append("## Target node (assumptions; each is a flag)")
    lines.append("- %s: %d x %d cores x %.2f GHz x %d bf16 FLOP/cycle/core = %.1f TFLOP/s peak"
                 % (node["name"], args.target_sockets, args.target_cores, args.target_ghz,
                    args.target_flops_per_cycle, node["peak"] / 1e12))
    lines.append("- whole-step efficiency %.1f%% of that peak = this machine's %.1f%% x carry-over %.2f "
                 "(%s) -> %.1f TFLOP/s per node"
                 % (100 * node["mfu"], 100 * inp.here_mfu, node["carryover"],
                    "--carryover" if args.carryover is not None else "from --target-mfu %.3f" % args.target_mfu,
                    node["peak"] * node["mfu"] / 1e12))
    lines.append("- memory %.0f GB/s sustained (%d x %d channels x %.1f GB/s x %.2f); node-level all-reduce "
                 "%.1f GB/s (this machine's, scaled by memory bandwidth)"
                 % (node["mem_bw"] / 1e9, args.target_sockets, args.target_mem_channels,
                    args.target_mem_gbps_per_channel, args.target_mem_efficiency, node["shm_bw"] / 1e9))
    lines.append("- network: link x %.3f (Ethernet framing at MTU 1500), %s all-reduce between nodes, "
                 "alpha %.1f us per message%s%s"
                 % (args.link_efficiency, args.inter_algo, node["net_alpha"] * 1e6,
                    " (--alpha-net-us)" if args.alpha_net_us is not None else " (measured, above)",
                    ", per-flow cap %.1f Gbit/s" % args.flow_cap_gbps if args.flow_cap_gbps else ""))
    lines.append("- job: %d ranks per node, batch %d per rank, seq %d (padded, run_qa's default), buckets: 1 MiB "
                 "first, then %g MiB, one comm lane" % (args.ppn, args.batch, args.seq, args.bucket_mb))
    return lines


def main_tables(inp, node, args):
    lines, rows = [], []
    cfg = dict(ppn=args.ppn, batch=args.batch, seq=args.seq)
    for model in ("bert-base", "bert-large"):
        m = MODELS[model]
        P = num_params(m)
        nb = len(buckets(m, args.seq, args.bucket_mb))
        for link in LINKS:
            lines.append("")
            lines.append("### %s (%.1f M parameters, %.0f MB of f32 gradients, %d buckets), %d Gbit/s, "
                         "%d ranks/node x batch %d, seq %d"
                         % (model, P / 1e6, P * 4 / 1e6, nb, link, args.ppn, args.batch, args.seq))
            lines.append("")
            lines.append("| nodes | compute + optimizer (ms) | f32, no overlap | f32, overlap | bf16 wire, no overlap "
                         "| bf16 wire, overlap |")
            lines.append("|---|---|---|---|---|---|")
            for n in NODES:
                cells = []
                base = None
                for wire in ("f32", "bf16"):
                    for overlap in (False, True):
                        p, eff = efficiency(model, n, cfg, node, inp, args, link_gbps=link, wire=wire,
                                            overlap=overlap)
                        base = p
                        cells.append("%.0f ms (comm %.0f, %.0f%%)" % (p["step"] * 1e3, p["exposed"] * 1e3,
                                                                     100 * eff))
                        rows.append(dict(model=model, nodes=n, link_gbps=link, wire=wire, overlap=overlap,
                                         ppn=args.ppn, batch=args.batch, seq=args.seq,
                                         step_ms=round(p["step"] * 1e3, 2),
                                         compute_ms=round(p["compute"] * 1e3, 2), opt_ms=round(p["opt"] * 1e3, 2),
                                         exposed_comm_ms=round(p["exposed"] * 1e3, 2),
                                         efficiency=round(eff, 4)))
                lines.append("| %d | %.0f + %.0f | %s |" % (n, base["compute"] * 1e3, base["opt"] * 1e3,
                                                           " | ".join(cells)))
    lines.append("")
    lines.append("Cells: step time (exposed communication, scaling efficiency = per-node samples/s against 1 node "
                 "with the same ranks per node). 1 node pays only the shared-memory level.")
    return lines, rows


def knobs(inp, node, args):
    L = []
    cfg = dict(ppn=args.ppn, batch=args.batch, seq=args.seq)

    def eff(model, n, **kw):
        c = dict(cfg)
        for k in ("ppn", "batch", "seq"):
            if k in kw:
                c[k] = kw.pop(k)
        return efficiency(model, n, c, node, inp, args, **kw)

    L.append("## Knobs")
    L.append("")
    L.append("### Bucket size (--ddp_bucket_cap_mb), BERT-large, f32 wire, overlap: step ms (exposed ms)")
    L.append("")
    caps = [1, 5, 25, 100, 400]
    L.append("| link | nodes | " + " | ".join("%g MiB" % c for c in caps) + " |")
    L.append("|---|---|" + "---|" * len(caps))
    for link in LINKS:
        for n in (2, 8, 64):
            cells = []
            for c in caps:
                p, _ = eff("bert-large", n, link_gbps=link, wire="f32", overlap=True, cap_mb=c)
                cells.append("%.0f (%.0f)" % (p["step"] * 1e3, p["exposed"] * 1e3))
            L.append("| %d | %d | %s |" % (link, n, " | ".join(cells)))
    L.append("")
    cap = inp.net_bw_measured * 8 / 1e9
    L.append("### Ranks per node, BERT-large, overlap: efficiency at 8 / 64 nodes, and at 64 nodes if each TCP flow "
             "tops out at the %.1f Gbit/s measured between namespaces here" % cap)
    L.append("")
    L.append("| link | ranks/node x batch/rank | f32: 8 nodes | f32: 64 nodes | f32: 64, flow cap | "
             "bf16 wire: 64, flow cap |")
    L.append("|---|---|---|---|---|---|")
    saved = args.flow_cap_gbps
    for link in LINKS:
        for ppn, b in ((1, 24), (2, 12), (4, 6), (1, 12), (4, 12)):
            args.flow_cap_gbps = 0
            _, e8 = eff("bert-large", 8, ppn=ppn, batch=b, link_gbps=link, wire="f32", overlap=True)
            _, e64 = eff("bert-large", 64, ppn=ppn, batch=b, link_gbps=link, wire="f32", overlap=True)
            args.flow_cap_gbps = cap
            _, c64 = eff("bert-large", 64, ppn=ppn, batch=b, link_gbps=link, wire="f32", overlap=True)
            _, d64 = eff("bert-large", 64, ppn=ppn, batch=b, link_gbps=link, wire="bf16", overlap=True)
            L.append("| %d | %d x %d | %.0f%% | %.0f%% | %.0f%% | %.0f%% |"
                     % (link, ppn, b, 100 * e8, 100 * e64, 100 * c64, 100 * d64))
    args.flow_cap_gbps = saved
    L.append("")
    L.append("### Sensitivity, 64 nodes, overlap, f32 wire: efficiency")
    L.append("")
    L.append("| what changes | BERT-base 25G | BERT-base 100G | BERT-large 25G | BERT-large 100G |")
    L.append("|---|---|---|---|---|")

    def row(label, mut_node=None, mut_args=None, accum=1, wire="f32"):
        nd = dict(node)
        if mut_node:
            nd.update(mut_node)
        saved_args = {}
        for k, v in (mut_args or {}).items():
            saved_args[k] = getattr(args, k)
            setattr(args, k, v)
        cells = []
        c = dict(ppn=args.ppn, batch=args.batch, seq=args.seq)
        for model in ("bert-base", "bert-large"):
            for link in LINKS:
                _, e = efficiency(model, 64, c, nd, inp, args, link_gbps=link, wire=wire, overlap=True,
                                  accum=accum)
                cells.append("%.0f%%" % (100 * e))
        for k, v in saved_args.items():
            setattr(args, k, v)
        L.append("| %s | %s |" % (label, " | ".join(cells)))

    row("as above (step efficiency %.0f%% of peak, alpha %.0f us, ring)" % (100 * node["mfu"],
                                                                           node["net_alpha"] * 1e6))
    row("compute 2x slower (%.0f%% of peak)" % (50 * node["mfu"]), mut_node=dict(mfu=node["mfu"] / 2))
    row("compute as efficient as here (%.0f%% of peak)" % (100 * inp.here_mfu), mut_node=dict(mfu=inp.here_mfu))
    row("alpha 10 us per message", mut_node=dict(net_alpha=10e-6))
    row("MPICH's Rabenseifner instead of the ring (mpirun)", mut_args=dict(inter_algo="rabenseifner"))
    row("batch 32 per rank", mut_args=dict(batch=32))
    row("--gradient_accumulation_steps 4", accum=4)
    row("bf16 on the wire", wire="bf16")
    row("bf16 on the wire, alpha 10 us, buckets 100 MiB", mut_node=dict(net_alpha=10e-6), wire="bf16",
        mut_args=dict(bucket_mb=100.0))
    return L


def published(inp, node, args):
    """The model against the published CPU results (docs/scaling.md gives the sources)."""
    L = ["## Against published results", ""]
    pub = inp.data.get("published", {})
    ml = pub.get("mlperf_v2_1_bert")
    if ml:
        # Intel's MLPerf Training v2.1 BERT-large (pretraining, seq 512, bf16, 4 ranks/node, 2 NICs x 100 GbE).
        L.append("### Intel, MLPerf Training v2.1 BERT-large, Sapphire Rapids, 4 ranks/node")
        L.append("")
        L.append("| nodes | batch/rank | published samples/s per node | published per-rank samples/s vs 8 nodes "
                 "| model: exposed comm share (f32, no overlap, 2 x 100 Gbit/s) | model: per-rank samples/s vs 8 "
                 "nodes |")
        L.append("|---|---|---|---|---|---|")
        base = None
        for r in ml["runs"]:
            # Same compute rate per sample at both sizes (the calibration); the model adds communication only.
            p = predict("bert-large", r["nodes"], 4, r["batch_per_rank"], 512, 200, "f32", False, node, inp, args)
            model_rate = r["batch_per_rank"] / p["step"]
            pub_rate = r["samples_per_s"] / (r["nodes"] * 4)
            if base is None:
                base = (model_rate, pub_rate)
            L.append("| %d | %d | %.1f | %.3f | %.1f%% | %.3f |"
                     % (r["nodes"], r["batch_per_rank"], r["samples_per_s"] / r["nodes"], pub_rate / base[1],
                        100 * p["exposed"] / p["step"], model_rate / base[0]))
        L.append("")
    hf = pub.get("hf_distilbert_squad_spr")
    if hf:
        L.append("### Hugging Face, DistilBERT SQuAD fine-tuning, r7iz.metal-16xl (Sapphire Rapids, 32 cores)")
        L.append("")
        m = MODELS["distilbert"]
        feats = hf["train_features"]
        one = feats / (hf["one_node_minutes"] * 60)        # samples/s, 1 node (1 rank x batch 32)
        four = feats / (hf["four_node_minutes"] * 60)      # samples/s, 4 nodes x 2 ranks x batch 32
        # Compute calibrated so that one node does what the blog measured (1 rank, no communication).
        rate = 3 * fwd_flops_per_token(m, 384) * one * 384
        nd = dict(node)
        nd["peak"], nd["mfu"] = rate, 1.0
        L.append("| | published | model (25 Gbit/s, overlap, f32) | model (100 Gbit/s) |")
        L.append("|---|---|---|---|")
        p25 = predict("distilbert", 4, 2, 32, 384, 25, "f32", True, nd, inp, args)
        p100 = predict("distilbert", 4, 2, 32, 384, 100, "f32", True, nd, inp, args)
        L.append("| 1 node (1 rank x 32): samples/s | %.1f | (calibration) | |" % one)
        L.append("| 4 nodes (8 ranks x 32): samples/s | %.1f | %.1f | %.1f |"
                 % (four, 4 * p25["per_node"], 4 * p100["per_node"]))
        L.append("| scaling efficiency | %.1f%% | %.1f%% | %.1f%% |"
                 % (100 * four / (4 * one), 100 * p25["per_node"] / one, 100 * p100["per_node"] / one))
        L.append("| exposed communication per step | | %.0f ms of %.0f ms | %.0f ms of %.0f ms |"
                 % (p25["exposed"] * 1e3, p25["step"] * 1e3, p100["exposed"] * 1e3, p100["step"] * 1e3))
        L.append("")
    v = inp.data.get("validation_ddp_netns")
    if v:
        # coretrain's own two-"node" run on this machine (bench/ddp_netns.sh): 2 ranks x batch 2, BERT-base, on one
        # node (shared memory) vs one rank on each of two namespaces joined by a 10 Gbit/s shaped veth. The
        # one-node step time is measured; the model replaces its shared-memory level by the network level.
        here = dict(peak=inp.here_peak, mfu=inp.here_mfu, mem_bw=inp.here_bw_node, shm_bw=inp.shm_bw,
                    shm_alpha=inp.shm_alpha, net_alpha=inp.net_alpha)
        b = v["batch_per_rank"]
        step1 = 2 * b / v["one_node_samples_per_s"]
        saved = args.flow_cap_gbps
        args.flow_cap_gbps = inp.net_bw_measured * 8 / 1e9   # one TCP flow between namespaces here
        one = predict("bert-base", 1, 2, b, 384, v["rate_gbps"], "f32", True, here, inp, args, t_fb_override=1.0)
        fb = step1 - one["opt"] - one["exposed"]             # forward+backward of the measured one-node step
        one = predict("bert-base", 1, 2, b, 384, v["rate_gbps"], "f32", True, here, inp, args, t_fb_override=fb)
        two = predict("bert-base", 2, 1, b, 384, v["rate_gbps"], "f32", True, here, inp, args, t_fb_override=fb)
        args.flow_cap_gbps = saved
        L.append("### coretrain on this machine: 2 ranks on one node vs one rank on each of two nodes, 10 Gbit/s")
        L.append("")
        L.append("| | measured | model |")
        L.append("|---|---|---|")
        L.append("| one node, s/step | %.2f | %.2f (input; exposed shm %.0f ms) |"
                 % (step1, one["step"], one["exposed"] * 1e3))
        L.append("| two nodes, s/step | %.2f | %.2f (exposed network %.0f ms of %.0f ms sent) |"
                 % (2 * b / v["two_nodes_samples_per_s"], two["step"], two["exposed"] * 1e3,
                    two["comm_total"] * 1e3))
        L.append("| two nodes / one node throughput | %.3f | %.3f |"
                 % (v["two_nodes_samples_per_s"] / v["one_node_samples_per_s"], one["step"] / two["step"]))
        L.append("")
    return L


# ------------------------------------------------------------------------------------------------ --measure

def run(cmd, env=None, timeout=1800):
    print("# running: " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit("scaling_model.py: '%s' failed (%d):\n%s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return r.stdout


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def measure(args, previous):
    """Fresh measurements on this machine; small on purpose (the machine is shared):

      coretrain bench step --layers 12 --hidden 768 --heads 12 --intermediate 3072 --seq 384 --batch 4
                           --vocab 30522 --steps 2 --warmup 1 --bf16       (BERT-base shapes, 3 steps)
      coretrain bench triad --json ; mpiexec -n 2 coretrain bench triad --json
      mpiexec -n 2 coretrain bench comm --op allreduce --impl coretrain --shared --json
              --min-bytes 8 --max-bytes 8 --iters 2000 --warmup 200          (node-level latency)
      mpiexec -n 2 coretrain bench comm --op allreduce --impl coretrain --shared --json
              --min-bytes 64M --max-bytes 64M --iters 10 --warmup 3          (node-level bandwidth)
      sh bench/scaling_netns_comm.sh coretrain none 64M                       (inter-node, root only)
    With --rt the two latency runs (8 B shm, and the netns script) run under `chrt -f 10`.
    """
    ct = args.coretrain
    if not os.access(ct, os.X_OK):
        raise SystemExit("scaling_model.py: %s is not an executable coretrain (--coretrain PATH)" % ct)
    now = lambda: datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = lambda: open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"
    data = dict(previous) if previous else {}
    data["generated"] = "measured by bench/scaling_model.py --measure, %s" % now()
    if os.path.exists("/proc/loadavg") and float(load()) > (os.cpu_count() or 1):
        print("# warning: load average %s on %d CPUs: these measurements will time the scheduler as much as "
              "coretrain (docs/benchmarks.md); --rt helps the latency runs" % (load(), os.cpu_count() or 1),
              file=sys.stderr)

    step_cmd = [ct, "bench", "step", "--layers", "12", "--hidden", "768", "--heads", "12", "--intermediate", "3072",
                "--seq", "384", "--batch", "4", "--vocab", "30522", "--steps", "2", "--warmup", "1", "--bf16"]
    when, la = now(), load()
    out = run(step_cmd)
    summary = json.loads(out.split("json:", 1)[1].strip().splitlines()[0])
    splits = [tuple(float(x) for x in mt.groups()) for mt in re.finditer(
        r"step \d+: [\d.]+ ms \(forward ([\d.]+), backward ([\d.]+), clip\+AdamW ([\d.]+)\)", out)]
    if not splits:
        raise SystemExit("scaling_model.py: no timed step lines in bench step's output")
    f, b, o = (sum(s[i] for s in splits) / len(splits) for i in range(3))
    prec = summary["precision"]
    data["step"] = dict(
        use=prec, config=dict(layers=12, hidden=768, heads=12, intermediate=3072, seq=384, batch=4, vocab=30522),
        source="`%s` at %s, load average %s%s" % (" ".join(["coretrain"] + step_cmd[1:]), when, la,
                                                  "" if prec == "bf16" else " (no bf16 matmul on this CPU: ran f32)"))
    data["step"][prec] = dict(samples_per_s=summary["samples_per_s"], peak_gflops=summary["peak_gflops"],
                              mfu=summary["mfu"], ms_forward=f, ms_backward=b, ms_opt=o, threads=summary["threads"])

    mpiexec = shutil.which("mpiexec")
    if not mpiexec:
        raise SystemExit("scaling_model.py: --measure needs mpiexec for the 2-rank runs")
    when, la = now(), load()
    one = json_lines(run([ct, "bench", "triad", "--json"]))[0]
    two = json_lines(run([mpiexec, "-n", "2", ct, "bench", "triad", "--json"]))[0]
    data["triad"] = dict(one_process_gbps=one["total_gbps"], two_processes_total_gbps=two["total_gbps"],
                         source="`coretrain bench triad --json`, `mpiexec -n 2 ...` at %s, load %s" % (when, la))

    # --rt: the latency runs under SCHED_FIFO (chrt -f 10), so that on a loaded machine they time the library and
    # the network stack rather than the scheduler (docs/benchmarks.md: 8 B went from ms to us that way). Short runs.
    rt = ["chrt", "-f", "10"] if args.rt else []
    rt_note = " under chrt -f 10" if args.rt else ""
    when, la = now(), load()
    base = [mpiexec, "-n", "2", ct, "bench", "comm", "--op", "allreduce", "--impl", "coretrain", "--shared", "--json"]
    recs = json_lines(run(rt + base + ["--min-bytes", "8", "--max-bytes", "8", "--iters", "2000", "--warmup", "200"]))
    recs += json_lines(run(base + ["--min-bytes", "64M", "--max-bytes", "64M", "--iters", "10", "--warmup", "3"]))
    data["shm"] = dict(records=recs, source="`mpiexec -n 2 coretrain bench comm --op allreduce --impl coretrain "
                                            "--shared --json` at 8 B (2000 iters%s) and 64 MiB (10 iters), %s, load %s"
                                            % (rt_note, when, la))

    if os.geteuid() == 0:
        when, la = now(), load()
        out = run(rt + ["sh", os.path.join(HERE, "scaling_netns_comm.sh"), ct, "none", "64M"])
        data["inter"] = dict(records=json_lines(out),
                             source="`sh bench/scaling_netns_comm.sh coretrain none 64M`%s (2 namespaces x 1 rank, "
                                    "env launch, Gloo/TCP over veth) at %s, load %s" % (rt_note, when, la))
    elif "inter" in data:
        data["inter"]["source"] += " [kept from the previous inputs: --measure ran without root]"
    else:
        raise SystemExit("scaling_model.py: the inter-node measurement needs root (network namespaces) and no "
                         "previous inputs file has one")
    return data


# ------------------------------------------------------------------------------------------------ main

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="inputs", default=os.path.join(HERE, "scaling_inputs.json"),
                    help="saved measurements (default bench/scaling_inputs.json)")
    ap.add_argument("--measure", action="store_true", help="rerun the measurements first (see measure())")
    ap.add_argument("--coretrain", default=os.path.join(ROOT, "build", "release", "apps", "coretrain"))
    ap.add_argument("--out", default=None, help="--measure writes here (default: the --from file)")
    ap.add_argument("--rt", action="store_true",
                    help="--measure runs the latency measurements under chrt -f 10 (root; for a loaded machine)")
    ap.add_argument("--json", action="store_true", help="print the main table as JSON lines instead of Markdown")
    job = ap.add_argument_group("job")
    job.add_argument("--ppn", type=int, default=2, help="ranks per node (default 2: one per socket)")
    job.add_argument("--batch", type=int, default=12, help="--per_device_train_batch_size (default 12, the seed's)")
    job.add_argument("--seq", type=int, default=384, help="--max_seq_length (default 384, padded)")
    job.add_argument("--bucket-mb", type=float, default=25.0, help="--ddp_bucket_cap_mb (default 25)")
    tg = ap.add_argument_group("target node (defaults: 2-socket Xeon Platinum 8480+ class Sapphire Rapids)")
    tg.add_argument("--target-name", default="2 x 56-core Sapphire Rapids (Xeon 8480+ class), AMX bf16")
    tg.add_argument("--target-sockets", type=int, default=2)
    tg.add_argument("--target-cores", type=int, default=56, help="cores per socket")
    tg.add_argument("--target-ghz", type=float, default=2.0, help="sustained clock under AMX load (base clock)")
    tg.add_argument("--target-flops-per-cycle", type=int, default=1024,
                    help="bf16 FLOP per cycle per core (AMX TMUL: 1024)")
    tg.add_argument("--target-mem-channels", type=int, default=8, help="DDR channels per socket")
    tg.add_argument("--target-mem-gbps-per-channel", type=float, default=38.4, help="DDR5-4800: 38.4 GB/s")
    tg.add_argument("--target-mem-efficiency", type=float, default=0.7,
                    help="sustained fraction of the theoretical memory bandwidth (assumed)")
    tg.add_argument("--target-mfu", type=float, default=None,
                    help="whole-step fraction of the target's peak (default: the inputs' published calibration)")
    tg.add_argument("--carryover", type=float, default=None,
                    help="fraction of this machine's step efficiency kept on the target (overrides --target-mfu)")
    nw = ap.add_argument_group("network")
    nw.add_argument("--link-efficiency", type=float, default=1448 / 1538,
                    help="payload fraction of the line rate (TCP/IP over Ethernet at MTU 1500: 1448/1538)")
    nw.add_argument("--alpha-net-us", type=float, default=None, help="per-message latency (default: measured)")
    nw.add_argument("--flow-cap-gbps", type=float, default=0.0, help="cap per TCP flow (default none)")
    nw.add_argument("--inter-algo", choices=("ring", "rabenseifner"), default="ring",
                    help="inter-node all-reduce: ring (Gloo, default) or rabenseifner (MPICH large messages)")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    previous = None
    if os.path.exists(args.inputs):
        with open(args.inputs) as fh:
            previous = json.load(fh)
    if args.measure:
        data = measure(args, previous)
        out = args.out or args.inputs
        with open(out, "w") as fh:
            json.dump(data, fh, indent=1)
            fh.write("\n")
        print("# wrote %s" % out, file=sys.stderr)
        args.source = out
    else:
        if previous is None:
            raise SystemExit("scaling_model.py: no inputs file %s (run with --measure, or --from FILE)" % args.inputs)
        data = previous
        args.source = os.path.relpath(args.inputs, ROOT) if args.inputs.startswith(ROOT) else args.inputs
    inp = Inputs(data)
    if args.target_mfu is None:
        peak = args.target_sockets * args.target_cores * args.target_ghz * 1e9 * args.target_flops_per_cycle
        args.target_mfu = calibrated_mfu(data, peak)
    node = target_node(args, inp)
    if args.json:
        _, rows = main_tables(inp, node, args)
        for r in rows:
            print(json.dumps(r))
        return 0
    out = ["# coretrain at cluster scale: predicted training step (bench/scaling_model.py)", ""]
    out += describe(inp, node, args)
    out += ["", "## Predicted step: time, exposed communication, scaling efficiency"]
    tables, _ = main_tables(inp, node, args)
    out += tables
    out += [""] + knobs(inp, node, args)
    out += [""] + published(inp, node, args)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

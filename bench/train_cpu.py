"""Benchmark: our encoder–decoder against torch.nn.Transformer on this CPU, in one run.

Both models have the same configuration and the same weights (copied): d_model 256, 4 heads,
3 + 3 layers, d_ff 1024, post-norm with nn.Transformer's final LayerNorms, a shared vocabulary of
1,000, batches of 64 pairs × 32 source and 32 target tokens. Prints

- training tokens/s of each (source + target tokens, AdamW step included) and the ratio, at
  dropout 0.1 and at dropout 0 (four models whose steps alternate in one loop);
- the share of the machine's fp32 matmul rate (measured here on large square matmuls) that each
  achieves, counting model FLOPs as in examprep/train/flops.py;
- greedy decoding tokens/s for 64 output tokens: ours with the KV cache, ours re-running the
  decoder, and nn.Transformer re-running the decoder (its only way), with the ratios.

Then the RNN encoder–decoder (examprep.train.rnn: a bidirectional GRU encoder, a GRU decoder, with
additive, dot and no attention; d_model 256, the same vocabulary and batches) against the plain
PyTorch loop over the same nn.GRU layers and weights (examprep.train.baseline.plain_rnn_loop: the
decoder called once per token, W_1 h recomputed each step): training tokens/s and the ratio.

Then fine-tuning steps/s of LoRA (rank 4 on q and v of every attention block, examprep.train.lora)
against full fine-tuning of the same model, with the trainable parameters and AdamW's state
measured after the steps.

Goals: training ≥ 1.4× nn.Transformer at dropout 0.1 and ≥ 1.15× at dropout 0 (issue 40 item 8;
matmul share ≥ 60%), decoding ≥ 3× nn.Transformer; the RNN seq2seq ≥ 1.0× its plain loop for every
attention.
Steps of the two models alternate so that a change of machine load hits both alike; medians are
reported.

    python bench/train_cpu.py [--steps 12] [--threads N] [--json FILE] [--quick] [--train-only] [--clock cpu]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from examprep.train.decode import greedy_encoder_decoder  # noqa: E402
from examprep.train.flops import flops_per_step  # noqa: E402
from examprep.checkpoints.config import TransformerConfig  # noqa: E402
from examprep.train.baseline import TorchTransformer, matched_pair, plain_rnn_loop  # noqa: E402
from examprep.train.model import build_model  # noqa: E402
from examprep.train.trainer import smoothed_cross_entropy  # noqa: E402

NEVER = -1   # an EOS id no model emits: every decode runs the full 64 steps
TRAIN_GOALS = {0.1: 1.4, 0.0: 1.15}   # ours / nn.Transformer training tokens/s, by dropout (issue 40 item 8)


def matmul_rate(sizes=(1024, 2048), repeats=5) -> float:
    """Best fp32 FLOP/s of square matmuls on this machine with the current thread count."""
    best = 0.0
    for n in sizes:
        a, b = torch.randn(n, n), torch.randn(n, n)
        a @ b
        for _ in range(repeats):
            t = clock()
            a @ b
            best = max(best, 2 * n ** 3 / (clock() - t))
    return best


def _step(forward, params: list, opt, tgt, smoothing: float):
    """One training step: label-smoothed cross-entropy of ``forward()``'s logits per target token,
    backward, gradients clipped to norm 1, the optimizer's step."""
    n_targets = tgt[:, 1:].numel()

    def step():
        loss = smoothed_cross_entropy(forward(), tgt[:, 1:], smoothing) / n_targets
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def train_step_fn(model, src, tgt, smoothing=0.1):
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    if isinstance(model, TorchTransformer):
        return _step(lambda: model(src, tgt[:, :-1]), params, opt, tgt, smoothing)
    return _step(lambda: model(src, tgt[:, :-1], src_padded=False), params, opt, tgt, smoothing)


def rnn_step_fn(model, src, tgt, plain: bool, smoothing=0.1):
    """A training step of an rnn-seq2seq model: its own forward, or the plain loop over its modules."""
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    if plain:
        return _step(lambda: plain_rnn_loop(model, src, tgt[:, :-1]), params, opt, tgt, smoothing)
    return _step(lambda: model(src, tgt[:, :-1], src_padded=False), params, opt, tgt, smoothing)


def bench_rnn(args, vocab: int, batch: int, src_len: int, tgt_len: int) -> dict:
    """Training tokens/s of the RNN seq2seq and of the plain loop over the same modules, per
    attention; steps alternate, medians reported."""
    g = torch.Generator().manual_seed(2)
    src = torch.randint(5, vocab, (batch, src_len), generator=g)
    tgt = torch.randint(5, vocab, (batch, tgt_len + 1), generator=g)
    out = {}
    for attention in ("additive", "dot", "none"):
        cfg = TransformerConfig(arch="rnn-seq2seq", cell="gru", attention=attention, src_vocab_size=vocab,
                                tgt_vocab_size=vocab, d_model=32 if args.quick else 256, n_encoder_layers=1,
                                n_decoder_layers=1, dropout=0.1)
        torch.manual_seed(0)
        ours, plain = build_model(cfg).train(), build_model(cfg).train()
        plain.load_state_dict(ours.state_dict())
        steps = {"ours": rnn_step_fn(ours, src, tgt, False), "plain loop": rnn_step_fn(plain, src, tgt, True)}
        for fn in steps.values():
            fn()
        times = {k: [] for k in steps}
        for _ in range(max(args.steps // 2, 1)):
            for name, fn in steps.items():
                times[name].append(timed(fn))
        rates = {k: batch * (src_len + tgt_len) / statistics.median(v) for k, v in times.items()}
        out[attention] = {"ours_tokens_per_s": rates["ours"], "plain_tokens_per_s": rates["plain loop"],
                          "ratio": rates["ours"] / rates["plain loop"]}
    return out


def finetune_step_fn(model, src, tgt, params):
    """One fine-tuning step of `params` (the rest of the model frozen or not), as examprep finetune."""
    opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.999), weight_decay=0.0)
    return _step(lambda: model(src, tgt[:, :-1], src_padded=False), params, opt, tgt, 0.0), opt


def finetune_rates(cfg, src, tgt, steps: int, rank: int = 4) -> dict:
    """Median steps/s of LoRA and of full fine-tuning, alternated; trainable counts and optimizer bytes."""
    from examprep.train.finetune import optimizer_bytes
    from examprep.train.lora import add_adapters
    from examprep.train.model import build_model

    torch.manual_seed(2)
    full = build_model(cfg).train()
    lora = build_model(cfg).train()
    lora.load_state_dict(full.state_dict())
    adapted = add_adapters(lora, rank, float(rank), ("q", "v"))
    runs = {"full fine-tuning": finetune_step_fn(full, src, tgt, list(full.parameters())),
            f"LoRA r={rank} on q,v": finetune_step_fn(lora, src, tgt, list(adapted.parameters()))}
    for fn, _ in runs.values():
        fn()
        fn()
    times = {k: [] for k in runs}
    for _ in range(steps):
        for name, (fn, _) in runs.items():
            times[name].append(timed(fn))
    trainable = {"full fine-tuning": full.num_params(count_position_tables=True),
                 f"LoRA r={rank} on q,v": adapted.trainable}
    return {name: {"steps_per_s": 1 / statistics.median(times[name]), "trainable": trainable[name],
                   "optimizer_bytes": optimizer_bytes(opt)} for name, (_, opt) in runs.items()}


def print_finetune(finetune: dict, cfg=None, batch=0, src_len=0, tgt_len=0) -> None:
    if cfg is not None:
        print(f"machine: {torch.get_num_threads()} threads, torch {torch.__version__}; model: d_model {cfg.d_model}, "
              f"{cfg.n_heads} heads, {cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, d_ff {cfg.d_ff}; "
              f"batch {batch} x ({src_len} + {tgt_len}) tokens")
    lora = next(k for k in finetune if k.startswith("LoRA"))
    print("fine-tuning (median step)     steps/s   trainable params   AdamW state")
    for name, r in finetune.items():
        print(f"  {name:26s} {r['steps_per_s']:7.2f} {r['trainable']:18,} {r['optimizer_bytes']:11,} bytes")
    ratio = finetune[lora]["steps_per_s"] / finetune["full fine-tuning"]["steps_per_s"]
    print(f"  ratio LoRA / full fine-tuning: {ratio:.2f}x steps/s")


CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]


def timed(fn) -> float:
    t = clock()
    fn()
    return clock() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=12, help="timed training steps per model")
    ap.add_argument("--decode-rounds", type=int, default=3, help="timed decodes per variant")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of this script")
    ap.add_argument("--finetune-only", action="store_true",
                    help="only LoRA against full fine-tuning (skips nn.Transformer and decoding)")
    ap.add_argument("--train-only", action="store_true",
                    help="only training against nn.Transformer (skips decoding, the RNN and fine-tuning)")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                    help="time steps by the wall clock (default) or by this process's CPU time, which a "
                         "shared machine disturbs less (use with --threads 1: other threads' spinning counts)")
    args = ap.parse_args()
    global clock
    clock = CLOCK[args.clock]
    torch.set_num_threads(args.threads or os.cpu_count() or 1)

    if args.quick:
        cfg = TransformerConfig(src_vocab_size=50, tgt_vocab_size=50, d_model=32, n_heads=4, d_ff=64,
                                n_encoder_layers=1, n_decoder_layers=1, dropout=0.1, final_norm=True)
        batch, src_len, tgt_len, out_len = 4, 8, 8, 8
    else:
        cfg = TransformerConfig(src_vocab_size=1000, tgt_vocab_size=1000, d_model=256, n_heads=4, d_ff=1024,
                                n_encoder_layers=3, n_decoder_layers=3, dropout=0.1, final_norm=True)
        batch, src_len, tgt_len, out_len = 64, 32, 32, 64
    g = torch.Generator().manual_seed(0)
    src = torch.randint(5, cfg.src_vocab_size, (batch, src_len), generator=g)
    tgt = torch.randint(5, cfg.tgt_vocab_size, (batch, tgt_len + 1), generator=g)
    tokens = batch * (src_len + tgt_len)
    if args.finetune_only:
        finetune = finetune_rates(cfg, src, tgt, args.steps)
        print_finetune(finetune, cfg, batch, src_len, tgt_len)
        if args.json:
            args.json.write_text(json.dumps({"finetune": finetune}, indent=2) + "\n")
        return
    rate = matmul_rate((128, 256) if args.quick else (1024, 2048))
    flops = flops_per_step(matched_pair(cfg, seed=0)[0], batch, src_len, tgt_len)

    # --- training at each dropout: the four models' steps alternate, so that a change of machine
    # load hits all alike
    steps = {}
    for p in TRAIN_GOALS:
        ours, ref = matched_pair(dataclasses.replace(cfg, dropout=p), seed=0)
        steps[("ours", p)] = train_step_fn(ours.train(), src, tgt)
        steps[("nn.Transformer", p)] = train_step_fn(ref.train(), src, tgt)
    for fn in steps.values():
        for _ in range(2):
            fn()
    times = {k: [] for k in steps}
    for _ in range(args.steps):
        for key, fn in steps.items():
            times[key].append(timed(fn))
    train = {p: {} for p in TRAIN_GOALS}
    for (name, p), ts in times.items():
        dt = statistics.median(ts)
        train[p][name] = {"ms_per_step": 1e3 * dt, "tokens_per_s": tokens / dt, "matmul_share": flops / dt / rate,
                          "spread_ms": [1e3 * min(ts), 1e3 * max(ts)]}
    train_ratio = {p: r["ours"]["tokens_per_s"] / r["nn.Transformer"]["tokens_per_s"] for p, r in train.items()}
    print(f"machine: {torch.get_num_threads()} threads, torch {torch.__version__}, "
          f"fp32 matmul {rate / 1e9:.0f} GFLOP/s (best square matmul)")
    print(f"model: d_model {cfg.d_model}, {cfg.n_heads} heads, {cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, "
          f"d_ff {cfg.d_ff}; batch {batch} x ({src_len} + {tgt_len}) tokens; "
          f"{flops / 1e9:.1f} GFLOP per training step; {args.steps} steps each, alternated; {args.clock} clock")
    for p, rows in train.items():
        print(f"training at dropout {p} (median step)   ms/step   (min-max)       tokens/s   share of matmul rate")
        for name, r in rows.items():
            lo, hi = r["spread_ms"]
            print(f"  {name:26s} {r['ms_per_step']:9.1f}  ({lo:6.1f}-{hi:6.1f}) {r['tokens_per_s']:11,.0f} "
                  f"{100 * r['matmul_share']:10.1f}%")
        print(f"  ratio ours / nn.Transformer at dropout {p}: {train_ratio[p]:.2f}x   (goal >= {TRAIN_GOALS[p]}x)")
    result = {"machine": {"threads": torch.get_num_threads(), "torch": torch.__version__,
                          "fp32_matmul_gflops": rate / 1e9, "clock": args.clock},
              "config": {"d_model": cfg.d_model, "heads": cfg.n_heads,
                         "layers": f"{cfg.n_encoder_layers}+{cfg.n_decoder_layers}", "d_ff": cfg.d_ff,
                         "vocab": cfg.tgt_vocab_size, "batch": batch, "src_len": src_len, "tgt_len": tgt_len,
                         "decode_tokens": out_len, "model_gflop_per_step": flops / 1e9},
              "train": {str(p): r for p, r in train.items()},
              "train_ratio": {str(p): r for p, r in train_ratio.items()},
              "train_goal": {str(p): g for p, g in TRAIN_GOALS.items()}}
    if args.train_only:
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n")
        return

    # --- greedy decoding of out_len tokens, all three on the same sources, from a fresh pair with
    # identical weights (the training steps above moved the two copies apart by rounding)
    ours, ref = matched_pair(cfg, seed=1)
    ours.eval()
    ref.eval()
    variants = {
        "ours, KV cache": lambda: greedy_encoder_decoder(ours, src, max_new_tokens=out_len, bos=1, eos=NEVER),
        "ours, no cache": lambda: greedy_encoder_decoder(ours, src, max_new_tokens=out_len, bos=1, eos=NEVER,
                                                         use_cache=False),
        "nn.Transformer": lambda: ref.greedy(src, max_new_tokens=out_len, bos=1, eos=NEVER)[:, 1:],
    }
    outputs = {name: fn() for name, fn in variants.items()}
    same = all(torch.equal(outputs["ours, KV cache"], o) for o in outputs.values())
    dtimes = {k: [] for k in variants}
    for _ in range(args.decode_rounds):
        for name, fn in variants.items():
            dtimes[name].append(timed(fn))
    decode = {name: {"tokens_per_s": batch * out_len / statistics.median(ts)} for name, ts in dtimes.items()}

    finetune = finetune_rates(cfg, src, tgt, args.steps)
    lora_name = next(k for k in finetune if k.startswith("LoRA"))

    base_d = decode["nn.Transformer"]["tokens_per_s"]
    result.update({
        "decode": decode, "decode_same_tokens": same,
        "decode_ratio_vs_nn_transformer": decode["ours, KV cache"]["tokens_per_s"] / base_d,
        "decode_ratio_vs_no_cache": decode["ours, KV cache"]["tokens_per_s"] / decode["ours, no cache"]["tokens_per_s"],
        "finetune": finetune,
        "finetune_ratio_lora_vs_full": finetune[lora_name]["steps_per_s"] / finetune["full fine-tuning"]["steps_per_s"],
    })

    print(f"greedy decoding, {out_len} output tokens x batch {batch}   tokens/s")
    for name, r in decode.items():
        print(f"  {name:26s} {r['tokens_per_s']:11,.0f}")
    print(f"  ratio KV cache / nn.Transformer: {result['decode_ratio_vs_nn_transformer']:.2f}x (goal >= 3x); "
          f"KV cache / no cache: {result['decode_ratio_vs_no_cache']:.2f}x; identical tokens: {'yes' if same else 'NO'}")
    result["rnn"] = bench_rnn(args, cfg.tgt_vocab_size, batch, src_len, tgt_len)
    print(f"rnn-seq2seq (GRU, d_model {32 if args.quick else 256}, 1+1 layers, bidirectional encoder), training "
          f"tokens/s (median step)")
    print("  attention        ours   plain loop   ratio ours / plain")
    for attention, r in result["rnn"].items():
        print(f"  {attention:9s} {r['ours_tokens_per_s']:10,.0f} {r['plain_tokens_per_s']:12,.0f} {r['ratio']:10.2f}x")
    print("  (goal: >= 1.0x for every attention)")
    print_finetune(finetune)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

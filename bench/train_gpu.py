"""Benchmark: training throughput and MFU on one GPU (made for an H200), in one prepared run.

Models (bf16 autocast over fp32 weights, fused AdamW, dropout 0, vocabulary 32,768):
  decoder-only     d_model 1024, 16 heads, 12 layers, d_ff 4096, sequences of 1024
  encoder-decoder  d_model 1024, 16 heads, 6 + 6 layers (12; the paper's Transformer big shape),
                   d_ff 4096, 1024 source and 1024 target tokens
  nn.Transformer   the encoder-decoder's configuration in torch.nn.Transformer (examprep/train/baseline.py)
each eager and under torch.compile (ours layer by layer: the layers share one compiled graph, so
compiling costs one layer's time; nn.Transformer whole).

FLOPs per step (examprep/train/flops.py): 6·N + 12·L·H·Q·T per token for decoder-only, and with
L_e + 2·L_d layers for encoder-decoder (S = T). MFU is given against 989 TFLOP/s (H100/H200 dense
bf16) and against the bf16 matmul rate measured at the start of this script.

Writes as it goes into $BENCH_OUT (else $OUT, else ./bench-gpu): env.json, matmul.json, one line per
model in results.jsonl, and summary.md rewritten after each model; it keeps under $BENCH_BUDGET_S
seconds (default 270) by skipping what would not fit. Imports only torch and examprep.train, from
this source tree, so it runs on a machine without the project's other dependencies.

    python bench/train_gpu.py                        # the H200 run
    BENCH_TINY=1 python bench/train_gpu.py           # a tiny size, on CPU too (a smoke test)
Other settings: BENCH_BATCH (sequences per step), BENCH_STEPS (timed steps), BENCH_COMPILE=0.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from examprep.train.flops import flops_per_step, formula, peak_flops  # noqa: E402
from examprep.checkpoints.config import TransformerConfig  # noqa: E402
from examprep.train.model import build_model, compile_layers  # noqa: E402
from examprep.train.baseline import TorchTransformer  # noqa: E402

START = time.perf_counter()
TINY = os.environ.get("BENCH_TINY", "0") == "1"
BUDGET = float(os.environ.get("BENCH_BUDGET_S", "270"))
OUT = Path(os.environ.get("BENCH_OUT") or os.environ.get("OUT") or "bench-gpu")
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
PEAK = 989e12


def elapsed() -> float:
    return time.perf_counter() - START


def sync() -> None:
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def write(name: str, data) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(json.dumps(data, indent=2) + "\n")


def matmul_rate() -> float:
    """Best bf16 FLOP/s of a large square matmul."""
    n = 256 if TINY else 8192
    a = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    sync()
    best = 0.0
    for _ in range(5 if TINY else 20):
        t = time.perf_counter()
        for _ in range(5):
            a @ b
        sync()
        best = max(best, 5 * 2 * n ** 3 / (time.perf_counter() - t))
    return best


def configs():
    if TINY:
        size = dict(d_model=64, n_heads=4, d_ff=256, max_len=64)
        dec_layers, enc_dec_layers, seq, vocab = 2, 1, 64, 512
    else:
        size = dict(d_model=1024, n_heads=16, d_ff=4096, max_len=1024)
        dec_layers, enc_dec_layers, seq, vocab = 12, 6, 1024, 32768
    common = dict(src_vocab_size=vocab, tgt_vocab_size=vocab, dropout=0.0, **size)
    dec = TransformerConfig(arch="decoder-only", n_decoder_layers=dec_layers, **common)
    enc_dec = TransformerConfig(arch="encoder-decoder", n_encoder_layers=enc_dec_layers,
                                n_decoder_layers=enc_dec_layers, final_norm=True, **common)
    return dec, enc_dec, seq


def run_one(name: str, cfg: TransformerConfig, seq: int, batch: int, steps: int, compiled: bool,
            baseline: bool) -> dict:
    torch.manual_seed(0)
    ours = build_model(cfg)                              # FLOPs are counted on our layout
    model = (TorchTransformer(cfg) if baseline else ours).to(DEVICE)
    if compiled:
        if baseline:
            # torch.compile does not trace a torch.nn layer compiled on its own (Dynamo leaves
            # torch's own top-level frames alone), so nn.Transformer is compiled whole.
            model = torch.compile(model)
        else:
            compile_layers(model)
    fused = {"fused": True} if DEVICE.type == "cuda" else {}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, **fused)
    g = torch.Generator().manual_seed(0)
    src = torch.randint(5, cfg.src_vocab_size, (batch, seq), generator=g).to(DEVICE)
    tgt = torch.randint(5, cfg.tgt_vocab_size, (batch, seq + 1), generator=g).to(DEVICE)
    inp, out = tgt[:, :-1], tgt[:, 1:]

    def step():
        with torch.autocast(device_type=DEVICE.type, dtype=torch.bfloat16):
            if cfg.arch == "decoder-only":
                logits = model(inp)
            elif baseline:
                logits = model(src, inp)
            else:
                logits = model(src, inp, src_padded=False)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, logits.shape[-1]), out.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t0 = time.perf_counter()
    for _ in range(3):                                   # warm-up (and compilation)
        loss = step()
    sync()
    warmup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    sync()
    dt = (time.perf_counter() - t0) / steps
    src_len = 0 if cfg.arch == "decoder-only" else seq
    flops = flops_per_step(ours, batch, src_len, seq)
    tokens = batch * (seq + src_len)
    row = {
        "model": name, "compiled": compiled, "arch": cfg.arch, "batch": batch, "seq": seq,
        "layers": cfg.n_decoder_layers if cfg.arch == "decoder-only" else f"{cfg.n_encoder_layers}+{cfg.n_decoder_layers}",
        "params": ours.num_params(), "tokens_per_step": tokens, "ms_per_step": 1e3 * dt,
        "tokens_per_s": tokens / dt, "tflops_per_step": flops / 1e12, "model_tflop_s": flops / dt / 1e12,
        "mfu_vs_989": flops / dt / PEAK, "warmup_and_compile_s": warmup_s, "final_loss": float(loss),
        "flop_formula": formula(cfg.arch),
    }
    if DEVICE.type == "cuda":
        row["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2 ** 30
        torch.cuda.reset_peak_memory_stats()
    return row                                           # the model and its optimizer go with this frame


def summary(rows: list[dict], rate: float, env: dict) -> str:
    lines = [f"# bench/train_gpu.py on {env['device']} (torch {env['torch']}, python {env['python']})", "",
             f"bf16 matmul measured: {rate / 1e12:.0f} TFLOP/s (peak used for MFU: 989 TFLOP/s)", "",
             "| model | compile | batch × seq | tokens/step | ms/step | tokens/s | model TFLOP/s | MFU vs 989 "
             "| MFU vs measured |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r or "skipped" in r:
            why = r.get("error") or r["skipped"]
            lines.append(f"| {r['model']} | {r['compiled']} | – | – | – | – | – | – | {why} |")
            continue
        lines.append(f"| {r['model']} | {r['compiled']} | {r['batch']} × {r['seq']} | {r['tokens_per_step']:,} | "
                     f"{r['ms_per_step']:.1f} | {r['tokens_per_s']:,.0f} | {r['model_tflop_s']:.1f} | "
                     f"{100 * r['mfu_vs_989']:.1f}% | {100 * r['model_tflop_s'] * 1e12 / rate:.1f}% |")
    lines += ["", "FLOPs: " + formula("decoder-only") + "; " + formula("encoder-decoder")]
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.jsonl").write_text("")
    if DEVICE.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "device": torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"CPU ({os.cpu_count()} cores)",
           "cuda": torch.version.cuda, "tiny": TINY, "budget_s": BUDGET,
           "peak_from_table": peak_flops(torch.cuda.get_device_name()) if DEVICE.type == "cuda" else None}
    write("env.json", env)
    print(json.dumps(env), flush=True)
    rate = matmul_rate()
    write("matmul.json", {"bf16_matmul_tflops": rate / 1e12})
    print(f"bf16 matmul: {rate / 1e12:.1f} TFLOP/s", flush=True)

    dec, enc_dec, seq = configs()
    batch = int(os.environ.get("BENCH_BATCH", "4" if TINY else "16"))
    steps = int(os.environ.get("BENCH_STEPS", "3" if TINY else "10"))
    allow_compile = os.environ.get("BENCH_COMPILE", "1") == "1"
    plan = [("ours decoder-only", dec, False, False), ("ours encoder-decoder", enc_dec, False, False),
            ("nn.Transformer", enc_dec, False, True)]
    if allow_compile:
        plan += [("ours decoder-only", dec, True, False), ("ours encoder-decoder", enc_dec, True, False),
                 ("nn.Transformer", enc_dec, True, True)]
    rows: list[dict] = []
    for name, cfg, compiled, baseline in plan:
        # Keep inside the budget: an eager model takes ~15 s here, a compiled one up to ~60 s.
        need = 60 if compiled else 15
        if TINY:
            need = 0
        if elapsed() + need > BUDGET:
            row = {"model": name, "compiled": compiled, "skipped": f"not started: {elapsed():.0f} s of {BUDGET:.0f} used"}
        else:
            try:
                row = run_one(name, cfg, seq, batch, steps, compiled, baseline)
                if DEVICE.type == "cuda":
                    torch.cuda.empty_cache()
            except Exception as err:        # one failing model must not lose the others' figures
                row = {"model": name, "compiled": compiled, "error": f"{type(err).__name__}: {err}".splitlines()[0],
                       "traceback": traceback.format_exc()[-2000:]}
                if DEVICE.type == "cuda":
                    torch.cuda.empty_cache()
        rows.append(row)
        with open(OUT / "results.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        text = summary(rows, rate, env)
        (OUT / "summary.md").write_text(text)
        shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items() if k != "traceback"}
        print(json.dumps(shown), f"[{elapsed():.0f} s]", flush=True)
    print(text, flush=True)


if __name__ == "__main__":
    main()

"""CLI commands of the reference Transformer trainer (`examprep train`, `examprep translate`).

torch is imported inside the commands only, so `examprep --help` stays fast. Each command parses
its options, calls one function of `examprep.train`, and prints what it returns.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from examprep.errors import ExamprepError
from examprep.train.options import TrainOptions

D = TrainOptions()           # the defaults (examprep.train.options imports no torch)

INTERRUPTED_EXIT = 130       # the shell's convention for "stopped by Ctrl-C"


def quiet_waiting_threads() -> None:
    # Before torch loads OpenMP: idle threads sleep instead of spinning, so that on a machine
    # whose cores other programs also use, a waiting thread does not take a core from a working
    # one (two spinning threads on a busy 2-core machine trained 10x slower than one thread).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def train(
    task: Optional[str] = typer.Option(None, "--task", help="Built-in task: dates (default), reverse, sort, copy."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", metavar="FILE",
                                          help="Parallel corpus, one 'source<TAB>target[<TAB>…]' per line (UTF-8)."),
    swap: bool = typer.Option(False, "--swap", help="Corpus: translate the second column into the first."),
    tokens: str = typer.Option(D.tokens, "--tokens", help="Corpus vocabulary: char or word."),
    heldout: float = typer.Option(D.heldout, "--heldout", help="Corpus: share of sources held out for evaluation."),
    arch: str = typer.Option(D.arch, "--arch", help="encoder-decoder or decoder-only."),
    d_model: int = typer.Option(D.d_model, "--d-model", help="Width of the model."),
    layers: int = typer.Option(D.layers, "--layers", help="Encoder layers and decoder layers (each)."),
    heads: int = typer.Option(D.heads, "--heads", help="Attention heads."),
    d_ff: int = typer.Option(D.d_ff, "--d-ff", help="Inner width of the feed-forward blocks."),
    dropout: Optional[float] = typer.Option(
        None, "--dropout", help="Dropout \\[default: 0 for built-in tasks, whose examples never repeat; 0.1 for corpora]."),
    norm: str = typer.Option(D.norm, "--norm", help="post (the paper) or pre LayerNorm."),
    final_norm: Optional[bool] = typer.Option(
        None, "--final-norm/--no-final-norm",
        help="Extra LayerNorm after each stack, as torch.nn.Transformer \\[default: with pre-norm]."),
    positions: str = typer.Option(D.positions, "--positions", help="sinusoidal, learned or rope."),
    share: str = typer.Option(D.share, "--share", help="Tied embeddings: all (one vocabulary), output, none."),
    steps: Optional[int] = typer.Option(None, "--steps", help="Train until this step (counted across --resume)."),
    minutes: Optional[float] = typer.Option(None, "--minutes",
                                            help="Minutes of training, evaluation excluded \\[default: 1 unless --steps]."),
    goal: Optional[float] = typer.Option(
        None, "--goal", help="Stop at this held-out exact match \\[default: 0.995 for tasks, off for corpora; 0: off]."),
    batch_tokens: int = typer.Option(D.batch_tokens, "--batch-tokens",
                                     help="Source + target tokens per step, all processes together."),
    lr_factor: float = typer.Option(D.lr_factor, "--lr-factor", help="Scale of the paper's learning-rate schedule."),
    warmup: int = typer.Option(D.warmup, "--warmup", help="Warm-up steps of the schedule."),
    label_smoothing: float = typer.Option(D.label_smoothing, "--label-smoothing", help="ε of label smoothing."),
    eval_every: int = typer.Option(D.eval_every, "--eval-every", help="Steps between evaluations (and checkpoints)."),
    eval_size: int = typer.Option(D.eval_size, "--eval-size", help="Built-in tasks: held-out examples to evaluate on."),
    max_len: int = typer.Option(D.max_len, "--max-len", help="Longest sequence in tokens; longer corpus pairs are left out."),
    device: str = typer.Option(D.device, "--device", help="auto, cpu or cuda."),
    threads: int = typer.Option(0, "--threads",
                                help="CPU threads; 0: the cores other programs leave free (at least 1)."),
    precision: str = typer.Option(D.precision, "--precision", help="auto (bf16 on CUDA, else fp32), fp32 or bf16."),
    compile: bool = typer.Option(False, "--compile", help="torch.compile the model."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Run directory \\[default: runs/NAME-TIME]."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its latest checkpoint."),
    seed: int = typer.Option(D.seed, "--seed", help="Seed of the data and of the initial weights."),
) -> None:
    """Train the reference Transformer: on a built-in task (default: dates) or a parallel corpus."""
    quiet_waiting_threads()
    from examprep.train.report import RichReporter, summary
    from examprep.train.trainer import train as run_training

    options = TrainOptions(
        task=task, corpus=str(corpus) if corpus else None, swap=swap, tokens=tokens, heldout=heldout,
        arch=arch, d_model=d_model, layers=layers, heads=heads, d_ff=d_ff, dropout=dropout, norm=norm,
        final_norm=final_norm, positions=positions, share=share, steps=steps, minutes=minutes,
        goal=goal, batch_tokens=batch_tokens, lr_factor=lr_factor, warmup=warmup,
        label_smoothing=label_smoothing, eval_every=eval_every, eval_size=eval_size, max_len=max_len,
        device=device, threads=threads, precision=precision,
        compile=compile, out=str(out) if out else None, resume=resume, seed=seed)
    result = run_training(options, reporter=RichReporter())
    if result.is_main:
        typer.echo(summary(result))
    if result.stopped == "interrupted":
        raise typer.Exit(INTERRUPTED_EXIT)


def translate(
    texts: List[str] = typer.Argument(
        ..., metavar="TEXT...",
        help="Sentences to translate; '-' reads lines from stdin (a blank line gives an empty output line)."),
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", metavar="DIR",
                                    help="A run directory (its latest checkpoint) or a step directory."),
    attention: bool = typer.Option(False, "--attention", help="Also show what the last layer attends to."),
    device: str = typer.Option("cpu", "--device", help="auto, cpu or cuda."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens",
                                             help="Longest output in tokens \\[default: from training]."),
) -> None:
    """Translate with a trained model (greedy decoding with a KV cache): one output line per TEXT, or
    per line of stdin with '-'. Characters the model never saw are read as unknown, with a warning."""
    import sys

    quiet_waiting_threads()
    from examprep.train.report import print_attention
    from examprep.train.serve import Translator

    if texts == ["-"]:
        texts = _stdin_lines(sys.stdin)
    elif "-" in texts:
        raise ExamprepError(f"'-' (read lines from stdin) must be the only TEXT, but {len(texts)} were "
                            f"given: translate either stdin or the TEXT arguments")
    else:
        for i, text in enumerate(texts, 1):
            if not text.strip():
                where = f"TEXT {i} of {len(texts)}" if len(texts) > 1 else "TEXT"
                raise ExamprepError(f"{where} is {'empty' if not text else 'blank'}: give a sentence to "
                                    f"translate, or '-' to read lines from stdin")
    translator = Translator.load(checkpoint, device=device, max_tokens=max_tokens)
    outputs = translator.translate(texts)
    kind = "characters" if translator.loaded.source_vocab.level == "char" else "words"
    for text, output in zip(texts, outputs):
        unknown = translator.unknown_tokens(text)
        if unknown:
            shown = text if len(text) <= 40 else text[:40] + "…"
            typer.echo(f"warning: {shown!r} has {kind} this model never saw, read as unknown: "
                       + ", ".join(repr(t.strip() or t) for t in unknown), err=True)
        typer.echo(output)
        if attention and text.strip():
            print_attention(translator.attention(text))


def _stdin_lines(stdin) -> List[str]:
    """The lines of stdin without their line ends; a line that is not UTF-8 is an error naming it."""
    raw = getattr(stdin, "buffer", None)
    if raw is None:                          # a text-only stream: undo Python's surrogate escapes
        raw = (line.encode("utf-8", "surrogateescape") for line in stdin)
    lines = []
    for number, line in enumerate(raw, 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ExamprepError(f"stdin line {number} is not UTF-8 (byte 0x{line[err.start]:02x} at byte "
                                f"{err.start + 1}); convert the input to UTF-8, e.g. with iconv") from None
        lines.append(text.rstrip("\r\n"))
    return lines


def register(app: typer.Typer) -> None:
    """Add the trainer's commands to the main app."""
    app.command(name="train")(train)
    app.command(name="translate")(translate)

"""`examprep train`, `examprep translate` and `examprep attention-map`: the course's Transformer,
trained, used and looked into (the work is in examprep.train, where torch is imported)."""

import sys
from pathlib import Path
from typing import List, Optional

import typer

from examprep.cli.usage import paragraphs
from examprep.errors import ExamprepError, Interrupted, check_seed, require_train
from examprep.train.controls import check_kept_not_changed, check_schedule
from examprep.train.schedule import DEFAULT_PEAK_LR
from examprep.train.options import (MAX_ALIGNMENT, MAX_BEAM, TrainOptions, check_architecture, check_attention_request,
                                    check_objective, check_tokens, parse_lengths, quiet_waiting_threads, resumed_model_kind)

app = typer.Typer()
DEFAULTS = TrainOptions()           # the defaults shown in --help (examprep.train.options imports no torch)


def given_on_command_line(ctx: typer.Context) -> frozenset:
    """The TrainOptions fields the user named (click's parameter sources): what --resume takes
    from the command line instead of the checkpoint."""
    sources = {name: ctx.get_parameter_source(name) for name in ctx.params}
    # by name: typer may bring its own copy of click, whose ParameterSource is another class
    return frozenset(name for name, source in sources.items()
                     if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT"))


TRAIN_HELP = paragraphs("""Train the reference Transformer (or an RNN encoder–decoder): on a built-in task (default:
    dates) or a parallel corpus; or, with --arch encoder-only --objective mlm, a BERT-style masked
    LM on their sentences.

    --resume keeps the run's options; its controls (--steps, --minutes, --goal, --eval-every,
    --threads, the schedule, --clip, --weight-decay, --grad-accum, --save-every, --keep, --precision, --compile) change only
    where given again; a model or data option given again with another value is an error.""")


@app.command(help=TRAIN_HELP)
def train(
    ctx: typer.Context,
    task: Optional[str] = typer.Option(None, "--task", help="Built-in task: dates (default), reverse, sort, copy."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", metavar="FILE",
                                          help="Parallel corpus, one 'source<TAB>target[<TAB>…]' per line (UTF-8)."),
    swap: bool = typer.Option(False, "--swap", help="Corpus: translate the second column into the first."),
    tokens: Optional[str] = typer.Option(
        None, "--tokens", help="Corpus vocabulary: char, word or bpe (subwords learned on the training pairs; "
                               "the tokenizers extra) [default: char; word for --objective mlm]."),
    bpe_vocab: Optional[int] = typer.Option(
        None, "--bpe-vocab", metavar="N",
        help="--tokens bpe: tokens in each BPE vocabulary, the 5 special tokens included [default: 1000]."),
    lengths: Optional[str] = typer.Option(None, "--lengths", metavar="MIN-MAX",
                                          help="reverse, sort, copy: string lengths [default: 4-16]."),
    heldout: float = typer.Option(DEFAULTS.heldout, "--heldout", help="Corpus: share of sources held out for evaluation."),
    arch: str = typer.Option(DEFAULTS.arch, "--arch",
                             help="encoder-decoder, decoder-only, rnn-seq2seq or encoder-only."),
    objective: str = typer.Option(DEFAULTS.objective, "--objective",
                                  help="seq2seq (translate), or mlm: BERT's masked LM (with --arch encoder-only)."),
    cell: Optional[str] = typer.Option(None, "--cell", help="rnn-seq2seq: gru or lstm [default: gru]."),
    attention: Optional[str] = typer.Option(
        None, "--attention", help="rnn-seq2seq: additive (Bahdanau), dot (Luong) or none [default: additive]."),
    bidirectional: bool = typer.Option(
        True, "--bidirectional/--unidirectional",
        help="rnn-seq2seq: the encoder reads the source both ways (D/2 units each) or left to right only."),
    d_model: int = typer.Option(DEFAULTS.d_model, "--d-model", help="Width of the model."),
    layers: int = typer.Option(DEFAULTS.layers, "--layers", help="Encoder layers and decoder layers (each)."),
    heads: int = typer.Option(DEFAULTS.heads, "--heads", help="Attention heads."),
    d_ff: int = typer.Option(DEFAULTS.d_ff, "--d-ff", help="Inner width of the feed-forward blocks."),
    dropout: Optional[float] = typer.Option(
        None, "--dropout", help="Dropout [default: 0 for built-in tasks, whose examples never repeat; 0.1 for corpora]."),
    norm: str = typer.Option(DEFAULTS.norm, "--norm", help="post (the paper) or pre LayerNorm."),
    final_norm: Optional[bool] = typer.Option(
        None, "--final-norm/--no-final-norm",
        help="Extra LayerNorm after each stack, as torch.nn.Transformer [default: with pre-norm]."),
    positions: str = typer.Option(DEFAULTS.positions, "--positions", help="sinusoidal, learned or rope."),
    share: str = typer.Option(DEFAULTS.share, "--share", help="Tied embeddings: all (one vocabulary), output, none."),
    steps: Optional[int] = typer.Option(None, "--steps", help="Train until this step (counted across --resume)."),
    minutes: Optional[float] = typer.Option(None, "--minutes",
                                            help="Minutes of training, evaluation excluded [default: 1 unless --steps]."),
    goal: Optional[float] = typer.Option(
        None, "--goal", help="Stop at this held-out exact match [default: 0.995 for tasks, off for corpora; 0: off]."),
    batch_tokens: int = typer.Option(DEFAULTS.batch_tokens, "--batch-tokens",
                                     help="Source + target tokens per step, all processes together."),
    lr_schedule: str = typer.Option(DEFAULTS.lr_schedule, "--lr-schedule",
                                    help="noam (the paper's), cosine, linear (both decay to 0 over --steps) or constant."),
    lr: Optional[float] = typer.Option(None, "--lr", help="Peak learning rate of cosine, linear and constant "
                                                          f"[default: {DEFAULT_PEAK_LR:g}]; not for noam."),
    lr_factor: float = typer.Option(DEFAULTS.lr_factor, "--lr-factor", help="noam: scale of the paper's schedule."),
    warmup: int = typer.Option(DEFAULTS.warmup, "--warmup", help="Warm-up steps of the schedule (linear up to the peak)."),
    weight_decay: float = typer.Option(DEFAULTS.weight_decay, "--weight-decay",
                                       help="AdamW's decoupled weight decay (matrices only)."),
    clip: float = typer.Option(DEFAULTS.clip, "--clip", help="Clip the gradients' global norm to this (0: off)."),
    grad_accum: int = typer.Option(DEFAULTS.grad_accum, "--grad-accum", metavar="N",
                                   help="Compute each step's batch in N micro-batches (less memory, the same update)."),
    label_smoothing: float = typer.Option(DEFAULTS.label_smoothing, "--label-smoothing", help="ε of label smoothing."),
    eval_every: int = typer.Option(DEFAULTS.eval_every, "--eval-every", help="Steps between evaluations (and checkpoints)."),
    save_every: Optional[int] = typer.Option(None, "--save-every",
                                             help="Steps between checkpoints [default: at every evaluation]."),
    keep: int = typer.Option(DEFAULTS.keep, "--keep", metavar="N",
                             help="Step checkpoints kept (RUN/best, the best evaluation's, is kept beside them)."),
    eval_size: int = typer.Option(DEFAULTS.eval_size, "--eval-size", help="Built-in tasks: held-out examples to evaluate on."),
    max_len: int = typer.Option(DEFAULTS.max_len, "--max-len",
                                help="Longest sequence in tokens; longer corpus pairs are left out."),
    device: str = typer.Option(DEFAULTS.device, "--device", help="auto, cpu or cuda."),
    threads: int = typer.Option(0, "--threads",
                                help="CPU threads; 0: the cores other programs leave free (at least 1)."),
    precision: str = typer.Option(DEFAULTS.precision, "--precision",
                                  help="auto (bf16 on CUDA, else fp32), fp32, bf16, or fp16 (CUDA, with loss scaling)."),
    compile: bool = typer.Option(False, "--compile/--no-compile",
                                 help="torch.compile the model (--resume keeps the run's choice)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Run directory [default: runs/NAME-TIME]."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its latest checkpoint."),
    seed: int = typer.Option(DEFAULTS.seed, "--seed", help="Seed of the data and of the initial weights."),
    tensorboard: bool = typer.Option(False, "--tensorboard",
                                     help="Also write log.jsonl's scalars to OUT/tensorboard (needs the tensorboard extra)."),
) -> None:
    check_seed(seed)                    # before torch loads
    if resume:
        kept = dict(zip(("arch", "objective"), resumed_model_kind(out, arch, objective)))
        check_kept_not_changed(TrainOptions(arch=arch, objective=objective, out=str(out),
                                            given=given_on_command_line(ctx)), kept)
        arch, objective = kept["arch"], kept["objective"]
    check_objective(arch, objective)
    check_architecture(arch, cell, attention, bidirectional)
    tokens = tokens or ("word" if objective == "mlm" else "char")
    check_tokens(tokens, bpe_vocab, objective, corpus is not None, resume)
    if not resume:
        check_schedule(TrainOptions(lr_schedule=lr_schedule, lr=lr, warmup=warmup, steps=steps,
                                    given=given_on_command_line(ctx)))      # before torch loads
    if lengths is not None and not resume:         # a resumed run keeps its lengths (and its task)
        parse_lengths(lengths, (task or "dates") if corpus is None else None)
    if tensorboard:
        from examprep.train.runlog import check_tensorboard

        check_tensorboard()             # before torch loads
    quiet_waiting_threads()
    from examprep.train.report import RichReporter, summary
    from examprep.train.trainer import train as run_training

    options = TrainOptions(
        task=task, corpus=str(corpus) if corpus else None, swap=swap, tokens=tokens, heldout=heldout,
        lengths=lengths,
        arch=arch, objective=objective, cell=cell, attention=attention, bidirectional=bidirectional,
        d_model=d_model, layers=layers, heads=heads, d_ff=d_ff, dropout=dropout, norm=norm,
        final_norm=final_norm, positions=positions, share=share, steps=steps, minutes=minutes,
        goal=goal, batch_tokens=batch_tokens, lr_schedule=lr_schedule, lr=lr, lr_factor=lr_factor, warmup=warmup,
        weight_decay=weight_decay, clip=clip, grad_accum=grad_accum, save_every=save_every, keep=keep,
        label_smoothing=label_smoothing, eval_every=eval_every, eval_size=eval_size, max_len=max_len,
        device=device, threads=threads, precision=precision,
        compile=compile, out=str(out) if out else None, resume=resume, seed=seed, tensorboard=tensorboard,
        bpe_vocab=bpe_vocab, given=given_on_command_line(ctx))
    if objective == "mlm":
        from examprep.train.mlm import summary as mlm_summary, train_mlm

        result = train_mlm(options, reporter=RichReporter())
        typer.echo(mlm_summary(result))
    else:
        result = run_training(options, reporter=RichReporter())
        if result.is_main:
            typer.echo(summary(result))
    if result.stopped == "interrupted":
        raise typer.Exit(Interrupted.exit_code)


@app.command()
def translate(
    texts: List[str] = typer.Argument(
        ..., metavar="TEXT...",
        help="Sentences to translate; '-' reads lines from stdin (a blank line gives an empty output line)."),
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", metavar="DIR",
                                    help="A run directory (its latest checkpoint) or a step directory."),
    attention: bool = typer.Option(False, "--attention", help="Also show what the last layer attends to."),
    device: str = typer.Option("cpu", "--device", help="auto, cpu or cuda."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens",
                                             help="Longest output in tokens [default: from training]."),
    beam: int = typer.Option(1, "--beam", help="Beam width K; 1: greedy decoding."),
) -> None:
    """Translate with a trained model (greedy decoding with a KV cache, or beam search with --beam):
    one output line per TEXT, or per line of stdin with '-'. Characters the model never saw are read
    as unknown, with a warning."""
    quiet_waiting_threads()
    from examprep.fileio import stdin_lines
    from examprep.train.report import print_attention
    from examprep.train.serve import Translator

    if not 1 <= beam <= MAX_BEAM:
        raise ExamprepError(f"--beam: expected a beam width from 1 (greedy) to {MAX_BEAM}, got {beam}")
    if texts == ["-"]:
        texts = stdin_lines(sys.stdin, ExamprepError)
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
    outputs = translator.translate(texts, beam=beam)
    kind = "words" if translator.loaded.source_vocab.level == "word" else "characters"   # bpe: unseen characters
    # an output line is empty when the model ends at once, as an untrained one does: said on stderr,
    # once for the lot when no input got a token, so that stdout keeps one line per input
    silent = [text for text, output in zip(texts, outputs) if text.strip() and not output]
    everything = len(silent) > 1 and len(silent) == sum(1 for text in texts if text.strip())
    if everything:
        typer.echo(f"warning: the model produced no tokens for any of the {len(silent)} inputs: it ends every "
                   f"output at once, as an untrained or barely trained model does", err=True)
    for text, output in zip(texts, outputs):
        shown = text if len(text) <= 40 else text[:40] + "…"
        unknown = translator.unknown_tokens(text)
        if unknown:
            typer.echo(f"warning: {shown!r} has {kind} this model never saw, read as unknown: "
                       + ", ".join(repr(t.strip() or t) for t in unknown), err=True)
        if text.strip() and not output and not everything:
            typer.echo(f"warning: {shown!r}: the model produced no tokens: it ended the output at once, as an "
                       f"untrained or barely trained model does", err=True)
        typer.echo(output)
        if attention and text.strip():
            print_attention(translator.attention(text))


@app.command("attention-map")
def attention_map(
    text: str = typer.Argument(..., help="The input to translate and look at."),
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", metavar="DIR",
                                    help="A run or step directory of `examprep train`."),
    kind: str = typer.Option("cross", "--kind", help="cross, encoder (self) or decoder (self)."),
    layer: int = typer.Option(-1, "--layer", help="Layer index (0-based; negative counts from the last)."),
    head: Optional[int] = typer.Option(None, "--head", help="One head (0-based); all heads when omitted."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also write the maps as a .pdf or .png figure."),
    alignment: int = typer.Option(200, "--alignment",
                                  help="dates models: held-out dates for the alignment rate "
                                       f"(0: off; at most {MAX_ALIGNMENT:,})."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Show a trained model's attention per layer and head (and the dates alignment rate)."""
    check_attention_request(text=text, kind=kind, alignment=alignment, out=out)
    require_train("examprep attention-map")      # before 'loading the model…': one line on the base install
    quiet_waiting_threads()
    from rich.text import Text as RichText

    from examprep.render.terminal import StepProgress, block_renderable, console

    # loading (torch and the checkpoint: seconds) shows on a terminal's bar only: without one, a line
    # before an error about the checkpoint would make that error two lines
    with StepProgress(plain={"alignment rate": "alignment rate: {done} of {total} held-out dates"}, lines=4) as progress:
        progress("loading the model", 0, None)
        from examprep.train.attention_map import attention_report

        report = attention_report(checkpoint, text, kind=kind, layer=layer, head=head, alignment=alignment,
                                  progress=progress)
    output = console(no_color)
    output.print(RichText(report.title))          # verbatim: the input may hold '$' or '['
    for heatmap in report.heatmaps:
        output.print(block_renderable(heatmap))
    if report.rates is not None:
        output.print(report.rate_line())
    if out is not None:
        from examprep.render.pdf import write_figure

        write_figure(out, report.title, report.heatmaps, report.footer())
        output.print(f"wrote {out}")

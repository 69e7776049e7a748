"""`examprep fill-mask` and `examprep finetune`: the BERT-style masked LM used, and LoRA fine-tuning
of a trained model (the work is in examprep.train.bert and examprep.train.finetune)."""

from pathlib import Path
from typing import Optional

import typer

from examprep.errors import ExamprepError, Interrupted, check_seed
from examprep.train.options import FinetuneOptions, parse_targets, quiet_waiting_threads, with_article

app = typer.Typer()
DEFAULTS = FinetuneOptions()
MAX_TOP_K = 100


@app.command("fill-mask")
def fill_mask(
    text: str = typer.Argument(..., help="A sentence with one or more [MASK], e.g. \"Je suis [MASK] .\""),
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", metavar="DIR",
                                    help="A masked-LM run (train --arch encoder-only --objective mlm) or step directory."),
    top_k: int = typer.Option(5, "--top-k", "-k", help=f"Words shown per [MASK] (1 to {MAX_TOP_K})."),
) -> None:
    """Fill in each [MASK] of TEXT: the masked LM's top-k words with their probabilities."""
    if not 1 <= top_k <= MAX_TOP_K:
        raise ExamprepError(f"--top-k: expected a count from 1 to {MAX_TOP_K}, got {top_k}")
    if "[MASK]" not in text:
        raise ExamprepError("TEXT has no [MASK]: write [MASK] where the model should fill in a word, "
                            "e.g. \"Je suis [MASK] .\"")
    quiet_waiting_threads()
    from examprep.train import checkpoint as ckpt
    from examprep.train.bert import fill_mask as fill, unknown_words

    loaded = ckpt.load(checkpoint, "cpu")
    if loaded.config.arch != "encoder-only":
        raise ExamprepError(f"{loaded.path} is {with_article(loaded.config.arch)} model; fill-mask needs a masked LM "
                            f"(examprep train --arch encoder-only --objective mlm)")
    answers = fill(loaded.model, loaded.source_vocab, text, top_k)
    unknown = unknown_words(loaded.source_vocab, text)
    if unknown:
        kind = "words" if loaded.source_vocab.level == "word" else "characters"
        typer.echo(f"warning: {kind} this model never saw, read as unknown: "
                   + ", ".join(repr(t) for t in unknown), err=True)
    width = max(len(tok) for answer in answers for tok, _ in answer)
    for n, answer in enumerate(answers, 1):
        if len(answers) > 1:
            typer.echo(f"[MASK] {n}:")
        for tok, prob in answer:
            typer.echo(f"  {tok:<{width}}  {prob:6.1%}")


@app.command()
def finetune(
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", metavar="DIR",
                                    help="The base model: a run or step directory of `examprep train`."),
    lora_rank: Optional[int] = typer.Option(None, "--lora-rank", metavar="R", help="LoRA rank r (1 to d_model)."),
    lora_alpha: Optional[float] = typer.Option(None, "--lora-alpha", metavar="A",
                                               help="LoRA α: the update is (α/r)·B A [default: α = r]."),
    targets: str = typer.Option(DEFAULTS.targets, "--targets",
                                help="Projections adapted in every attention block: any of q, k, v, o."),
    full: bool = typer.Option(False, "--full", help="Fine-tune every weight instead of LoRA (the comparison)."),
    task: Optional[str] = typer.Option(None, "--task",
                                       help="Built-in task, e.g. dates-dmy [default: the checkpoint's own data]."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", metavar="FILE", help="A 'source<TAB>target' corpus."),
    lr: Optional[float] = typer.Option(None, "--lr", help="Learning rate [default: 3e-3 LoRA, 1e-3 --full]."),
    warmup: int = typer.Option(DEFAULTS.warmup, "--warmup", help="Linear warm-up steps, then a constant rate."),
    batch_tokens: int = typer.Option(DEFAULTS.batch_tokens, "--batch-tokens", help="Source + target tokens per step."),
    steps: Optional[int] = typer.Option(None, "--steps", help="Train until this step (counted across --resume)."),
    minutes: Optional[float] = typer.Option(None, "--minutes", help="Minutes of training [default: 1 unless --steps]."),
    goal: Optional[float] = typer.Option(
        None, "--goal", help="Stop at this held-out exact match [default: 0.995 for tasks, off for corpora; 0: off]."),
    eval_every: int = typer.Option(DEFAULTS.eval_every, "--eval-every", help="Steps between evaluations (and saves)."),
    eval_size: int = typer.Option(DEFAULTS.eval_size, "--eval-size", help="Built-in tasks: held-out examples."),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Where the adapter (or the model, --full) is written."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out from its latest save."),
    merge: bool = typer.Option(False, "--merge", help="Also write OUT/merged: the model with B·A·α/r added in."),
    device: str = typer.Option(DEFAULTS.device, "--device", help="auto, cpu or cuda."),
    threads: int = typer.Option(0, "--threads", help="CPU threads; 0: the cores other programs leave free."),
    seed: int = typer.Option(DEFAULTS.seed, "--seed", help="Seed of the data and of the adapters' A."),
    tensorboard: bool = typer.Option(False, "--tensorboard",
                                     help="Also write log.jsonl's scalars to OUT/tensorboard (needs the tensorboard extra)."),
) -> None:
    """Fine-tune a trained model with LoRA (Hu et al. 2021): freeze it, train low-rank adapters on the
    chosen projections, save only the adapters (or, with --full, train every weight)."""
    options = FinetuneOptions(
        checkpoint=str(checkpoint), rank=lora_rank, alpha=lora_alpha, targets=targets, full=full, task=task,
        corpus=str(corpus) if corpus else None, lr=lr, warmup=warmup, batch_tokens=batch_tokens, steps=steps,
        minutes=minutes, goal=goal, eval_every=eval_every, eval_size=eval_size, out=str(out), resume=resume,
        merge=merge, device=device, threads=threads, seed=seed, tensorboard=tensorboard)

    check_seed(seed)                            # before the base model is read
    if not full:
        parse_targets(targets)                  # before torch loads; the rest is checked before any work
    if tensorboard:
        from examprep.train.runlog import check_tensorboard

        check_tensorboard()
    quiet_waiting_threads()
    from examprep.train.finetune import describe_counts, finetune as run, summary
    from examprep.train.report import RichReporter
    from examprep.checkpoints.stored import read

    d_model = read(checkpoint).config.d_model
    result = run(options, reporter=RichReporter())
    typer.echo(describe_counts(result, options, d_model))
    typer.echo(summary(result, options))
    if result.stopped == "interrupted":
        raise typer.Exit(Interrupted.exit_code)

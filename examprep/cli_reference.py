"""CLI commands of the reference model at work: `examprep verify` (engine vs torch) and
`examprep attention-map` (what a trained model attends to).

torch is imported only by the examprep.train and examprep.verify modules these commands call.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from examprep.cli_train import quiet_waiting_threads
from examprep.errors import ExamprepError, missing_extra


def _count(n: int, noun: str) -> str:
    """"1 cross layer (0)", "4 heads (0…3)": how many, and the indices an option accepts."""
    return f"{n} {noun} (0)" if n == 1 else f"{n} {noun}s (0…{n - 1})"


MAX_ALIGNMENT = 2000       # the trainer's own held-out evaluation size; about 20 s on one thread


def _one_thread():
    """One torch thread for the command (examprep.train.distributed.one_thread; the commands also call
    quiet_waiting_threads before torch loads)."""
    from examprep.train.distributed import one_thread

    return one_thread()


def verify(
    instances: int = typer.Option(50, "--instances", "-n", help="Random instances per topic."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random instances."),
    topic: list[str] = typer.Option([], "--topic", help="Only these topics (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """Check the numeric engine against torch on random instances of every topic torch computes."""
    from examprep.render.terminal import console

    if instances < 1:
        raise ExamprepError(f"--instances: expected a positive integer, got {instances}")
    if seed < 0:
        raise ExamprepError(f"--seed: expected an integer ≥ 0, got {seed}")
    topic = list(dict.fromkeys(topic))           # each topic once, in the order given
    quiet_waiting_threads()
    try:
        from examprep.verify import REFERENCES, verify as run_verify
    except ImportError as err:
        missing = missing_extra(err, "examprep verify")
        if missing is None:
            raise
        raise missing from None
    unknown = [t for t in topic if t not in REFERENCES]
    if unknown:
        raise ExamprepError(f"--topic: {unknown[0]!r} has no torch reference (choose from {', '.join(sorted(REFERENCES))})")
    out = console(no_color)
    with out.status("checking the engine against torch…"), _one_thread():
        rows = run_verify(instances, seed, list(topic) or None)
    if as_json:
        import json

        typer.echo(json.dumps([{"topic": r.topic, "instances": r.instances, "max_abs_diff": r.max_abs_diff,
                                "max_rel_diff": r.max_rel_diff, "failures": r.failures, "passed": r.passed,
                                "first_failure": r.first_failure} for r in rows], default=str))
    else:
        from rich.table import Table

        table = Table(title=f"engine vs torch ({instances} random instances per topic, seed {seed})")
        widest = max((len(r.topic) for r in rows), default=5)
        for col, just in (("topic", "left"), ("instances", "right"), ("max |diff|", "right"),
                          ("max rel", "right"), ("result", "left")):      # 80 columns for the longest topic
            table.add_column(col, justify=just, no_wrap=True, min_width=widest if col == "topic" else len(col))
        for r in rows:
            table.add_row(r.topic, str(r.instances), f"{r.max_abs_diff:.1e}", f"{r.max_rel_diff:.1e}",
                          "[green]pass[/]" if r.passed else f"[red]FAIL[/] ({r.failures})")
        out.print(table)
        for r in rows:
            if not r.passed:
                out.print(f"[red]{r.topic}[/]: first disagreement: {r.first_failure}", soft_wrap=True)
    raise typer.Exit(0 if all(r.passed for r in rows) else 1)


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
    from rich.text import Text as RichText

    from examprep.document import Heatmap
    from examprep.render.terminal import block_renderable, console

    kinds = {"cross": "cross", "encoder": "encoder self", "decoder": "decoder self"}
    if kind not in kinds:
        raise ExamprepError(f"--kind: expected cross, encoder or decoder, got {kind!r}")
    if out is not None and out.suffix.lower() not in (".pdf", ".png"):
        raise ExamprepError(f"--out: expected a .pdf or .png file name, got {out.name!r}")
    if not 0 <= alignment <= MAX_ALIGNMENT:
        raise ExamprepError(f"--alignment: expected a count from 0 to {MAX_ALIGNMENT:,} (held-out dates), got {alignment}")
    if not text.strip():
        raise ExamprepError("TEXT: expected some text to translate, got an empty string")
    if out is not None:
        from examprep.fileio import check_writable

        check_writable(out)             # before the work, not after it
    quiet_waiting_threads()
    try:
        from examprep.train import attention_map as am
        from examprep.train.serve import Translator
    except ImportError as err:
        missing = missing_extra(err, "examprep attention-map")
        if missing is None:
            raise
        raise missing from None
    translator = Translator.load(checkpoint)
    with _one_thread():
        att = am.model_attention(translator, text)
    cfg = translator.loaded.config
    n_layers = cfg.n_encoder_layers if kind == "encoder" else cfg.n_decoder_layers
    if not -n_layers <= layer < n_layers:
        raise ExamprepError(f"--layer: this model has {_count(n_layers, kind + ' layer')}, got {layer}")
    try:
        m = att.get(kinds[kind], layer % n_layers)
    except KeyError:
        raise ExamprepError(f"--kind: a {cfg.arch} model has no {kind} attention") from None
    if head is not None and not 0 <= head < cfg.n_heads:
        raise ExamprepError(f"--head: this model has {_count(cfg.n_heads, 'head')}, got {head}")
    heads = [head] if head is not None else list(range(cfg.n_heads))
    title = f"{m.name} of {checkpoint}: input {text!r} → output {att.output!r}"
    blocks = [Heatmap(f"head {h}", [[round(float(v), 4) for v in row] for row in m.weights[h]],
                       m.row_labels, m.col_labels) for h in heads]
    rates = None
    if alignment and translator.loaded.data.get("task") == "dates" and kind == "cross":
        from examprep.train.data import get_task

        sources = [s for s, _ in get_task("dates").heldout_pairs(alignment, seed=1)]
        with _one_thread():
            rates = am.alignment_rate(translator, sources, layer=layer % n_layers)
    output = console(no_color)
    output.print(RichText(title))          # verbatim: the input may hold '$' or '['
    for b in blocks:
        output.print(block_renderable(b))
    if rates is not None:
        best = max(rates, key=rates.get)
        output.print(f"alignment rate on {alignment} held-out dates (output character's most-attended source "
                     f"character in the matching day/month/year field): "
                     + ", ".join(f"head {h} {r:.1%}" for h, r in rates.items())
                     + f"; best head {best}: {rates[best]:.1%}")
        footer = f"Alignment rate on {alignment} held-out dates: best head {best}, {rates[best]:.1%}."
    if out is not None:
        from examprep.fileio import atomic_write_bytes
        from examprep.render.pdf import compile_pdf
        from examprep.render.typst.blocks import block
        from examprep.render.typst.latex import typst_string

        lines = [f"#{typst_string(title)}"] + [block(b) for b in blocks]     # the title verbatim
        if rates is not None:
            lines.append(f"#{typst_string(footer)}")
        source = "#set page(width: auto, height: auto, margin: 1.2cm)\n#set text(size: 10pt)\n" + "\n\n".join(lines)
        if out.suffix.lower() == ".pdf":
            data = compile_pdf(source)
        else:
            import typst

            data = typst.compile(source.encode("utf-8"), format="png", ppi=144, ignore_system_fonts=True)
            if isinstance(data, list):
                data = data[0]
        atomic_write_bytes(out, data)
        output.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command()(verify)
    app.command("attention-map")(attention_map)


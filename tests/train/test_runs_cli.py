"""`examprep runs`: the curves of run logs drawn into a PNG (size and panels checked on the figure
and on the file read back with Pillow), the terminal table within 80 columns, and every bad input
one line naming the file and the line, the other runs still shown. The logs are written here (no
training), in the schema of examprep.train.runlog."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from PIL import Image
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train.curves import figure, read_run

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def write_run(run_dir, *, rate: float, metric: str = "exact_match", steps: int = 40, fields=True):
    """A log whose losses fall as exp(-rate·step) (a made-up curve: only its shape is drawn)."""
    run_dir.mkdir(parents=True)
    lines = []
    for s in range(1, steps + 1):
        loss = 0.5 + 2.5 * math.exp(-rate * s)
        record = {"step": s, "loss": loss + 0.3, "lr": 1e-3}
        if fields:
            record.update(nll=loss, tokens_per_s=20_000.0 + s)
        lines.append(record)
        if s % 10 == 0:
            held = 0.6 + 2.5 * math.exp(-rate * s)
            value = 1 - math.exp(-rate * s) if metric != "bleu" else 40 * (1 - math.exp(-rate * s))
            lines.append({"step": s, "eval": {"heldout_loss": held, "perplexity": math.exp(held), "metric": metric,
                                              metric: value, "train_seconds": s / 10, "split": "held-out"}})
    (run_dir / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return run_dir


@pytest.fixture
def lora_full(tmp_path):
    return write_run(tmp_path / "lora", rate=0.05), write_run(tmp_path / "full", rate=0.12)


def test_the_default_figure_has_the_loss_heldout_perplexity_and_metric_panels(lora_full):
    fig = figure([read_run(p) for p in lora_full])
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["training loss (solid) and NLL (dashed)", "held-out loss (NLL per token)",
                      "held-out perplexity", "exact match"]
    assert [len(ax.get_lines()) for ax in fig.axes] == [4, 2, 2, 2]          # loss and NLL of each run
    assert fig.axes[2].get_yscale() == "log"
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["lora", "full"]         # named within their directory
    assert legend.get_title().get_text() == f"runs in {lora_full[0].parent}/"


def test_runs_out_writes_a_png_of_the_figures_size(lora_full, tmp_path):
    out = tmp_path / "curves.png"
    res = invoke("runs", *lora_full, "--out", out)
    assert res.exit_code == 0, res.output
    assert res.output.strip() == f"wrote {out} (4 panels, 2 runs)"
    with Image.open(out) as png:
        assert png.format == "PNG" and png.size == (1100, 680)             # 11 × 6.8 inches at 100 dpi
    res = invoke("runs", *lora_full, "--out", out, "--metric", "lr")
    assert res.exit_code == 2 and "already exists" in res.output
    res = invoke("runs", *lora_full, "--out", out, "--metric", "lr", "--metric", "tokens_per_s", "--force")
    assert res.exit_code == 0, res.output
    with Image.open(out) as png:
        assert png.size == (1100, 340)


def test_a_corpus_run_beside_a_task_run_gets_both_metrics_and_an_old_log_still_draws(tmp_path):
    runs = [write_run(tmp_path / "bleu", rate=0.1, metric="bleu"), write_run(tmp_path / "old", rate=0.1, fields=False)]
    fig = figure([read_run(p) for p in runs])
    assert [ax.get_title() for ax in fig.axes][3:] == ["BLEU", "exact match"]


def test_the_table_fits_80_columns_with_last_and_best(lora_full, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / ("a-very-long-run-directory-name-" * 3), rate=0.05)
    res = invoke("runs", "lora", "full", "a-very-long-run-directory-name-" * 3)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines and max(map(len, lines)) <= 80, res.output
    row = next(line for line in lines if line.startswith("full ")).split()
    assert row[1] == "40" and row[6] == "exact" and row[7] == row[8] == f"{100 * (1 - math.exp(-4.8)):.1f}%"


@pytest.mark.parametrize("content, message", [
    ('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": 1.9\n', "log.jsonl: line 2: not JSON"),
    ('{"step": 1, "loss": 2.0}\n\n[1, 2]\n', "log.jsonl: line 3: expected a JSON object, got list"),
    ('{"step": "one", "loss": 2.0}\n', 'log.jsonl: line 1: "step" must be a whole number'),
    ('{"step": 1, "loss": "low"}\n', 'log.jsonl: line 1: "loss" must be a number'),
    ('{"step": 1}\n', "log.jsonl: line 1: neither a step"),
    ("", "log.jsonl: no steps logged yet"),
])
def test_a_corrupt_log_is_one_line_naming_the_file_and_line(tmp_path, content, message):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "log.jsonl").write_text(content, encoding="utf-8")
    res = invoke("runs", tmp_path / "run")
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [res.output.strip()] and message in res.output, res.output
    assert res.output.startswith(f"error: {tmp_path / 'run' / 'log.jsonl'}")


def test_bad_runs_are_reported_and_the_others_still_drawn(lora_full, tmp_path):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "c.png"
    res = invoke("runs", lora_full[0], tmp_path / "empty", tmp_path / "missing", "--out", out, "--metric", "lr")
    assert res.exit_code == 2
    assert res.output.splitlines() == [
        f"warning: skipped {tmp_path / 'empty'}: no log.jsonl here (not a run directory of examprep train or finetune)",
        f"warning: skipped {tmp_path / 'missing'}: no such run directory",
        f"wrote {out} (1 panel, 1 run)",
        "error: 2 of 3 runs could not be read (above); the other 1 is shown"], res.output
    assert out.exists()
    res = invoke("runs", tmp_path / "empty")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--out", "c.pdf"], "--out c.pdf: expected a .png file name"),
    (["--metric", "bleu"], "--metric chooses the panels of --out FILE.png"),
    (["--out", "c.png", "--metric", "wer"], "--metric wer: no run logs it; choose from"),
])
def test_bad_options_are_one_line(lora_full, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    res = invoke("runs", *lora_full, *args)
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and message in res.output, res.output
    assert not (tmp_path / "c.png").exists() and not (tmp_path / "c.pdf").exists()


def test_the_table_imports_neither_torch_nor_matplotlib(lora_full):
    probe = ("import sys; from examprep.cli import main; sys.argv = ['examprep', 'runs', *sys.argv[1:]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'sympy')))")
    res = subprocess.run([sys.executable, "-c", probe, *map(str, lora_full)], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stdout + res.stderr


def test_a_last_line_cut_short_by_a_kill_is_left_out_and_the_run_still_drawn(tmp_path, monkeypatch):
    """A run killed (kill -9) while it appended a record leaves that line without its end: the
    records before it are the run's curve, as the resumed run writes that step again; a bad line
    that ends with its newline is still an error (the case above)."""
    run = write_run(tmp_path / "killed", rate=0.05, steps=10)
    whole = (run / "log.jsonl").read_bytes()
    (run / "log.jsonl").write_bytes(whole + b'{"step": 11, "loss": 0.8')
    monkeypatch.chdir(tmp_path)
    res = invoke("runs", "killed")
    assert res.exit_code == 0, res.output
    row = res.output.splitlines()[-1].split()
    assert row[1] == "10"                               # steps: the ten whole records
    assert (run / "log.jsonl").read_bytes() == whole + b'{"step": 11, "loss": 0.8'     # input not modified


def test_a_run_named_twice_is_shown_once_with_a_warning(lora_full, tmp_path):
    """runs/lora runs/lora (or runs/lora/log.jsonl beside it) drew two curves of one run in two
    colours and two identical rows, as if two runs had agreed exactly."""
    lora, full = lora_full
    res = invoke("runs", lora, full, lora / "log.jsonl", tmp_path / "." / "lora")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    rows = [line.split()[0] for line in lines[next(i for i, line in enumerate(lines) if line.startswith("run ")) + 1:]]
    assert rows == ["lora", "full"]
    assert res.stderr.splitlines() == [f"warning: {lora / 'log.jsonl'} is {lora} again; shown once",
                                       f"warning: {tmp_path / '.' / 'lora'} is {lora} again; shown once"]

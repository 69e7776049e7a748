"""The RNN encoder–decoder from the command line: train, translate (greedy and --beam),
attention-map, and the option combinations that are refused before any work."""
from __future__ import annotations

import string

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint

runner = CliRunner()
TINY = ["--task", "copy", "--lengths", "2-5", "--d-model", "32", "--layers", "1", "--batch-tokens", "300",
        "--eval-size", "30", "--warmup", "20", "--lr-factor", "1"]


def run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


@pytest.fixture(scope="module")
def rnn_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "gru"
    res = run("train", *TINY, "--arch", "rnn-seq2seq", "--cell", "gru", "--attention", "additive",
              "--steps", "40", "--eval-every", "40", "--out", out)
    assert res.exit_code == 0, res.output
    return out, res


def test_train_an_rnn_and_translate_greedy_and_with_a_beam(rnn_run):
    out, res = rnn_run
    assert "stopped at step 40 (reached --steps)" in res.stdout and "on 30 held-out pairs" in res.stdout
    cfg = checkpoint.load(out).config
    assert (cfg.arch, cfg.cell, cfg.attention, cfg.bidirectional) == ("rnn-seq2seq", "gru", "additive", True)
    greedy = run("translate", "-c", out, "abc", "zyxw")
    beam1 = run("translate", "-c", out, "--beam", "1", "abc", "zyxw")
    beam4 = run("translate", "-c", out, "--beam", "4", "abc", "zyxw")
    assert greedy.exit_code == beam1.exit_code == beam4.exit_code == 0, beam4.output
    assert greedy.stdout == beam1.stdout
    lines = beam4.stdout.splitlines()
    assert len(lines) == 2 and all(set(line) <= set(string.ascii_lowercase) for line in lines)


def test_the_attention_map_of_an_rnn_is_its_additive_attention(rnn_run):
    out, _ = rnn_run
    res = run("attention-map", "-c", out, "abcd", "--no-color", env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    # the title wraps at 80 columns, inside the run's path too where it is long (a deep temporary
    # directory): compared with every line break and space taken out
    title = f"decoder.attention of {out}: input 'abcd'"
    assert "".join(res.stdout.split()).startswith("".join(title.split())) and "additive attention" in res.stdout
    header = next(line for line in res.stdout.splitlines() if "<eos>" in line).split()
    assert header == ["a", "b", "c", "d", "<eos>"]
    res = run("attention-map", "-c", out, "abcd", "--kind", "encoder")
    assert res.exit_code == 2 and "has no self-attention" in res.output
    res = run("translate", "-c", out, "--attention", "abcd", env={"COLUMNS": "80"})
    assert res.exit_code == 0 and "decoder.attention" in res.stdout


@pytest.mark.parametrize("args,message", [
    (["--attention", "additive"], "--attention additive: encoder-decoder always uses scaled dot-product attention"),
    (["--arch", "decoder-only", "--attention", "dot"], "needs --arch rnn-seq2seq"),
    (["--cell", "lstm"], "--cell lstm: the cell is the RNN's; it needs --arch rnn-seq2seq"),
    (["--unidirectional"], "--unidirectional: the RNN encoder's reading direction; it needs --arch rnn-seq2seq"),
    (["--arch", "rnn-seq2seq", "--cell", "rnn"], "--cell: expected gru or lstm, got 'rnn'"),
    (["--arch", "rnn-seq2seq", "--attention", "luong"], "--attention: expected none, additive, dot, got 'luong'"),
    (["--arch", "transformer"], "--arch: expected encoder-decoder, decoder-only, rnn-seq2seq, encoder-only, got 'transformer'"),
    (["--lengths", "4-60"], "only the string tasks reverse, sort and copy have lengths, not --task dates"),
    (["--task", "copy", "--lengths", "60-4"], "expected 1 ≤ MIN ≤ MAX ≤ 200"),
    (["--task", "copy", "--lengths", "long"], "expected MIN-MAX letters such as 4-60, got 'long'"),
])
def test_impossible_combinations_are_one_line_errors_before_any_work(tmp_path, args, message):
    out = tmp_path / "never"
    res = run("train", *args, "--out", out)
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_beam_outside_its_range_is_refused(rnn_run):
    out, _ = rnn_run
    for beam in ("0", "1001"):
        res = run("translate", "-c", out, "--beam", beam, "abc")
        assert res.exit_code == 2 and "--beam: expected a beam width from 1 (greedy) to 1000" in res.output


def test_the_rnn_models_from_issue_22s_commands_are_one_line_errors(rnn_run, tmp_path):
    # LoRA adapts the Transformer's attention projections and fill-mask needs a masked LM: an RNN
    # checkpoint is refused in one line before any work, not a traceback
    out, _ = rnn_run
    res = run("finetune", "-c", out, "--lora-rank", "2", "--steps", "1", "--out", tmp_path / "ft")
    assert res.exit_code == 2 and "is an RNN encoder-decoder; finetune adapts the Transformer's" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "ft").exists()
    res = run("fill-mask", "-c", out, "a [MASK] b")
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output

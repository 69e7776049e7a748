"""`examprep train` and `examprep translate` from the command line."""
from __future__ import annotations

import os
import signal
import string
import subprocess
import time

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint

from .helpers import PYTHON, REPO

runner = CliRunner()
TINY = ["--task", "reverse", "--d-model", "32", "--layers", "1", "--heads", "4", "--d-ff", "64",
        "--batch-tokens", "400", "--eval-size", "40", "--warmup", "20", "--lr-factor", "1"]


def run(*args, input=None, env=None):
    return runner.invoke(app, [str(a) for a in args], input=input, env=env)


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child before exec: SIGINT handled by default, as a shell gives a command it starts in
    the foreground — a suite started in the background by a non-interactive shell inherits it ignored,
    and the command would never see the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_help_lists_the_trainer_commands_without_importing_torch():
    code = ("import sys; from typer.testing import CliRunner; from examprep.cli import app; "
            "res = CliRunner().invoke(app, ['--help']); "
            "print('train' in res.output and 'translate' in res.output, "
            "sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:3])")
    res = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "True []"


def test_train_then_translate_with_the_result(tmp_path):
    out = tmp_path / "run"
    res = run("train", *TINY, "--steps", "60", "--eval-every", "30", "--out", out)
    assert res.exit_code == 0, res.output
    assert "stopped at step 60 (reached --steps)" in res.stdout
    assert f"checkpoint: {out / 'step-000060'}" in res.stdout
    assert "token acc" in res.stdout and "on 40 held-out pairs" in res.stdout
    assert "…" not in res.stderr and "training task" not in res.stderr   # no cut-off copy of the live bar
    res = run("translate", "--checkpoint", out, "abcdef", "zyx")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and all(set(line) <= set(string.ascii_lowercase) for line in lines)
    res = run("translate", "--checkpoint", out, "abc", "qrstu")
    abc, qrstu = res.stdout.splitlines()
    res = run("translate", "--checkpoint", out, "-", input="abc\n\nqrstu\n   \n")
    assert res.exit_code == 0 and res.stdout.splitlines() == [abc, "", qrstu, ""]   # one line per input line
    res = run("translate", "--checkpoint", out / "step-000060", "--attention", "abcd", env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "decoder.layers.0.cross_attn (mean over heads)" in res.stdout
    header = next(line for line in res.stdout.splitlines() if "<eos>" in line).split()
    assert header == ["a", "b", "c", "d", "<eos>"]
    # a narrow console: every source column is still there (as one shade character each), no cut label
    res = run("translate", "-c", out, "--attention", "abcdefghijklmnopqrst", env={"COLUMNS": "40"})
    assert res.exit_code == 0, res.output
    assert "abcdefghijklmnopqrst" in res.stdout.split("\n", 2)[2] and "…" not in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()[2:]) <= 40
    # characters outside the vocabulary: translated, with one warning per input naming them
    res = run("translate", "-c", out, "ab日c本日", "abc")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2
    unknown = "warning: 'ab日c本日' has characters this model never saw, read as unknown: '日', '本'"
    # (a model this small may still end its outputs at once: that is said too, on its own line)
    assert [line for line in res.stderr.splitlines() if "the model produced no tokens" not in line] == [unknown]


def test_translate_refuses_blank_text_and_max_tokens_below_one(tmp_path):
    from examprep.train.data import TASKS, task_vocab
    from examprep.train.model import build_model

    from .helpers import small_config

    vocab = task_vocab(TASKS["reverse"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), n_encoder_layers=1,
                                     n_decoder_layers=1))
    checkpoint.save(tmp_path, 1, model, vocab, vocab, {"data": {"max_target_tokens": 8}})
    for text, what in (("", "TEXT is empty"), ("   ", "TEXT is blank")):
        res = run("translate", "-c", tmp_path, text)
        assert res.exit_code == 2 and res.stdout == ""
        assert res.stderr.startswith(f"error: {what}: give a sentence") and res.stderr.count("\n") == 1
    res = run("translate", "-c", tmp_path, "abc", "")
    assert res.exit_code == 2 and res.stderr.startswith("error: TEXT 2 of 2 is empty")
    for n in ("0", "-5"):
        res = run("translate", "-c", tmp_path, "--max-tokens", n, "abc")
        assert res.exit_code == 2 and res.stderr == f"error: --max-tokens must be at least 1, got {n}\n"
    res = run("translate", "-c", tmp_path, "--max-tokens", "1", "abc")
    assert res.exit_code == 0 and len(res.stdout.strip()) <= 1


def test_translate_dash_must_be_the_only_text_and_stdin_must_be_utf8(tmp_path):
    from examprep.train.data import TASKS, task_vocab
    from examprep.train.model import build_model

    from .helpers import small_config

    vocab = task_vocab(TASKS["reverse"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), n_encoder_layers=1,
                                     n_decoder_layers=1))
    checkpoint.save(tmp_path, 1, model, vocab, vocab, {"data": {"max_target_tokens": 4}})
    for texts in (["-", "abc"], ["abc", "-"], ["-", "-"]):
        res = run("translate", "-c", tmp_path, *texts, input="abc\n")
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert res.stderr.startswith("error: '-' (read lines from stdin) must be the only TEXT")
        assert res.stderr.count("\n") == 1
    res = run("translate", "-c", tmp_path, "-", input=b"abc\nab\xffc\n")
    assert res.exit_code == 2 and res.stdout == "", res.output
    assert res.stderr.startswith("error: stdin line 2 is not UTF-8") and res.stderr.count("\n") == 1
    res = run("translate", "-c", tmp_path, "-", input="abc\r\nab\n")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2, res.output
    # an untrained model may end its outputs at once, which is said; nothing else is
    assert all("the model produced no tokens" in line for line in res.stderr.splitlines()), res.stderr


def test_help_shows_the_bracketed_defaults():
    # a "[default: …]" in an option's help reaches the screen whole, whatever the help renderer (rich
    # once read it as a markup tag and dropped it); the screen wraps lines, so words are compared
    train_help = " ".join(run("train", "-h", env={"COLUMNS": "250"}).stdout.split())
    for text in ("[default: 0 for built-in tasks", "[default: with pre-norm]", "[default: 1 unless --steps]",
                 "[default: 0.995 for tasks", "[default: runs/NAME-TIME]"):
        assert text in train_help, text
    translate_help = " ".join(run("translate", "-h", env={"COLUMNS": "250"}).stdout.split())
    assert "Longest output in tokens [default: from training]." in translate_help
    assert "a blank line gives an empty output line" in translate_help


def test_user_errors_print_one_line_and_exit_non_zero(tmp_path):
    res = run("train", *TINY, "--steps", "2", "--device", "cuda", "--out", tmp_path / "a")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: --device cuda: no CUDA GPU is visible") and res.stderr.count("\n") == 1
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    res = run("train", "--corpus", empty, "--steps", "2", "--out", tmp_path / "b")
    assert res.exit_code == 2 and f"error: corpus {empty} is empty" in res.stderr
    res = run("translate", "--checkpoint", tmp_path / "nothing", "hello")
    assert res.exit_code == 2 and "error: checkpoint" in res.stderr and "does not exist" in res.stderr
    res = run("train", *TINY, "--steps", "2", "--precision", "fp8", "--out", tmp_path / "c")
    assert res.exit_code == 2 and "--precision 'fp8' is not one of auto, fp32, bf16" in res.stderr
    for option, message in ((["--out", tmp_path / ("x" * 300)], "error: --out: the name 'xxx"),
                            (["--threads", "100000"], "error: --threads 100000 is more than"),
                            (["--seed", "-5"], "error: --seed: expected a non-negative integer below 2**63, got -5")):
        res = run("train", *TINY, "--steps", "2", "--out", tmp_path / "d", *option)
        assert res.exit_code == 2 and res.stderr.startswith(message) and res.stderr.count("\n") == 1, res.output


def test_corpus_lines_without_a_tab_are_reported_and_training_goes_on(tmp_path):
    corpus = tmp_path / "pairs.tsv"
    lines = [f"w{i}\tm{i}" for i in range(30)]
    lines[3] = "no tab on line four"
    lines[17] = "nor here"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = run("train", "--corpus", corpus, "--steps", "3", "--d-model", "32", "--layers", "1", "--d-ff", "64",
              "--heldout", "0", "--out", tmp_path / "run")
    assert res.exit_code == 0, res.output
    assert "skipped 2 line(s) without a tab (line 4, 18)" in res.stderr
    assert "BLEU" in res.stdout and "on 28 training pairs" in res.stdout


def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly_then_resume_continues(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([PYTHON, "-m", "examprep", "train", *TINY, "--steps", "100000", "--eval-every", "20",
                             "--out", str(out)], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_ctrl_c_as_at_a_terminal)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and checkpoint.latest(out) is None:
        time.sleep(0.2)                                      # training is under way once step 20 is saved
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "(interrupted)" in stdout and f"continue with: examprep train --out {out} --resume" in stdout
    saved = checkpoint.latest(out)
    step = int(saved.name.split("-")[1])
    assert step > 20 and f"stopped at step {step:,} (interrupted)" in stdout
    assert checkpoint.load(out).path == saved
    res = run("train", "--out", out, "--resume", "--steps", step + 5)
    assert res.exit_code == 0, res.output
    assert f"stopped at step {step + 5:,} (reached --steps)" in res.stdout


@pytest.mark.parametrize("where", ["/proc/examprep-run", "file/run"])
def test_an_out_directory_that_cannot_be_written_exits_2_before_any_work(tmp_path, where):
    # as every other command's unwritable output: it exited 4 once the first checkpoint failed
    (tmp_path / "file").write_text("not a directory")
    out = where if where.startswith("/") else str(tmp_path / where)
    res = run("train", *TINY, "--steps", "2", "--out", out)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: --out {out}: cannot write a run directory there") and \
        res.stderr.count("\n") == 1, res.stderr
    assert "training on" not in res.output and not os.path.lexists(out)


def test_translate_says_when_the_model_produced_no_tokens(tmp_path, monkeypatch):
    # an untrained model ends its output at once: stdout keeps one (empty) line per input, and
    # stderr says why instead of leaving blank lines unexplained
    out = tmp_path / "run"
    assert run("train", *TINY, "--steps", "1", "--out", out).exit_code == 0
    from examprep.train.serve import Translator

    said = {"abc": "", "qrs": "srq"}
    monkeypatch.setattr(Translator, "translate", lambda self, texts, beam=1: [said.get(t, "") for t in texts])
    res = run("translate", "-c", out, "abc", "qrs")
    assert res.exit_code == 0 and res.stdout == "\nsrq\n", res.output
    assert res.stderr == ("warning: 'abc': the model produced no tokens: it ended the output at once, as an "
                          "untrained or barely trained model does\n")
    res = run("translate", "-c", out, "-", input="abc\n\nxyz\n")
    assert res.exit_code == 0 and res.stdout == "\n\n\n", res.output
    assert res.stderr == ("warning: the model produced no tokens for any of the 2 inputs: it ends every output at "
                          "once, as an untrained or barely trained model does\n")

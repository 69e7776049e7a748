"""Every command that takes --seed refuses a seed outside [0, 2**63) with the same one line, exit 2,
before any work (errors.check_seed: written once, called by each command's path)."""
import pytest
from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()
TOO_BIG = str(2**63)            # torch.manual_seed overflows above 2**64 − 1; a sheet draws below 2**63

COMMANDS = {
    "generate": ["generate", "attention"],
    "sheet": ["sheet", "--recipe", "rnn", "--out", "{tmp}/sheet"],
    "quiz": ["quiz", "--count", "1"],
    "anki": ["anki", "--out", "{tmp}/deck.apkg"],
    "verify": ["verify", "--topic", "softmax"],
    "check": ["check", "examprep/bank/questions/dense-by-hand.toml"],
    "train": ["train", "--task", "copy", "--out", "{tmp}/run"],
    "finetune": ["finetune", "--checkpoint", "{tmp}/base", "--task", "copy", "--lora-rank", "2", "--out", "{tmp}/ft"],
}


def _commands_with_a_seed() -> set[str]:
    from typer._click import Context
    import typer.main

    group = typer.main.get_command(app)
    ctx = Context(group)
    return {name for name in group.list_commands(ctx)
            if any("--seed" in getattr(p, "opts", ()) for p in group.get_command(ctx, name).params)}


def test_every_command_with_a_seed_is_checked_here():
    assert _commands_with_a_seed() == set(COMMANDS)


@pytest.mark.parametrize("seed", ["-1", TOO_BIG])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_seed_out_of_range_is_one_line_and_exit_2(command, seed, tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPREP_HOME", str(tmp_path))
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]] + ["--seed", seed]
    res = runner.invoke(app, args, input="")
    assert res.exit_code == 2, (args, res.output)
    assert res.output.strip().splitlines()[-1] == f"error: --seed: expected a non-negative integer below 2**63, got {seed}"
    assert "Traceback" not in res.output and list(tmp_path.iterdir()) == []    # nothing written, not even the store

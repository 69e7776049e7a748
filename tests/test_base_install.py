"""The base install (`pip install -e .`, no `[train]` extra): every command that needs the trainer's
packages says so in one line naming the install command, exit 2, never a traceback. The packages
are hidden from a fresh interpreter by an import hook, so the test runs where they are installed."""
import subprocess
import sys

import pytest

HIDE = """
import sys
from importlib.abc import MetaPathFinder

class Hidden(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "safetensors", "sacrebleu"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hidden())
sys.argv = ["examprep", *sys.argv[1:]]
from examprep.cli import main
main()
"""

COMMANDS = [
    ["train", "--steps", "1"],
    ["translate", "--checkpoint", "runs/x", "29 Nov 2026"],
    ["generate", "attention-from-model", "--checkpoint", "runs/x", "--seed", "1"],
    ["verify", "-n", "1"],
    ["attention-map", "--checkpoint", "runs/x", "29 Nov 2026"],
    ["train", "--arch", "encoder-only", "--objective", "mlm", "--steps", "1"],
    ["fill-mask", "--checkpoint", "runs/x", "Je suis [MASK] ."],
    ["finetune", "--checkpoint", "runs/x", "--lora-rank", "4", "--out", "runs/y"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_a_command_that_needs_the_trainer_says_how_to_install_it(args, tmp_path):
    res = subprocess.run([sys.executable, "-c", HIDE, *args], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "pip install -e '.[train]'" in lines[0]
    assert any(name in lines[0] for name in ("torch", "safetensors"))
    assert not (tmp_path / "runs").exists()


def test_the_hook_hides_only_the_trainers_packages(tmp_path):
    # the rest of examprep works on the base install: the hook must not break it
    res = subprocess.run([sys.executable, "-c", HIDE, "solve", "lora", "--params", '{"d": 8, "k": 8, "r": 2}',
                          "--json"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0 and '"trainable_params": 32' in res.stdout, res.stderr

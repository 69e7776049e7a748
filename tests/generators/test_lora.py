"""lora: against PEFT-style modules and a real Adam step."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_lora_answers_match_peft_style_modules_and_a_real_adam_step():
    for p in instances(["lora"], SEEDS):
        with torch.device("meta"):          # the modules' sizes without allocating (or initialising) their weights
            ref = REFERENCES["lora"]({k: p.params[k] for k in ("d", "k", "r", "num_matrices")})
        for name in ("trainable_params", "full_params", "fraction"):
            close(p.part(name).expected, ref[name])
        if p.difficulty == 3:
            small = {"d": 16, "k": 16, "r": p.params["r"] // 4, "num_matrices": 1, "bytes_per_value": 4, "optimizer": "adam"}
            measured = REFERENCES["lora-memory"](small)          # bytes per parameter, measured on a small copy
            assert p.part("bytes_per_param").expected == measured["full_training_bytes"] // (16 * 16)
            saved = (p.part("full_params").expected - p.part("trainable_params").expected) * 12 / 2 ** 20
            assert p.part("saved_mib").expected == pytest.approx(saved, rel=1e-12)

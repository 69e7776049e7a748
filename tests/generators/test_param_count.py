"""param-count: the numel of real torch modules."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import instances  # noqa: E402

SEEDS = range(10)


def test_param_count_answers_are_the_numel_of_real_torch_modules():
    for p in instances(["param-count"], SEEDS):
        for part in p.parts:
            if part.kind != "integer" or part.id == "gate_blocks":
                continue
            sub = part.ecf_rule.args
            assert part.expected == REFERENCES["param-count"](sub)["count"], (p.difficulty, part.id, sub)
        if p.difficulty == 2:
            layer = p.params["pytorch"]["layer"]
            module = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[layer](1, 1)
            assert p.part("gate_blocks").expected == module.weight_ih_l0.shape[0]      # gate blocks of one unit
            one_bias = {m.id: m.value for m in p.part("count_pytorch").misconceptions}["one-bias"]
            assert one_bias == p.part("count_keras").expected or layer == "gru"

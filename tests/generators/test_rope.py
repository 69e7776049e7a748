"""rope: against Llama's complex rotation; scores are relative."""
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_rope_answers_match_llamas_complex_rotation_and_scores_are_relative():
    for p in instances(["rope"], SEEDS):
        if p.difficulty < 3:
            close(p.part("output").expected, REFERENCES["rope"](p.params)["output"])
            continue
        pr = {k: p.params[k] for k in ("query", "key", "position_query", "position_key", "style")}
        ref = REFERENCES["rope-score"](pr)
        close(p.part("query_rotated").expected, ref["query_rotated"])
        close(p.part("key_rotated").expected, ref["key_rotated"])
        assert abs(p.part("score").expected - ref["score"]) < 1e-12
        assert abs(p.part("shifted_score").expected - p.part("score").expected) < 1e-12     # m − n only

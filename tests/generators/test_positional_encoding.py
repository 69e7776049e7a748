"""positional-encoding: against The Annotated Transformer's table and Llama's RoPE; the dot
product depends on the offset only."""
import math
import pytest

torch = pytest.importorskip("torch")

from examprep.verify import REFERENCES  # noqa: E402
from tests.generators.helpers import close, instances  # noqa: E402

SEEDS = range(10)


def test_positional_encoding_answers_match_the_annotated_transformer_table_and_llama_rope():
    for p in instances(["positional-encoding"], SEEDS):
        d = p.params["d_model"]
        if p.difficulty == 2:
            pos, k = p.params["position"], p.params["offset"]
            a = REFERENCES["positional-encoding"]({"position": pos, "d_model": d})["encoding"]
            b = REFERENCES["positional-encoding"]({"position": pos + k, "d_model": d})["encoding"]
            close(p.part("encoding").expected, a)
            close(p.part("shifted").expected, b)
            assert abs(p.part("dot").expected - float(torch.tensor(a) @ torch.tensor(b))) < 1e-12
            omegas = [10000 ** (-2 * i / d) for i in range(d // 2)]
            assert abs(p.part("dot").expected - sum(math.cos(k * w) for w in omegas)) < 1e-12
            continue
        enc = REFERENCES["positional-encoding"]({"position": p.params["position"], "d_model": d})["encoding"]
        if p.difficulty == 1:
            close(p.part("encoding").expected, enc)
            assert p.part("omega_1").expected == pytest.approx(0.01, rel=1e-12)
        else:
            i = p.params["pair"]
            close(p.part("pair").expected, enc[2 * i: 2 * i + 2])
            close(p.part("frequencies").expected, [1, 0.1, 0.01, 0.001])
            assert p.part("longest_wavelength").expected == pytest.approx(2 * math.pi * 1000, rel=1e-12)
            close(p.part("rope").expected, REFERENCES["rope"](p.params["rope"])["output"])


def test_positional_encoding_dot_product_does_not_depend_on_the_position():
    from examprep import engine

    for p in instances(["positional-encoding"], SEEDS):
        if p.difficulty != 2:
            continue
        k = p.params["offset"]
        for other in (0, 7, 123):
            assert abs(engine.positional_encoding_relative(other, k, 4).dot - p.part("dot").expected) < 1e-12

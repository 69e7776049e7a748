"""scaling-law: against sympy's exact arithmetic."""
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from tests.generators.helpers import instances  # noqa: E402

SEEDS = range(10)


def test_scaling_law_answers_equal_sympy_exact_arithmetic():
    for p in instances(["scaling-law"], SEEDS):
        if p.difficulty == 2:
            C = sp.Rational(repr(p.params["compute"]))          # the decimal as written: 1.2e+20 exactly
            N = sp.sqrt(C / 120)
            assert N.is_Integer and p.part("params").expected == pytest.approx(float(N), rel=1e-14)
            assert p.part("tokens").expected == pytest.approx(float(20 * N), rel=1e-14)
            g = sp.Integer(p.params["growth"])
            assert float(sp.sqrt(C * g / 120) / N) == pytest.approx(p.part("growth").expected, rel=1e-12)
            continue
        N, D = sp.Rational(repr(p.params["params"])), sp.Rational(repr(p.params["tokens"]))
        assert float(6 * N * D) == pytest.approx(p.part("compute").expected, rel=1e-14)
        if p.difficulty == 3:
            thr = p.params["num_gpus"] * sp.Rational(repr(p.params["peak_flops"])) * sp.Rational(repr(p.params["utilization"]))
            seconds = 6 * N * D / thr
            want = seconds if p.calculator_free else seconds / 86400
            assert float(want) == pytest.approx(p.part("time").expected, rel=1e-12)

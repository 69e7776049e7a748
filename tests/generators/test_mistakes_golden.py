"""Every built-in generator's known mistakes and ECF rules, readable: one file per generator,
``tests/golden/mistakes/<generator>.txt``, one line per ECF rule and per mistake of each part of
``generators.build(name, seed, level, calculator_free)`` on seeds 0–2 at every level:

    L2-std s0 h_new  ecf gru-blend {"convention": "lecture", "h": [1, 0], "n": {"$ref": "n"}, "z": {"$ref": "z"}}
    L2-std s0 h_new  mistake swapped-blend = [0.772895, 0.379095]  You blended with z on the old state — …

It guards the move of the mistakes into the solve tables (issue 37): a diff of these files shows
which value, explanation or ECF rule a commit changed, generator by generator (sweep.json only
says that something did). Regenerate the generators a commit names, and only those:

    EXAMPREP_UPDATE_GOLDEN=gru-step,conv2d python -m pytest -n 0 tests/generators/test_mistakes_golden.py

(``EXAMPREP_UPDATE_GOLDEN=1`` rewrites every file, as it rewrites problems.json and sweep.json.)

Numbers are written to 6 significant figures, so the files are the same on any machine whatever
order a BLAS sums in: a number within 1e-12 (relative to the largest of its value) of zero is 0, and
a number within 1e-10 relative of a 6-figure rounding boundary (0.0009765625, a power of two, is
one: 0.000976562 or 0.000976563 by the last bit) is written to 10 figures instead.
``test_the_text_is_the_same_for_values_a_different_summation_order_gives`` checks that every line
stays the same when each number moves by 1e-12 relative.
"""
from __future__ import annotations

import difflib
import functools
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from examprep import generators
from examprep.problem import Problem

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "mistakes"
SEEDS = (0, 1, 2)
ALL = ("1", "all", "true", "yes")


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _floats(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _floats(v)]
    return []


def number(x: float, scale: float) -> str:
    """``x`` to 6 significant figures (0 where it is round-off beside ``scale``; 10 figures on a
    6-figure rounding boundary): text no summation order changes."""
    if not math.isfinite(x):
        return repr(x)
    if abs(x) <= 1e-12 * scale or abs(x) < 1e-14:
        return "0"
    six = f"{x:.6g}"
    if f"{x * (1 - 1e-10):.6g}" != six or f"{x * (1 + 1e-10):.6g}" != six:
        six = f"{x:.10g}"
    return six


def text(value: Any, scale: float | None = None, nudge: float = 1.0) -> str:
    """A value (a mistake's, or an ECF argument) as one line of JSON-like text, floats through
    :func:`number` against the largest float of the whole value; ``nudge`` multiplies every float
    first (the stability test's other summation order)."""
    if scale is None:
        scale = max((abs(x) * nudge for x in _floats(value) if math.isfinite(x)), default=0.0)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return number(value * nudge, scale)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(text(v, scale, nudge) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {text(v, None, nudge)}"
                               for k, v in sorted(value.items())) + "}"
    raise TypeError(f"no golden text for {type(value).__name__}")


def problem_lines(p: Problem, key: str, nudge: float = 1.0) -> list[str]:
    """One line per ECF rule and per mistake of each part of one problem, in part order."""
    lines = []
    for part in p.parts:
        where = f"{key} s{p.seed} {part.id}"
        rule = part.ecf_rule
        if rule is not None:
            op = rule.op + (f"→{rule.output}" if rule.output else "")
            lines.append(f"{where}  ecf {op} {text(rule.args, None, nudge)}")
        for m in part.misconceptions:
            credit = f"  (credit {m.credit:g})" if m.credit else ""
            why = m.explanation.replace("\\", "\\\\").replace("\n", "\\n")
            lines.append(f"{where}  mistake {m.id} = {text(m.value, None, nudge)}{credit}  {why}")
    return lines


@functools.cache                     # built once for the two tests that read them (Problems are frozen)
def generator_problems(name: str) -> list[tuple[str, Problem]]:
    g = generators.load_all()[name]
    return [(f"L{level}-{'cf' if cf else 'std'}", generators.build(name, seed, level, cf))
            for level in g.levels for cf in ((False, True) if g.calculator_free else (False,)) for seed in SEEDS]


def golden_text(name: str) -> str:
    g = generators.load_all()[name]
    head = [f"# {name} version {g.version}: each part's ECF rule and known mistakes, seeds {SEEDS[0]}–{SEEDS[-1]}"
            " (tests/generators/test_mistakes_golden.py)"]
    return "\n".join(head + [line for key, p in generator_problems(name) for line in problem_lines(p, key)]) + "\n"


def _to_update(names: list[str]) -> list[str]:
    asked = os.environ.get("EXAMPREP_UPDATE_GOLDEN", "").strip()
    if not asked:
        return []
    if asked.lower() in ALL:
        return names
    wanted = [n.strip() for n in asked.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in names]
    if unknown:
        pytest.fail(f"EXAMPREP_UPDATE_GOLDEN: no generator {', '.join(unknown)} (give names from `examprep topics`, or 1)")
    return wanted


def test_the_golden_files_hold_every_generators_mistakes_and_ecf_rules():
    names = sorted(generators.load_all())
    update = _to_update(names)
    if update:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name in update:
            (GOLDEN / f"{name}.txt").write_text(golden_text(name), encoding="utf-8")
        pytest.skip(f"mistakes golden rewritten for {', '.join(update)}")
    stray = sorted(p.stem for p in GOLDEN.glob("*.txt") if p.stem not in names)
    assert not stray, f"golden files of no generator: {stray} (remove them)"
    missing = [n for n in names if not (GOLDEN / f"{n}.txt").exists()]
    assert not missing, f"generators without a mistakes golden: {missing}; regenerate them (see module doc)"
    changed = {}
    for name in names:
        now, stored = golden_text(name), (GOLDEN / f"{name}.txt").read_text(encoding="utf-8")
        if now != stored:
            changed[name] = list(difflib.unified_diff(stored.splitlines(), now.splitlines(), "golden", "now", lineterm="", n=0))
    if changed:
        first = next(iter(changed))
        pytest.fail(f"mistakes or ECF rules changed in {', '.join(changed)}; if on purpose, regenerate those "
                    f"(see module doc). {first}:\n" + "\n".join(changed[first][:30]))


def test_the_text_is_the_same_for_values_a_different_summation_order_gives():
    for name in sorted(generators.load_all()):
        for key, p in generator_problems(name):
            exact = problem_lines(p, key)
            for nudge in (1 - 1e-12, 1 + 1e-12):
                moved = problem_lines(p, key, nudge)
                diff = [(a, b) for a, b in zip(exact, moved) if a != b]
                assert not diff, f"{name} {key}: a value's text depends on its last bits: {diff[0]}"


def test_numbers_round_to_six_figures_except_round_off_and_rounding_boundaries():
    assert number(0.1 + 0.2, 0.3) == "0.3"
    assert number(-0.0, 0.0) == "0" and number(2e-17, 3.0) == "0" and number(2e-17, 0.0) == "0"
    assert number(1.23456789, 1.23456789) == "1.23457"
    assert number(2.0 ** -10, 1.0) == "0.0009765625"           # 0.000976562|5: on the 6-figure boundary
    assert text([1.0, 2e-17, 0.5], None) == "[1, 0, 0.5]"
    assert text({"b": [3, True], "a": {"$ref": "x"}}) == '{"a": {"$ref": "x"}, "b": [3, true]}'
    with pytest.raises(TypeError):
        text(object())

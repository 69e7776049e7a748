"""Checks of a key: its carried-forward rules against the values it stored when written
(ecf_drift, applied before a class is graded), and the instructor's self-test (every answer earns
full marks, every misconception is named, every rule reproduces its answer)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import __version__, ecf
from examprep.answers import check_part as check
from examprep.answers.figures import typed_to
from examprep.answers.result import to_array
from examprep.answers.tolerances import entries_ok
from examprep.ecf import check_value, same_check
from examprep.grading.grade import address


class Drift(NamedTuple):
    """Carried-forward rules that give another value today than when the key was written."""

    warnings: list[str]          # one per part address, naming it and the examprep that wrote the key
    parts: set[int]              # id() of every Part (in every variant) whose rule differs
    addresses: list[str]         # "q3.weights", in key order


def ecf_drift(key: Any) -> Drift:
    """Compare the carried-forward values a key stored when it was written with what its rules
    give today (examprep.ecf.same_check). A part whose stored value is missing or damaged
    counts as changed; the key is never refused. A key written before these values existed
    (ecf_check None) is not checked: nothing differs."""
    if key.ecf_check is None:
        return Drift([], set(), [])
    stored_sets = [("", key.problems, key.ecf_check.get("problems"))]
    stored_variants = key.ecf_check.get("variants")
    for sid, problems in key.variants.items():
        stored_sets.append((sid, problems, stored_variants.get(sid) if isinstance(stored_variants, dict) else None))
    off: set[int] = set()
    differs: dict[str, int] = {}
    for _, problems, stored in stored_sets:
        for n, problem in enumerate(problems, 1):
            values = stored[n - 1] if isinstance(stored, list) and n <= len(stored) else None
            answers = {p.id: p.expected for p in problem.parts}
            for part in problem.parts:
                if part.ecf_rule is None:
                    continue
                if isinstance(values, dict) and part.id in values and \
                        same_check(values[part.id], check_value(part.ecf_rule, answers)):
                    continue
                off.add(id(part))
                differs[address(n, part.id)] = differs.get(address(n, part.id), 0) + 1
    n_sets = len(key.variants) if key.variants else 0
    warnings = []
    for addr, count in differs.items():
        where = f" (in {count} of {n_sets} variants)" if key.variants and not key.problems else ""
        warnings.append(f"{addr}{where}: its carried-forward rule gives another value with this examprep "
                        f"({__version__}) than with examprep {key.examprep_version}, which wrote the key: "
                        "graded without carried-forward credit")
    return Drift(warnings, off, list(differs))


def _typed(value: Any) -> str:
    """A key value written as a student would type it (full precision)."""
    if isinstance(value, list):
        return "[" + ", ".join(_typed(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return "-inf"
    return str(value)


def self_test(key: Any) -> tuple[int, list[str]]:
    """The instructor's sanity check of a key: every part's own answer (as stored, as typed text
    and in its exact form) earns full marks; every misconception value is recognised and named;
    every ECF rule reproduces its part's answer from the key's earlier answers.

    Returns (checks run, failures as one line each naming the variant, address and what failed).
    """
    sets = [("", key.problems)] + [(f"variant {sid}: ", ps) for sid, ps in key.variants.items()]
    checks = 0
    issues: list[str] = []
    for label, problems in sets:
        for n, problem in enumerate(problems, 1):
            values = {p.id: p.expected for p in problem.parts}
            for part in problem.parts:
                addr = f"{label}{address(n, part.id)} ({problem.generator})"
                if part.kind == "written":       # marked by hand: an answer is pending, never graded wrong
                    checks += 1
                    if not part.model_answer.strip():
                        issues.append(f"{addr}: the written part has no model answer for the marker")
                        continue
                    r = check(part, part.model_answer)
                    if r.status != "pending" or r.score != 0:
                        issues.append(f"{addr}: the written part is graded {r.status}, not pending")
                    continue
                strict = part.tolerance.rule == "sigfigs-strict"
                trials = [("its answer", part.expected), ("its answer typed as text", _typed(part.expected))]
                if strict:                      # figures are counted as written: type them
                    trials = [(f"its answer to {int(part.tolerance.value)} significant figures",
                               typed_to(part.expected, int(part.tolerance.value)))]
                if part.exact is not None and not strict:
                    trials.append(("its exact form", part.exact))
                for what, raw in trials:
                    checks += 1
                    r = check(part, raw)
                    if r.status != "correct" or not r.full_marks:
                        issues.append(f"{addr}: {what} {_short(raw)} is graded {r.status} ({r.feedback})")
                for m in part.misconceptions:
                    checks += 1
                    r = check(part, typed_to(m.value, int(part.tolerance.value)) if strict else m.value)
                    if r.status != "misconception" or r.misconception is None or r.misconception.id != m.id:
                        got = f"{r.status}" + (f" as {r.misconception.id}" if r.misconception else "")
                        issues.append(f"{addr}: misconception {m.id} value {_short(m.value)} is graded {got} "
                                      f"({r.feedback})")
                if part.ecf_rule is not None and part.kind in ("number", "integer", "vector", "matrix"):
                    checks += 1
                    try:
                        again = np.asarray(ecf.evaluate(part.ecf_rule, values), dtype=float)
                        want = to_array(part.expected)
                        ok = again.size == want.size and bool(entries_ok(part.tolerance, again.reshape(want.shape),
                                                                         want, part.kind == "integer").all())
                    except Exception as err:      # noqa: BLE001 - any failure of an ECF rule is a key defect to report
                        issues.append(f"{addr}: its carried-forward rule ({part.ecf_rule.op}) fails on the key's answers: "
                                      f"{type(err).__name__}: {err}")
                        continue
                    if not ok:
                        issues.append(f"{addr}: its carried-forward rule ({part.ecf_rule.op}) does not reproduce the answer "
                                      f"from the key's earlier answers, so carried-forward credit would be wrong")
    if key.ecf_check is not None:
        checks += 1
        issues += ecf_drift(key).warnings
    return checks, issues


def _short(value: Any, n: int = 60) -> str:
    text = value if isinstance(value, str) else _typed(value)
    return repr(text if len(text) <= n else text[:n] + "…")

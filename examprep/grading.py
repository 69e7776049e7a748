"""Grade submissions against a key: one student's answers, or a whole class.

A submission's answers are addressed "q<N>.<part id>" (N counts the student's problems from 1, in
sheet order), flat or nested ({"q1": {"probs": ...}}). Each part is checked by
examprep.answers.check_part; parts are graded in order so a later part can be checked against
the value recomputed from the student's own earlier answers (error carried forward).
"""
from __future__ import annotations

import difflib
import gc
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from examprep.answers import PartResult, check_part
from examprep.problem import Problem, Tolerance


def address(number: int, part_id: str) -> str:
    """The answer address of a part: "q2.probs"."""
    return f"q{number}.{part_id}"


@dataclass
class Settings:
    """How to grade: error carried forward (on/off and its share of the points) and tolerance
    overrides — ``tolerances`` maps an address ("q2.loss"), a problem ("q2"), a part id ("loss")
    or "*" (every numeric part) to a Tolerance, most specific first."""

    ecf: bool = True
    ecf_credit: float = 1.0
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    ecf_off: frozenset[int] = frozenset()     # id() of parts graded without carried-forward credit (see ecf_drift)

    def tolerance_for(self, number: int, part_id: str, kind: str = "number") -> Tolerance | None:
        """The override for a part, most specific first; "*" reaches only numeric parts
        (number, vector, matrix), never integers, expressions or choices."""
        t = self.tolerances
        if not t:
            return None
        found = t.get(address(number, part_id)) or t.get(f"q{number}") or t.get(part_id)
        if found is None and kind in ("number", "vector", "matrix"):
            found = t.get("*")
        return found


@dataclass
class ProblemResult:
    number: int
    problem: Problem
    parts: list[PartResult]

    @property
    def score(self) -> float:
        return sum(r.score for r in self.parts)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.parts)

    @property
    def label(self) -> str:
        return f"q{self.number}"


@dataclass
class SubmissionResult:
    """One student's graded submission.

    ``source`` says where the answers came from (file, and row for a class CSV); ``warnings``
    lists unknown part ids and similar notes that did not stop the grading.
    """

    student_id: str
    problems: list[ProblemResult]
    name: str = ""
    source: str = ""
    warnings: list[str] = field(default_factory=list)
    variant: str = ""

    @property
    def score(self) -> float:
        return sum(p.score for p in self.problems)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.problems)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def parts(self) -> Iterable[tuple[str, ProblemResult, PartResult]]:
        for pr in self.problems:
            for r in pr.parts:
                yield address(pr.number, r.part_id), pr, r

    def counts(self) -> Counter:
        return Counter(r.status for _, _, r in self.parts())

    def to_dict(self) -> dict[str, Any]:
        return {"student_id": self.student_id, "name": self.name, "source": self.source, "variant": self.variant,
                "score": round(self.score, 6), "max_score": self.max_score, "percent": round(self.percent, 2),
                "warnings": self.warnings,
                "problems": [{"question": pr.label, "generator": pr.problem.generator, "title": pr.problem.title,
                              "score": round(pr.score, 6), "max_score": pr.max_score,
                              "parts": [r.to_dict() for r in pr.parts]} for pr in self.problems]}


def flatten_answers(answers: dict[str, Any]) -> dict[str, Any]:
    """{"q1": {"probs": x}} and {"q1.probs": x} both to {"q1.probs": x} (nested tables of any depth
    are joined with dots; non-answer fields such as student_id are kept as they are)."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            flat[prefix] = value

    for k, v in answers.items():
        walk(str(k), v)
    return flat


META_FIELDS = ("student_id", "id", "name", "email", "student", "variant", "timestamp", "submitted", "sheet")


def grade_submission(problems: list[Problem], answers: dict[str, Any], *, student_id: str = "", name: str = "",
                     source: str = "", settings: Settings | None = None) -> SubmissionResult:
    """Grade one student's answers to ``problems`` (the student's own variant).

    answers: {"q1.probs": raw, ...} or nested {"q1": {"probs": raw}}; raw is typed text or a
    TOML/JSON number or list. With a single problem, bare part ids ("probs") are accepted too.
    Unknown addresses are reported in ``warnings``, never fatal; missing ones grade as blank.
    """
    settings = settings or Settings()
    flat = flatten_answers(answers)
    if len(problems) == 1:
        ids = {p.id for p in problems[0].parts}
        flat = {(address(1, k) if k in ids and address(1, k) not in flat else k): v for k, v in flat.items()}
    known: list[str] = []
    results = []
    for n, problem in enumerate(problems, 1):
        earlier: dict[str, Any] = {}
        parts = []
        for part in problem.parts:
            addr = address(n, part.id)
            known.append(addr)
            r = check_part(part, flat.get(addr), earlier, ecf=settings.ecf and id(part) not in settings.ecf_off,
                           ecf_credit=settings.ecf_credit, tolerance=settings.tolerance_for(n, part.id, part.kind))
            # later parts recompute from the student's own value; a blank or unreadable answer
            # stands in with the key's, so one gap does not break the chain after it
            earlier[part.id] = r.value if r.status not in ("blank", "unparseable") else part.expected
            parts.append(r)
        results.append(ProblemResult(n, problem, parts))
    known_set = set(known)
    unknown = [k for k in flat if k not in known_set and k.lower() not in META_FIELDS and not k.startswith("meta.")]
    return SubmissionResult(student_id=student_id, name=name, source=source, problems=results,
                            warnings=unknown_warnings(unknown, known))


MAX_SUGGESTIONS = 10        # unknown part ids named (and fuzzy-matched) per submission; the rest are counted


def unknown_warnings(unknown: list[str], known: list[str]) -> list[str]:
    """One warning per unknown part id, with the closest known address, for the first
    MAX_SUGGESTIONS; then one line counting the rest. Fuzzy matching costs a comparison with every
    known address, so a file of 66,741 made-up ids would take half a minute and fill a CSV cell
    with megabytes: the cap keeps both small."""
    from examprep.answers.files import excerpt

    warnings = []
    for k in unknown[:MAX_SUGGESTIONS]:
        close = difflib.get_close_matches(k[:100], known, n=1, cutoff=0.6)
        warnings.append(f"unknown part id {excerpt(k)} ignored" + (f" (did you mean {close[0]}?)" if close else ""))
    if len(unknown) > MAX_SUGGESTIONS:
        warnings.append(f"… and {len(unknown) - MAX_SUGGESTIONS:,} more unknown part ids ignored")
    return warnings


# ----------------------------------------------------------------------------- batches

@dataclass
class BatchResult:
    """A class's grading: the graded submissions, the unreadable ones (one line each, with the
    reason), notes (directory entries skipped, duplicate ids), warnings about the key (a
    carried-forward rule that changed since it was written) and key_info for grades.json."""

    results: list[SubmissionResult]
    unreadable: list[str]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    key_info: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if self.unreadable else 0


def problems_for(key: Any, student_id: str, variant: str = "") -> tuple[list[Problem], str, str]:
    """The problems a student answered: their variant (by id, or by the variant code written in
    the submission), else the key's common problems. Returns (problems, variant, warning).
    Raises SubmissionError when the key has only variants and none is the student's."""
    from examprep.answers.files import SubmissionError

    if key.variants:
        if student_id in key.variants:
            return key.variants[student_id], key.variant_codes.get(student_id, student_id), ""
        if variant:
            want = variant.strip().casefold()
            for sid, code in key.variant_codes.items():
                if str(code).strip().casefold() == want and sid in key.variants:
                    return key.variants[sid], str(code), ""
                if str(sid).strip().casefold() == want and str(code) in key.variants:
                    return key.variants[str(code)], str(sid), ""
            for sid in key.variants:
                if sid.casefold() == want:
                    return key.variants[sid], sid, ""
        if key.problems:
            return key.problems, "", (f"no variant for student id {student_id!r} in the key: graded against "
                                      "the common problems")
        raise SubmissionError(f"no variant for student id {student_id!r} in this key"
                              + (f" (nor for variant code {variant!r})" if variant else "")
                              + "; check the id, or add variant = \"CODE\" from the sheet")
    return key.problems, "", ""


class Drift(NamedTuple):
    """Carried-forward rules that give another value today than when the key was written."""

    warnings: list[str]          # one per part address, naming it and the examprep that wrote the key
    parts: set[int]              # id() of every Part (in every variant) whose rule differs
    addresses: list[str]         # "q3.weights", in key order


def ecf_drift(key: Any) -> Drift:
    """Compare the carried-forward values a key stored when it was written with what its rules
    give today (examprep.recipes.same_check). A part whose stored value is missing or damaged
    counts as changed; the key is never refused. A key written before these values existed
    (ecf_check None) is not checked: nothing differs."""
    from examprep import __version__
    from examprep.recipes import check_value, same_check

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
                if part.recipe is None:
                    continue
                if isinstance(values, dict) and part.id in values and \
                        same_check(values[part.id], check_value(part.recipe, answers)):
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


def grade_batch(key: Any, paths: list[str], settings: Settings | None = None, *, key_path: str | None = None,
                progress: Any = None) -> BatchResult:
    """Read every submission under ``paths`` (files or directories), grade the readable ones and
    list the unreadable ones with their reasons. Inputs are only read.

    progress: an optional callable(done, total) called after each graded submission.
    Raises ParamError when ``paths`` holds no answer file at all (a usage error).
    """
    from pathlib import Path

    from examprep.answers.files import collect, read_file
    from examprep.errors import ParamError

    files, notes = collect(paths)
    if key_path is not None:
        kp = Path(key_path).resolve()
        skipped = [f for f in files if f.exists() and f.resolve() == kp]
        files = [f for f in files if f not in skipped]
        notes += [f"{f}: skipped (the key itself)" for f in skipped]
    if not files:
        raise ParamError("no answer files to grade: give SUBMISSION files (.toml, .json, .csv) or a directory of them")
    from dataclasses import replace

    drift = ecf_drift(key)
    settings = replace(settings or Settings(), ecf_off=frozenset(drift.parts))
    key_info = {"examprep_version": key.examprep_version, "format_version": key.format_version,
                "ecf_check": "absent" if key.ecf_check is None else "differs" if drift.parts else "passed",
                "ecf_without_credit": drift.addresses}
    subs = []
    unreadable: list[str] = []
    results: list[SubmissionResult] = []
    ids: Counter = Counter()
    # A class makes millions of small acyclic objects: the cyclic collector would rescan them
    # again and again (a third of the time on 10,000 students), so it waits until the end.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for f in files:
            try:
                got, errors = read_file(f)
            except Exception as err:      # noqa: BLE001 - a defect of ours must not stop the class; it is named
                got, errors = [], [_internal(f, "read", err)]
            subs += got
            unreadable += [str(e) for e in errors]
        ids.update(s.student_id for s in subs)
        sources: dict[str, list[str]] = {}
        for s in subs:
            sources.setdefault(s.student_id, []).append(s.source)
        _grade_all(key, subs, settings, results, unreadable, ids, sources, progress)
    finally:
        if gc_was_enabled:
            gc.enable()
    dups = sorted(k for k, v in ids.items() if v > 1)
    if dups:
        notes.append(f"duplicate student ids (each graded separately): {', '.join(map(repr, dups[:10]))}"
                     + (" …" if len(dups) > 10 else ""))
    return BatchResult(results, unreadable, notes, drift.warnings, key_info)


def _grade_all(key: Any, subs: list, settings: Settings | None, results: list, unreadable: list[str], ids: Counter,
               sources: dict[str, list[str]], progress: Any) -> None:
    from examprep.answers.files import SubmissionError

    for i, sub in enumerate(subs):
        try:
            problems, variant, warning = problems_for(key, sub.student_id, sub.variant)
        except SubmissionError as err:
            unreadable.append(f"{sub.source}: {err}")
            continue
        try:
            res = grade_submission(problems, sub.answers, student_id=sub.student_id, name=sub.name, source=sub.source,
                                   settings=settings)
        except Exception as err:          # noqa: BLE001 - a defect of ours must not stop the class; it is named
            unreadable.append(str(_internal(sub.source, "grade", err)))
            continue
        res.variant = variant
        res.warnings = sub.warnings + ([warning] if warning else []) + res.warnings
        if sub.id_from != "file":
            res.warnings.insert(0, f"no student_id in the file: using {sub.student_id!r}")
        if ids[sub.student_id] > 1:
            others = [s for s in sources[sub.student_id] if s != sub.source]
            res.warnings.insert(0, f"duplicate student id {sub.student_id!r} (also in {', '.join(others[:3])})")
        results.append(res)
        if progress is not None:
            progress(i + 1, len(subs))


def _internal(where: Any, what: str, err: Exception) -> Exception:
    """An unexpected failure on one submission, as a line that names it: the batch goes on."""
    return RuntimeError(f"{where}: could not be {'read' if what == 'read' else 'graded'} (an examprep defect, "
                        f"please report it: {type(err).__name__}: {str(err)[:200]})")


# ----------------------------------------------------------------------------- class summary

@dataclass
class QuestionSummary:
    label: str
    title: str
    mean: float
    max_score: float
    statuses: Counter


def summarise(results: list[SubmissionResult]) -> tuple[list[QuestionSummary], list[tuple[str, str, int, str]]]:
    """Mean score per question (over the students who have it) and the most frequent
    misconceptions as (address, misconception id, count, explanation), most frequent first."""
    by_q: dict[str, list[ProblemResult]] = {}
    for res in results:
        for pr in res.problems:
            by_q.setdefault(pr.label, []).append(pr)
    questions = []
    for label in sorted(by_q, key=lambda q: int(q[1:])):
        prs = by_q[label]
        statuses: Counter = Counter(r.status for pr in prs for r in pr.parts)
        titles = Counter(pr.problem.title for pr in prs)
        questions.append(QuestionSummary(label, titles.most_common(1)[0][0], sum(p.score for p in prs) / len(prs),
                                         max(p.max_score for p in prs), statuses))
    mis: Counter = Counter()
    explain: dict[tuple[str, str], str] = {}
    for res in results:
        for addr, _, r in res.parts():
            if r.misconception is not None:
                mis[(addr, r.misconception.id)] += 1
                explain[(addr, r.misconception.id)] = r.misconception.explanation
    top = [(a, m, c, explain[(a, m)]) for (a, m), c in mis.most_common()]
    return questions, top


# ----------------------------------------------------------------------------- self-test

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
    every recipe reproduces its part's answer from the key's earlier answers.

    Returns (checks run, failures as one line each naming the variant, address and what failed).
    """
    import numpy as np

    from examprep import recipes
    from examprep.answers import check_part as check
    from examprep.answers.check import _array, entries_ok
    from examprep.answers.figures import typed_to

    sets = [("", key.problems)] + [(f"variant {sid}: ", ps) for sid, ps in key.variants.items()]
    checks = 0
    issues: list[str] = []
    for label, problems in sets:
        for n, problem in enumerate(problems, 1):
            values = {p.id: p.expected for p in problem.parts}
            for part in problem.parts:
                addr = f"{label}{address(n, part.id)} ({problem.generator})"
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
                if part.recipe is not None and part.kind in ("number", "integer", "vector", "matrix"):
                    checks += 1
                    try:
                        again = np.asarray(recipes.evaluate(part.recipe, values), dtype=float)
                        want = _array(part.expected)
                        ok = again.size == want.size and bool(entries_ok(part.tolerance, again.reshape(want.shape),
                                                                         want, part.kind == "integer").all())
                    except Exception as err:      # noqa: BLE001 - any failure of a recipe is a key defect to report
                        issues.append(f"{addr}: its recipe ({part.recipe.op}) fails on the key's answers: "
                                      f"{type(err).__name__}: {err}")
                        continue
                    if not ok:
                        issues.append(f"{addr}: its recipe ({part.recipe.op}) does not reproduce the answer "
                                      f"from the key's earlier answers, so carried-forward credit would be wrong")
    if key.ecf_check is not None:
        checks += 1
        issues += ecf_drift(key).warnings
    return checks, issues


def _short(value: Any, n: int = 60) -> str:
    text = value if isinstance(value, str) else _typed(value)
    return repr(text if len(text) <= n else text[:n] + "…")

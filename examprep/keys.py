"""Answer keys and answer templates.

A key is JSON holding whole Problems (parameters, answers, tolerances, misconceptions, ECF rules — "recipe" in the JSON),
so grading never re-runs a random number generator. Per-student variants: ``variants`` maps a
student id to that student's list of Problems (the sheet prints a variant code, not the seed).

Answers are addressed as "q<N>.<part id>" (N counts problems from 1 in sheet order): a TOML
answer file has a table [q1] with the part ids as keys; a class CSV has a column "q1.scores".

``ecf_check`` (since examprep 0.1.0, issue 14; optional, so the format stays 1 and older keys and
older readers still work): per problem, for each part with a carried-forward rule, the rule's
value on the key's own answers — {"problems": [{part id: value}], "variants": {id: [...]}}.
Grading recomputes them (examprep.ecf.same_check) and gives no carried-forward credit on a
part whose rule now computes something else. A key without it grades as keys always did.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examprep import __version__
from examprep.answers import rule_text
from examprep.answers.files import SubmissionError, decode
from examprep.answers.rules import key_part_error
from examprep.ecf import check_values
from examprep.errors import ExamprepError
from examprep.escape import printable, shown, unprintable_char
from examprep.fileio import OutputError, atomic_write_text, check_output_file, read_user_bytes, real_path
from examprep.generators import mark_shapes
from examprep.keyfields import key_field_error
from examprep.problem import KINDS, PartValueError, Problem
from examprep.render import answer_form, decimal_comma as render_comma, decimals
from examprep.render.terminal import inline

KEY_FORMAT = 1


class KeyFileError(ExamprepError):
    """A file that is not an examprep key, or one from a newer examprep."""


@dataclass
class Key:
    title: str
    problems: list[Problem]
    variants: dict[str, list[Problem]] = field(default_factory=dict)
    variant_codes: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    ecf_check: dict[str, Any] | None = None       # as read; None: computed when the key is written
    examprep_version: str = ""                    # the examprep that wrote the key ("" for a new one)
    format_version: int = KEY_FORMAT

    def problems_for(self, student_id: str | None) -> list[Problem]:
        """The student's variant when the key has one, else the common problems."""
        if student_id is not None and student_id in self.variants:
            return self.variants[student_id]
        return self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"format": "examprep-key", "format_version": KEY_FORMAT, "examprep_version": __version__,
                "title": self.title, "meta": self.meta, "problems": [p.to_dict() for p in self.problems],
                "variants": {sid: [p.to_dict() for p in ps] for sid, ps in self.variants.items()},
                "variant_codes": self.variant_codes,
                "ecf_check": self.ecf_check if self.ecf_check is not None else self.check_values()}

    def check_values(self) -> dict[str, Any]:
        """The carried-forward rules' values on this key's own answers, computed now."""
        return {"problems": check_values(self.problems),
                "variants": {sid: check_values(ps) for sid, ps in self.variants.items()}}


def key_to_json(key: Key) -> str:
    return json.dumps(key.to_dict(), ensure_ascii=False, allow_nan=False, indent=1)


def write_key(path: str | Path, key: Key) -> Path:
    return atomic_write_text(path, key_to_json(key) + "\n")


def read_key(path: str | Path) -> Key:
    """Load a key; raises KeyFileError for a missing file, bad JSON, a non-key or a newer format.

    The text may be UTF-8 (with or without a BOM) or UTF-16; the file is never modified.
    """
    p = Path(path)
    data = read_user_bytes(p, error=KeyFileError, kind="key file")
    try:
        text = decode(data, str(p))
    except SubmissionError as err:
        raise KeyFileError(f"{err} (expected an examprep key)") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as err:
        raise KeyFileError(f"{p}: not a key (invalid JSON at line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise KeyFileError(f"{p}: not a key (JSON nested too deeply)") from None
    except ValueError:                         # an integer of more digits than Python converts (4300)
        raise KeyFileError(f"{p}: damaged key (a number with thousands of digits)") from None
    if not isinstance(d, dict) or d.get("format") != "examprep-key":
        raise KeyFileError(f"{p}: not an examprep key (write one with `examprep generate ... --key FILE`)")
    version = d.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise KeyFileError(f"{p}: damaged key: format_version must be a whole number ≥ 1, got {shown(version)}")
    if version > KEY_FORMAT:
        raise KeyFileError(f"{p}: format_version {shown(version)}: key format is newer than this examprep reads "
                           f"({KEY_FORMAT}); upgrade examprep")
    _check_structure(d, p)
    wrong = key_field_error(d)
    if wrong is not None:
        raise KeyFileError(f"{p}: {wrong}")
    try:
        check = d.get("ecf_check")
        key = Key(title=d.get("title", ""), problems=_problems(d["problems"], p, ""),
                  variants={sid: _problems(ps, p, f"variant {sid}: ") for sid, ps in d.get("variants", {}).items()},
                  variant_codes=d.get("variant_codes", {}), meta=d.get("meta", {}),
                  ecf_check=None if "ecf_check" not in d else check if isinstance(check, dict) else {},
                  examprep_version=str(d.get("examprep_version", "") or "unknown"), format_version=version)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise KeyFileError(f"{p}: damaged key ({type(err).__name__}: {err})") from None
    _check_parts(key, p)
    return _marked(key)


def _marked(key: Key) -> Key:
    """The key with its tensor-shape parts marked from the solve tables (a key written before they
    were, too: its exam can be regraded with 10×26×26 read as a shape)."""
    key.problems = [mark_shapes(problem) for problem in key.problems]
    key.variants = {sid: [mark_shapes(problem) for problem in ps] for sid, ps in key.variants.items()}
    return key


def _number(value: Any) -> bool:
    """A JSON number that converts to a float (no bool; no integer beyond a float's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _is_array(value: Any, depth: int) -> bool:
    """A non-empty list of numbers (depth 1) or of equally long non-empty lists of numbers (depth 2)."""
    if not isinstance(value, list) or not value:
        return False
    if depth == 1:
        return all(_number(v) for v in value)
    return all(_is_array(row, 1) for row in value) and len({len(row) for row in value}) == 1


def _is_numeric(value: Any) -> bool:
    """A number or nested lists of numbers (a misconception's value of a numeric part)."""
    return _number(value) or (isinstance(value, list) and all(_is_numeric(v) for v in value))


# A part's id, as examprep writes it (generators; question files allow 40 characters): q2.loss in an
# answer file splits at the dot, so an id holding one (a.b) could not be addressed.
PART_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
PART_FIELDS = ("id", "prompt", "kind", "expected", "tolerance", "points", "minutes")
PROBLEM_FIELDS = ("generator", "title", "statement", "parts", "solution")


def _check_structure(d: dict, path: Path) -> None:
    """Refuse, before anything is graded, a key whose JSON is not what examprep writes: one line
    naming the key file and the field (q2.loss: points must be ...). Raises KeyFileError."""
    for name, kind in (("title", str), ("meta", dict), ("variants", dict), ("variant_codes", dict)):
        if name in d and not isinstance(d[name], kind):
            raise KeyFileError(f"{path}: damaged key: {name} must be {'text' if kind is str else 'a table'}, "
                               f"got {shown(d[name])}")
    problems = d.get("problems")
    if not isinstance(problems, list):
        raise KeyFileError(f"{path}: damaged key: problems must be a list of problems, got {shown(problems)}")
    variants = d.get("variants", {})
    if not problems and not variants:
        raise KeyFileError(f"{path}: damaged key: it has no problems (nothing to grade)")
    _check_problems(problems, path, "")
    codes: dict[str, str] = {}
    for sid, code in d.get("variant_codes", {}).items():     # a code names one student's sheet: never two
        if not isinstance(code, str):
            raise KeyFileError(f"{path}: variant_codes.{printable(sid)}: must be text, got {shown(code)}")
        if code in codes:
            raise KeyFileError(f"{path}: damaged key: variant_codes: students {printable(codes[code])} and "
                               f"{printable(sid)} have the same code {shown(code)}")
        codes[code] = sid
    for sid, ps in variants.items():
        if not isinstance(ps, list) or not ps:
            raise KeyFileError(f"{path}: damaged key: variant {printable(sid)} must be a list of problems, got {shown(ps)}")
        _check_problems(ps, path, f"variant {printable(sid)}: ")


def _check_problems(problems: list, path: Path, label: str) -> None:
    for n, problem in enumerate(problems, 1):
        where = f"{path}: {label}q{n}"
        if not isinstance(problem, dict):
            raise KeyFileError(f"{where}: damaged key: a problem must be a table, got {shown(problem)}")
        for name in PROBLEM_FIELDS:
            if name not in problem:
                raise KeyFileError(f"{where}: damaged key: the problem has no {name!r}")
        for name in ("generator", "title"):
            if not isinstance(problem[name], str):
                raise KeyFileError(f"{where}: {name} must be text, got {shown(problem[name])}")
        parts = problem["parts"]
        if not isinstance(parts, list) or not parts:
            raise KeyFileError(f"{where}: parts must be a non-empty list of parts, got {shown(parts)}")
        seen: set[str] = set()
        for part in parts:
            if not isinstance(part, dict):
                raise KeyFileError(f"{where}: damaged key: a part must be a table, got {shown(part)}")
            if not isinstance(part.get("id"), str) or not part["id"].strip():
                raise KeyFileError(f"{where}: a part's id must be non-empty text, got {shown(part.get('id'))}")
            _check_id(part["id"], f"{where}: a part's id")
            if part["id"] in seen:
                raise KeyFileError(f"{where}: two parts have the id {shown(part['id'])}")
            if not PART_ID.fullmatch(part["id"]):
                raise KeyFileError(f"{where}: a part's id must be letters, digits and _ (not first a digit, at most 64), "
                                   f"as q2.loss addresses it; got {shown(part['id'])}")
            refs = part.get("depends_on", [])
            for ref in refs if isinstance(refs, list) else ():
                if not isinstance(ref, str) or ref not in seen:    # an earlier part of this problem: never itself, a later one
                    raise KeyFileError(f"{where}.{printable(part['id'])}: depends_on {shown(ref)} is not an earlier "
                                       "part of this problem")
            seen.add(part["id"])
            _check_part(part, f"{where}.{printable(part['id'])}")


def _check_id(name: str, what: str) -> None:
    """An id is an address (q2.loss in answer files, CSV columns, reports): examprep never writes
    one with a control character (question files refuse them), and one would reach a terminal raw."""
    bad = unprintable_char(name)
    if bad is not None:
        raise KeyFileError(f"{what} {shown(name)} holds a control character ({printable(bad)})")


def _check_part(part: dict, where: str) -> None:
    """One part's fields, as grading reads them."""
    for name in PART_FIELDS:
        if name not in part:
            raise KeyFileError(f"{where}: damaged key: the part has no {name!r}")
    kind = part["kind"]
    if kind not in KINDS:
        raise KeyFileError(f"{where}: kind must be one of {', '.join(KINDS)}, got {shown(kind)}")
    for name in ("points", "minutes"):
        v = part[name]
        if not _number(v) or not math.isfinite(v) or v < 0:
            raise KeyFileError(f"{where}: {name} must be a finite number ≥ 0, got {shown(v)}")
    if not isinstance(part["prompt"], str):
        raise KeyFileError(f"{where}: prompt must be text, got {shown(part['prompt'])}")
    if not isinstance(part["tolerance"], dict):
        raise KeyFileError(f"{where}: tolerance must be a table (rule, value, atol), got {shown(part['tolerance'])}")
    expected, shape = part["expected"], part.get("shape")
    depth = {"vector": 1, "matrix": 2}.get(kind)
    if shape is not None and (not isinstance(shape, list) or len(shape) != (depth or len(shape)) or not shape or
                              not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)):
        raise KeyFileError(f"{where}: shape must be a list of {depth or 'some'} positive whole "
                           f"number{'s' if depth != 1 else ''}, got {shown(shape)}")
    if kind == "number" and not _number(expected):
        raise KeyFileError(f"{where}: expected must be a number, got {shown(expected)}")
    if kind == "integer" and not (_number(expected) and (isinstance(expected, int) or expected.is_integer())):
        raise KeyFileError(f"{where}: expected must be a whole number, got {shown(expected)}")
    if depth is not None:
        if not _is_array(expected, depth):
            raise KeyFileError(f"{where}: expected must be a {kind} ("
                               f"{'a list of numbers' if depth == 1 else 'rows of numbers, all of one length'}), "
                               f"got {shown(expected)}")
        got = [len(expected)] if depth == 1 else [len(expected), len(expected[0])]
        if shape is not None and shape != got:
            raise KeyFileError(f"{where}: expected has shape {got}, but shape says {shape}")
    if kind == "shapes" and not (isinstance(expected, list) and expected and all(_is_array(s, 1) for s in expected)):
        raise KeyFileError(f"{where}: expected must be a list of shapes (lists of whole numbers), got {shown(expected)}")
    if kind in ("expression", "choice") and not (isinstance(expected, str) and expected.strip()):
        raise KeyFileError(f"{where}: expected must be non-empty text, got {shown(expected)}")
    choices = part.get("choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise KeyFileError(f"{where}: choices must be a list of texts, got {shown(choices)}")
    if kind == "choice" and expected not in choices:
        raise KeyFileError(f"{where}: expected {shown(expected)} is not one of the choices")
    misconceptions = part.get("misconceptions", [])
    if not isinstance(misconceptions, list):
        raise KeyFileError(f"{where}: misconceptions must be a list, got {shown(misconceptions)}")
    for m in misconceptions:
        _check_misconception(m, kind, where)


def _check_misconception(m: Any, kind: str, where: str) -> None:
    if not isinstance(m, dict):
        raise KeyFileError(f"{where}: a misconception must be a table (id, value, explanation), got {shown(m)}")
    if not isinstance(m.get("id"), str) or not m["id"]:
        raise KeyFileError(f"{where}: a misconception's id must be non-empty text, got {shown(m.get('id'))}")
    _check_id(m["id"], f"{where}: a misconception's id")
    mid = printable(m["id"])
    if not isinstance(m.get("explanation"), str):
        raise KeyFileError(f"{where}: misconception {mid}: explanation must be text, got {shown(m.get('explanation'))}")
    if "value" not in m:
        raise KeyFileError(f"{where}: misconception {mid}: damaged key, it has no 'value'")
    value = m["value"]
    text_kind = kind in ("expression", "choice")
    if kind != "written" and not (isinstance(value, str) if text_kind else _is_numeric(value)):
        raise KeyFileError(f"{where}: misconception {mid}: value must be {'text' if text_kind else 'numeric'}, "
                           f"got {shown(value)}")
    credit = m.get("credit", 0.0)
    if not _number(credit) or not 0 <= credit <= 1:
        raise KeyFileError(f"{where}: misconception {mid}: credit must be a number from 0 to 1, got {shown(credit)}")


def _problems(data: list, path: Path, label: str) -> list[Problem]:
    """Problems from a key's JSON; a part that cannot be made is named (q2.loss) with the reason."""
    out = []
    for n, d in enumerate(data, 1):
        try:
            out.append(Problem.from_dict(d))
        except PartValueError as err:
            raise KeyFileError(f"{path}: {label}q{n}.{err.part_id}: {err}") from None
    return out


def _check_parts(key: Key, path: Path) -> None:
    """Refuse, when it is read, a key that grading could not apply: one line naming the question and part."""
    for label, problems in [("", key.problems), *((f"variant {sid}: ", ps) for sid, ps in key.variants.items())]:
        for n, problem in enumerate(problems, 1):
            for part in problem.parts:
                error = key_part_error(part)
                if error:
                    raise KeyFileError(f"{path}: {label}q{n}.{part.id}: {error}")


def _toml_comment(text: str) -> str:
    return " ".join(text.split())


# the rule of examprep.answers.rounding, as an answer file states it
ROUNDING_NOTE = "# Too few figures cost marks once: later parts built on them and rounded no coarser are carried forward."


def answer_template(problems: list[Problem], *, title: str = "", student_id: str = "", name: str = "",
                    decimal_comma: bool = False, sheet: str = "") -> str:
    """A TOML answer file for students to fill: one [qN] table per problem, one key per part,
    each with a comment giving the prompt, the expected form and shape, and the tolerance.
    ``decimal_comma``: the header asks for decimal commas and ';' between list entries. ``sheet``:
    the id the sheet's copies print, on its own comment line (grading refuses a file of another)."""
    lines = [f"# examprep answer file{' — ' + title if title else ''}",
             *(["# This sheet uses DECIMAL COMMAS. Numbers: 0,245, -0,5, 1/3, 2e-3, 50%;",
                "# exact forms: e^2/(1+e^2), ln 2, sqrt(2)/2; separate list entries with ';':",
                "# vectors [0,1; 0,2; 0,7]; matrices [[1; 2]; [3; 4]]. Leave an answer empty to skip it."]
               if decimal_comma else
               ["# Fill in each answer between the quotes. Numbers: 0.245, -0.5, 1/3, 2e-3, 50%;",
                "# exact forms: e^2/(1+e^2), ln 2, sqrt(2)/2; vectors [0.1, 0.2, 0.7]; matrices [[1, 2], [3, 4]].",
                "# Use a decimal point, not a comma. Leave an answer empty to skip it."]),
             *([ROUNDING_NOTE] if any(part.tolerance.rule == "sigfigs" for p in problems for part in p.parts) else []),
             *([f"# sheet {sheet}"] if sheet else []), "",
             f"student_id = {json.dumps(student_id, ensure_ascii=False)}",
             f"name = {json.dumps(name, ensure_ascii=False)}", ""]
    with render_comma(decimal_comma):          # a decimal-comma sheet's forms: [a; b], 0,001
        for n, p in enumerate(problems, 1):
            lines.append(f"[q{n}]  # {_toml_comment(p.title)} ({p.generator}, {p.points:g} points)")
            for i, part in enumerate(p.parts):
                lines.append(f"# ({Problem.label(i)}) {_toml_comment(inline(part.prompt))}")
                form = answer_form(part)
                how = decimals(form if part.kind == "written" else f"{form}; {rule_text(part)}")
                lines.append(f"#     {how}; {decimals(f'{part.points:g}')} pt")
                lines.append(f'{_toml_key(part.id)} = ""')
            lines.append("")
    return "\n".join(lines)


def _toml_key(name: str) -> str:
    return name if all(c.isalnum() or c in "_-" for c in name) and name.isascii() else json.dumps(name)


def check_outputs(*, key: str | Path | None = None, template: str | Path | None = None, force: bool = False,
                  inputs: list[str] = ()) -> None:
    """Before any work: --key and --template name files that can be written (a missing directory
    is refused, never created: a typo would scatter keys) and none of ``inputs`` (the question
    files being built: --force never replaces one, links followed). Raises OutputError naming the
    option."""
    read = {real_path(p) for p in inputs}
    for option, path in (("--key", key), ("--template", template)):
        if path is not None:
            if real_path(path) in read:
                raise OutputError(f"{option} {path}: is an input being read; choose another path")
            check_output_file(path, option, force=force)


def save(problems: list[Problem], *, key: str | Path | None = None, template: str | Path | None = None,
         title: str = "", meta: dict[str, Any] | None = None, force: bool = False) -> list[Path]:
    """Write the key and/or the answer template of ``problems`` (atomically); returns the paths.

    Raises OutputError (an ExamprepError) when a file cannot be written, when both paths name the
    same file, or when one exists and ``force`` is not set (a filled-in answer file or the key a
    class is graded against must never be replaced by accident). Nothing is written then.
    """
    if key is not None and template is not None and real_path(key) == real_path(template):
        raise OutputError(f"--key and --template name the same file ({key})")
    if not force:
        for option, path in (("--key", key), ("--template", template)):
            if path is not None and Path(path).exists():
                raise OutputError(f"{option}: {path} already exists; use --force to replace it")
    written = []
    if key is not None:
        written.append(write_key(key, Key(title=title, problems=problems, meta=meta or {})))
    if template is not None:
        written.append(atomic_write_text(template, answer_template(problems, title=title) + "\n"))
    return written

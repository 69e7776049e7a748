"""The solve contract as the project's own reference page, docs/topics.md, written from the solve
tables so that it cannot drift: per topic its parameters (name, kind, default), answers, conventions
at the defaults, each answer's known mistakes and ECF rules, and the inputs it refuses with the
error each gives. `examprep solve --reference` prints it; a test holds the checked-in page to it:

    python -m examprep solve --reference > docs/topics.md
"""
from __future__ import annotations

import json
from typing import Any

from examprep.errors import ExamprepError
from examprep.solve.contract import REQUIRED, TOPICS, Mistake, Ref, Topic, jsonable, solve

HEAD = """\
# Solve topics: the reference

<!-- Generated from the solve tables (examprep/solve/*.py) by `examprep solve --reference`; do not
edit: regenerate it (docs/testing.md). -->

`examprep solve TOPIC --params JSON` answers each topic below with its worked steps; `--json`
prints `{"topic", "params", "answer": {...}, "steps": [...], "conventions": {...}}`, and
`--batch` answers one `{"id", "topic", "params"}` line each ([solve.md](solve.md)). Names of topics,
parameters (JSON keys) and answers are the ones below. A parameter without a default is required;
"optional" means it may be left out. Vectors and matrices are nested JSON lists; JSON never holds
NaN or ±Infinity (an undefined value is `null`). Where the lecture notes give a formula they decide
the default convention, elsewhere PyTorch does. A known mistake "the engine with NAME = f(params)"
runs the topic with NAME worked out from the problem's own parameters (a zero W_hh, say).

A question file's part names an answer (`answer = "h_new"`) and gets that answer's known mistakes
(the feedback a student reads when the answer is that wrong value) and its ECF rule (the answer
recomputed from the student's own earlier answers) from the same tables ([authoring.md](authoring.md)).
`examprep solve --list TOPIC` shows one topic's answers, mistakes and ECF rules on the terminal.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(p: Any) -> str:
    if p.default is REQUIRED:
        return "required"
    if p.default is None:
        return "optional"
    return f"`{json.dumps(jsonable(p.default), ensure_ascii=False)}`"


def _how(m: Mistake) -> str:
    """How a mistake is computed: the topic's engine with other conventions (f(params): a value worked
    out from the problem's parameters), or over the trace."""
    if m.compute is not None:
        return "computed over the problem's trace"
    shown = [f"{k} = {'f(params)' if callable(v) else json.dumps(jsonable(v), ensure_ascii=False)}"
             for k, v in m.conventions.items()]
    return "the engine with " + ", ".join(shown)


def _conventions(t: Topic) -> list[str]:
    defaults = {p.name: p.default for p in t.params if p.default is not REQUIRED}
    try:
        conv = t.conventions(defaults)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        needs = f" on `{err.args[0]}`" if isinstance(err, KeyError) else ""
        return [f"(They depend{needs}, which has no default: `--json` prints them for given parameters.)"]
    return [f"- {k}: {_cell(str(v))}" for k, v in conv.items()]


def _example(params: Any) -> str:
    return json.dumps(params, ensure_ascii=False).replace("'", "'\\''")


def refusal_error(t: Topic, params: Any) -> str:
    """The one error line a refusal's example gives (`examprep solve` prints it after "error: ")."""
    try:
        solve(t.name, params)
    except ExamprepError as err:
        return str(err)
    raise AssertionError(f"{t.name}: the refusal's example {params} was answered")


class _Any:
    """A stand-in for any parameter or trace value: an ECF rule's arguments are built from it to
    see which earlier answers (Refs) the rule reads."""

    def __getattr__(self, name: str) -> "_Any":
        if name.startswith("_"):                 # numpy's and Python's protocols: not a value
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> "_Any":
        if not isinstance(key, str):
            raise TypeError("a stand-in is not a sequence")
        return self


def ecf_text(e: Any, code: str = "`") -> str:
    """`op` → `output` (from `a`, `b`): the earlier answers it reads tell two rules of one op apart;
    ``code``: the mark around names ("" on a terminal)."""
    try:
        args = e.args(_Any(), _Any())
        refs = [v.answer for v in args.values() if isinstance(v, Ref)] if isinstance(args, dict) else []
    except Exception:          # noqa: BLE001 — a rule that computes with its inputs: shown without them
        refs = []
    c = code
    return (f"{c}{e.op}{c}" + (f" → {c}{e.output}{c}" if e.output else "")
            + (f" (from {', '.join(f'{c}{r}{c}' for r in refs)})" if refs else ""))


def topic_section(t: Topic) -> str:
    lines = [f"## {t.name}", "", f"{t.title}.", "",
             "| parameter | kind | default |", "|---|---|---|"]
    lines += [f"| `{p.name}` | {_cell(p.kind)} | {_default(p)} |" for p in t.params]
    forms = {a: " (a shape: 10×26×26)" for a in t.shapes} | {a: " (a list of shapes: 3×28×28; 864)" for a in t.shape_lists}
    lines += ["", "Answers: " + ", ".join(f"`{a}`{forms.get(a, '')}" for a in t.answers) + ".", "",
              "Conventions at the defaults:", ""] + _conventions(t)
    lines += ["", "Known mistakes and ECF rules:" if t.mistakes or t.ecf else "Known mistakes and ECF rules: none declared."]
    if t.mistakes or t.ecf:
        lines.append("")
        for a in t.listed_answers():
            mistakes, rules = t.mistakes.get(a, ()), t.ecf.get(a, ())
            if not mistakes and not rules:
                continue
            ecf = "; ECF: " + ", ".join(ecf_text(e) for e in rules) if rules else ""
            step = "" if a in t.answers else " (a worked step's value, not an answer of the topic)"
            lines.append(f"- `{a}`{step}{ecf}")
            lines += [f"  - `{m.id}` ({_how(m)}): {_cell(m.why)}" for m in mistakes]
    if t.refuses:
        lines += ["", "Refused, with one error line:", ""]
        for r in t.refuses:
            lines += [f"- {_cell(r.what)}:", "", "  ```console",
                      f"  $ examprep solve {t.name} --params '{_example(r.example)}'",
                      f"  error: {refusal_error(t, r.example)}", "  ```", ""]
        lines.pop()
    return "\n".join(lines)


def reference_markdown() -> str:
    """docs/topics.md: the contract of every solve topic, in the order `solve --list` shows them."""
    contents = ", ".join(f"[{name}](#{name})" for name in TOPICS)
    sections = [topic_section(t) for t in TOPICS.values()]
    with_mistakes = sum(1 for t in TOPICS.values() if t.mistakes)
    count = (f"{len(TOPICS)} topics; {with_mistakes} declare known mistakes in their tables, "
             f"{sum(1 for t in TOPICS.values() if t.ecf)} declare ECF rules.")
    return "\n\n".join([HEAD.rstrip("\n"), count, "Topics: " + contents + "."] + sections) + "\n"


__all__ = ["reference_markdown", "refusal_error", "topic_section"]

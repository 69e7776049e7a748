"""`examprep check FILE.toml`: draw a question many times and report what would make it a poor
exam question — draws the engine refuses or whose answers cannot be graded, known mistakes the
stated tolerance cannot tell from the answer, too few different draws — each with its line; then
the file's question tests ([[question.test]]), each answer graded on the variant of its seed.

Exit status: 0 usable (warnings listed), 1 when more than 10% of the draws are degenerate, a part
cannot be graded, an author's mistake is usable in no draw or a question test does not hold, 2 a
bad file (QuestionError, raised before any draw)."""
from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from examprep.answers import check_part
from examprep.authoring.build import build_question, choice_label, draft
from examprep.authoring.question import load_question
from examprep.errors import ExamprepError

DRAWS = 50
DEGENERATE_SHARE = 0.10
REFUSED = re.compile(r"the engine refused (\d+) draw\(s\) before this one: (.*)", re.S)


@dataclass
class Finding:
    where: str                 # file:line
    part: str                  # part id, or "" for the question
    message: str
    seeds: list[int] = field(default_factory=list)
    fatal: bool = False


@dataclass
class CheckResult:
    source: str
    draws: int
    distinct: int
    degenerate: list[int]           # seeds with a finding
    findings: list[Finding]
    parts: int
    tests: int = 0                  # the file's [[question.test]] tables run
    failed: int = 0                 # of them, those that do not hold (each a fatal finding)
    unused: int = 0                 # the author's mistakes no draw can use (each a fatal finding)

    @property
    def degenerate_share(self) -> float:
        return len(self.degenerate) / self.draws if self.draws else 0.0

    @property
    def exit_code(self) -> int:
        return 1 if self.degenerate_share > DEGENERATE_SHARE or any(f.fatal for f in self.findings) else 0

    def verdict(self) -> str:
        if self.failed:
            return f"not usable: {self.failed} of {self.tests} question tests do{'es' if self.failed == 1 else ''} not hold"
        if sum(f.fatal for f in self.findings) > self.unused:
            return "not usable: a part cannot be graded"
        if self.unused:
            return f"not usable: {self.unused} mistake{'s are' if self.unused > 1 else ' is'} never usable"
        if self.degenerate_share > DEGENERATE_SHARE:
            return f"not usable: more than {DEGENERATE_SHARE:.0%} of the draws are degenerate"
        return "usable" + (" (see the warnings)" if self.findings else "")


def check_question(path: str, draws: int = DRAWS, first_seed: int = 0) -> CheckResult:
    """Read the question (QuestionError for a bad file) and draw it with seeds first_seed, … ."""
    spec = load_question(path)
    part_line = {p.id: p.line for p in spec.parts}
    grouped: dict[tuple[str, str], Finding] = {}
    degenerate: set[int] = set()
    seen: set[str] = set()
    redrawn: dict[str, list] = {}          # the engine's refusal → [draws refused, seeds, where]
    used: set[tuple[str, str]] = set()     # (part id, the author's mistake id) kept in some draw
    graded: set[str] = set()               # parts graded by value in some draw (their mistakes were tried)
    for seed in range(first_seed, first_seed + draws):
        problem, notes = draft(spec, seed)
        seen.add(json.dumps(problem.params, sort_keys=True))
        used |= {(p.id, m.id) for p in problem.parts for m in p.misconceptions}
        graded |= {p.id for p in problem.parts if p.kind != "written"}
        for part_id, note in notes:
            refused = REFUSED.match(note)
            if refused:          # redrawn until the engine took one: a cost, not a degenerate draw
                reason = refused.group(2)
                named = reason.split(":", 1)[0].strip()
                entry = redrawn.setdefault(reason, [0, [], spec.at(f"param:{named}" if named in spec.params
                                                                      else "solve")])
                entry[0] += int(refused.group(1))
                entry[1].append(seed)
                continue
            where = f"{spec.source}:{part_line[part_id]}" if part_line.get(part_id) else spec.at("solve")
            # one finding per kind of note: the mistake's id, or the note itself
            m = re.search(r"the mistake '([^']+)'", note)
            kind = m.group(1) if m else note
            f = grouped.setdefault((part_id, kind), Finding(where, part_id, note, fatal=note.startswith("cannot be graded")))
            if seed not in f.seeds:
                f.seeds.append(seed)
            degenerate.add(seed)
    never = _never_used(spec, used, graded, grouped, draws)
    findings = list(grouped.values()) + never
    # a draw is degenerate for what its own findings say; a mistake never usable is the file's fault, not the draws'
    degenerate = {seed for f in grouped.values() for seed in f.seeds}
    for reason, (count, seeds, where) in redrawn.items():
        findings.append(Finding(where, "", f"the engine refused {count} draw{'s' if count != 1 else ''} before one it "
                                           f"could use (redrawn, not degenerate): {reason}", seeds))
    drawn = any(d.kind != "fixed" for d in spec.params.values())
    if drawn and len(seen) < min(draws, 10):
        findings.append(Finding(spec.at("params") if "params" in spec.lines else spec.source, "",
                                f"only {len(seen)} different draws in {draws}: students sharing a seed range "
                                "will see the same numbers; widen the draws"))
    failures = run_tests(spec)
    findings += failures
    return CheckResult(spec.source, draws, len(seen), sorted(degenerate), findings, len(spec.parts), len(spec.tests),
                       len(failures), len(never))


def _never_used(spec: Any, used: set[tuple[str, str]], graded: set[str], grouped: dict[tuple[str, str], Finding],
                draws: int) -> list[Finding]:
    """An error for each of the author's mistakes that no draw kept (it always gives the answer, or
    can never be computed, or the tolerance never tells it apart): a mistake declared in vain, named
    by its own line; the per-draw warnings about it are folded into it."""
    out = []
    for ps in spec.parts:
        for m in ps.mistakes:
            if (ps.id, m.id) in used or ps.id not in graded:     # a part never graded: its own error says so
                continue
            noted = grouped.pop((ps.id, m.id), None)
            if noted is not None:       # the note's own words, the mistake as "it"
                noted.message = noted.message.replace(f"the mistake {m.id!r}", "it").replace(" for this draw", "")
            why = (noted.message.split("; left out")[0] if noted and len(noted.seeds) == draws
                   else "it gives the answer itself (or an earlier mistake's value) in every draw" if noted is None
                   else f"it gives the answer itself or {noted.message.split('; left out')[0]}")
            where = f"{spec.source}:{m.line}" if m.line else spec.source
            out.append(Finding(where, ps.id, f"the mistake {m.id!r} is never usable in {draws} draws: {why}; "
                                             "fix or remove it", fatal=True))
    return out


def run_tests(spec: Any) -> list[Finding]:
    """The question's [[question.test]] tables, each graded as `examprep grade` grades the answer
    on the variant of its seed: a fatal Finding for each that does not hold."""
    built: dict[int, Any] = {}
    out = []
    for i, t in enumerate(spec.tests, 1):
        where = f"{spec.source}:{t.line}" if t.line else spec.source
        name = f"test {i} (seed {t.seed}, part {t.part}, answer {t.answer!r})"
        want = f"the mistake {t.mistake!r}" if t.mistake else t.verdict
        try:
            if t.seed not in built:
                built[t.seed] = build_question(spec, t.seed)
        except ExamprepError as err:
            out.append(Finding(where, "", f"{name}: expected {want}, but the variant cannot be built: {err}", fatal=True))
            continue
        part = built[t.seed].part(t.part)
        answer = t.answer
        if part.kind == "choice" and isinstance(answer, str):
            answer = choice_label(spec, t.part, t.seed, answer) or answer
        r = check_part(part, answer)
        got = ("correct" if r.full_marks and r.score > 0 else "wrong" if r.score <= 0 else "partial")
        diagnosed = r.misconception.id if r.status == "misconception" and r.misconception else ""
        holds = diagnosed == t.mistake if t.mistake else got == t.verdict
        if not holds:
            what = f"{got}" + (f", the mistake {diagnosed!r}" if diagnosed else "")
            out.append(Finding(where, "", f"{name}: expected {want}, got {what} ({r.score:g} of {r.max_score:g} "
                                          f"points: {r.feedback})", fatal=True))
    return out


def report_lines(r: CheckResult, width: int | None = None) -> list[str]:
    """The report, one finding a line, then the verdict; with ``width``, each wrapped to it (the
    continuation indented by two spaces, a path never broken)."""
    lines = _report_lines(r)
    if width is None:
        return lines

    return [textwrap.fill(line, width=max(width, 40), subsequent_indent="  ", break_long_words=False,
                          break_on_hyphens=False) for line in lines]


def _report_lines(r: CheckResult) -> list[str]:
    lines = []
    for f in r.findings:
        who = f"part {f.part}: " if f.part else ""
        count = (f"in {len(f.seeds)} of {r.draws} draws (seed{'s' if len(f.seeds) > 1 else ''} "
                 + ", ".join(map(str, f.seeds[:5])) + (", …" if len(f.seeds) > 5 else "") + "): ") if f.seeds else ""
        lines.append(f"{'error' if f.fatal else 'warning'}: {f.where}: {who}{count}{f.message}")
    tests = f", {r.tests - r.failed} of {r.tests} tests held" if r.tests else ""
    lines.append(f"{r.source}: {r.parts} part{'s' if r.parts != 1 else ''}, {r.draws} draws, {r.distinct} different, "
                 f"{len(r.degenerate)} degenerate ({r.degenerate_share:.0%}){tests}: {r.verdict()}")
    return lines


"""`examprep import`: a bank file read, its questions written as question files, what was not carried named.

The format is told from the content: Moodle XML (<quiz>), a QTI 2.1 item or package
(<assessmentItem>; a zip or folder with imsmanifest.xml), or a Canvas export (a package whose
questions are QTI 1.2 <questestinterop>). Each question file is parsed by the authoring parser
(the one `examprep check` uses) before anything is written: one it refuses is reported as not
carried, with its reason. All files are then written at once (fileio.write_outputs: atomically,
all or none); an existing file in the folder is refused unless ``force``.

Each written question is drawn for a few seeds: one whose part no draw can grade (a Moodle formula
dividing by zero for its datasets) is written, faithful to the bank, and named as not usable.

Exit status (``Result.exit_code``): 0 every question carried whole and usable; 1 some question
skipped, carried without something or not usable (each named on stderr); 2 a bank that cannot be read (nothing written).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from examprep.authoring.build import draft
from examprep.authoring.question import QuestionError, QuestionSpec, parse_question
from examprep.banks.model import Imported, question_file, slug
from examprep.banks.moodle import read_moodle
from examprep.banks.qti import read_canvas, read_item21, read_qti21, read_questestinterop
from examprep.banks.source import BankError, Package, local, parse_xml, read_source
from examprep.fileio import OutputError, check_output_folder, write_outputs


@dataclass
class Result:
    """What an import wrote and what it could not carry."""

    fmt: str
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)     # (question, why)
    partial: list[tuple[str, list[str]]] = field(default_factory=list)   # (file, what was not carried)
    unusable: list[tuple[str, list[str]]] = field(default_factory=list)  # (file, why no draw grades)
    total: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.skipped or self.partial or self.unusable else 0


def read_bank(package: Package) -> tuple[str, list[Imported]]:
    """The format's name and the questions of a bank."""
    if "imsmanifest.xml" in package.files:
        roots = {path: parse_xml(data, f"{package.name}: {path}") for path, data in package.files.items()}
        if any(local(r.tag) == "questestinterop" for r in roots.values()):
            return "Canvas QTI 1.2", read_canvas(package)
        return "QTI 2.1", read_qti21(package)
    (name, data), = package.files.items()
    root = parse_xml(data, package.name)
    tag = local(root.tag)
    if tag == "quiz":
        return "Moodle XML", read_moodle(root, package.name)
    if tag == "assessmentItem":
        return "QTI 2.1", [read_item21(root, package.name)]
    if tag == "questestinterop":
        return "Canvas QTI 1.2", read_questestinterop(root)
    raise BankError(f"{package.name}: <{tag}> is not a bank examprep reads (Moodle XML's <quiz>, QTI 2.1's "
                    "<assessmentItem> or package, a Canvas export)")


def import_bank(path: str, out: str, *, force: bool = False) -> Result:
    folder = check_output_folder(out, "--out")
    package = read_source(path)
    fmt, questions = read_bank(package)
    if not questions:
        raise BankError(f"{path}: holds no question")
    result = Result(fmt, total=len(questions))
    planned: list[tuple[Path, str]] = []
    used: set[str] = set()
    for q in questions:
        if q.skipped:
            result.skipped.append((q.name, q.skipped))
            continue
        base = slug(q.name)
        qid, n = base, 1
        while qid.casefold() in used:
            n += 1
            qid = f"{base}-{n}"
        target = folder / f"{qid}.toml"
        text = question_file(q, qid, Path(path).name)
        try:
            spec = parse_question(text, str(target))
        except QuestionError as err:            # what the authoring parser refuses is not carried, by name
            result.skipped.append((q.name, str(err).split(": ", 1)[-1]))
            continue
        used.add(qid.casefold())
        if target.exists() and not force:
            raise OutputError(f"--out {out}: {target.name} already exists; use --force to replace it "
                              "(nothing was written)")
        planned.append((target, text))
        if q.notes:
            result.partial.append((target.name, q.notes))
        faults = ungradable(spec)
        if faults:
            result.unusable.append((target.name, faults))
    write_outputs(planned, {Path(path)})
    result.written = [p for p, _ in planned]
    return result


TRIAL_DRAWS = 5


def ungradable(spec: QuestionSpec) -> list[str]:
    """What makes an imported question unusable as carried: a part no draw of the first
    TRIAL_DRAWS seeds can grade (a formula that divides by zero for its datasets, say). The file is
    still written, faithful to the bank, and named so that its author fixes it: `examprep check`
    says the same over 50 draws."""
    failing: dict[str, list[int]] = {}
    for seed in range(TRIAL_DRAWS):
        _, notes = draft(spec, seed)
        for part_id, note in notes:
            if note.startswith("cannot be graded"):
                failing.setdefault(f"part {part_id} {note}", []).append(seed)
    return [f"{what} (seeds {', '.join(map(str, seeds))} of 0-{TRIAL_DRAWS - 1}); `examprep check` calls it not usable"
            for what, seeds in failing.items()]


def report(result: Result, out: str) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) of an import."""
    err = [f"not carried: {name}: {why}" for name, why in result.skipped]
    err += [f"carried without: {name}: {'; '.join(notes)}" for name, notes in result.partial]
    err += [f"written but not usable: {name}: {'; '.join(faults)}" for name, faults in result.unusable]
    line = (f"{result.fmt}: {len(result.written)} of {result.total} questions written to {out}"
            + (f"; {len(result.skipped)} not carried, {len(result.partial)} carried without something "
               "(listed above; each file's header names it)" if result.skipped or result.partial else "")
            + (f"; {len(result.unusable)} written but not usable (listed above)" if result.unusable else "")
            + ("; run `examprep check` on them" if result.written else ""))
    return [line], err

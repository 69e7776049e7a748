"""`examprep grade` from options to reports: the grading settings, the key's self-test, a class
graded with a progress bar, every output planned and checked (never onto an input) before any is
written, and what the terminal shows (class table, feedback, warnings, what was written).

The text of each report is made in examprep.grading.report_text; this module decides which reports
a run writes and where.
"""
from __future__ import annotations

import csv
import difflib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from examprep import keys
from examprep.answers import parse_tolerance
from examprep.answers.files import SUFFIXES, collect
from examprep.answers.parse import decimal_comma
from examprep.errors import ParamError
from examprep.fileio import (OutputError, check_output_file, check_output_folder, check_target, real_path, recover,
                             safe_name, write_outputs)
from examprep.grading import analysis_files, report_text
from examprep.grading.analysis import item_data
from examprep.grading.analysis_files import check_out_dir, pdf_title
from examprep.grading.analysis_text import terminal_summary
from examprep.grading.batch import BatchResult, grade_batch
from examprep.grading.grade import Settings, SubmissionResult, address, summarise
from examprep.grading.gradebook import build, check_lms
from examprep.grading.marks import apply_marks, read_marks, template_text
from examprep.grading.report_text import escape, safe_cell
from examprep.grading.selftest import self_test
from examprep.render.terminal import console
from examprep.sheets.variants import read_roster

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
PROGRESS_FROM = 200          # submissions: a live bar on a terminal from this many


def settings_from(*, no_ecf: bool = False, ecf_credit: float = 1.0, tolerance: list[str] | None = None) -> Settings:
    """The grading settings of the command's options: --no-ecf, --ecf-credit (0 to 1) and each
    --tolerance RULE:VALUE (every numeric part) or PART=RULE:VALUE. Raises ParamError."""
    if not 0 <= ecf_credit <= 1:            # NaN too
        raise ParamError(f"--ecf-credit: expected a number from 0 to 1, got {ecf_credit:g}")
    tolerances = {}
    for spec in tolerance or []:
        target, sep, rule = spec.partition("=")
        if not sep or ":" in target:
            target, rule = "*", spec
        tolerances[target.strip()] = parse_tolerance(rule)
    return Settings(ecf=not no_ecf, ecf_credit=ecf_credit, tolerances=tolerances)


def check_tolerance_targets(settings: Settings, key: Any) -> None:
    """A --tolerance target must name something in the key: a mistyped one would silently grade
    with the default rule."""
    names: set[str] = {"*"}
    for problems in [key.problems, *key.variants.values()]:
        for n, p in enumerate(problems, 1):
            names.add(f"q{n}")
            for part in p.parts:
                names.update({part.id, address(n, part.id)})
    for target in settings.tolerances:
        if target not in names:
            close = difflib.get_close_matches(target, sorted(names), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]}?" if close else " (a part like q2.loss, a problem like q2, or a part id)"
            raise ParamError(f"--tolerance: {target!r} names no part of this key{hint}")


@dataclass
class Outputs:
    """Where a run writes its reports; "-" for --csv or --json is stdout."""

    csv: str | None = None
    json: str | None = None
    report: str | None = None          # a directory: one Markdown feedback file per student
    gradescope: str | None = None      # a directory: results.json (one submission) or <student>/results.json
    visibility: str = "visible"
    show_answers: bool = False
    marks: str | None = None           # a CSV of hand marks for written parts, merged before any output
    marks_template: str | None = None  # a CSV of every written part of every student, to fill in
    analysis: str | None = None        # a directory: item-analysis.json/.csv and analysis.pdf
    gradebook: tuple[str, str] | None = None    # (LMS, FILE): the LMS's grade-import CSV
    roster: str | None = None          # the class roster: who should have submitted, and their LMS identifiers
    force: bool = False                # replace earlier grades files, a marks template (its marks would be lost), an analysis

    @property
    def to_stdout(self) -> bool:
        return "-" in (self.csv, self.json)


def check_replaced_outputs(outputs: Outputs) -> None:
    """Before any work: a marks template is filled in by hand, so an existing one is replaced only
    with --force, and never the --marks file being merged; an earlier --analysis is replaced only
    with --force too. Raises ExamprepError."""
    if outputs.analysis is not None:
        check_out_dir(outputs.analysis, "--analysis", force=outputs.force)
    for option, folder in (("--report", outputs.report), ("--gradescope", outputs.gradescope)):
        if folder is not None:
            check_output_folder(folder, option)
    if outputs.marks_template is None:
        return
    if outputs.marks_template == "-":
        raise ParamError("--marks-template: '-' (stdout) is not offered for a marks template; give a file name")

    if outputs.marks and real_path(outputs.marks) == real_path(outputs.marks_template):
        raise ParamError(f"--marks-template {outputs.marks_template}: is the --marks file being merged; "
                         "choose another path")
    check_output_file(outputs.marks_template, "--marks-template", force=outputs.force)


def check_earlier_grades(outputs: Outputs, named_inputs: list[str]) -> None:
    """Before any work: an existing grades CSV, grades JSON or gradebook file (another class's
    grades, or an earlier grading) is replaced only with --force; fileio.check_target's refusals (a
    named input — the key, a submission, --marks, --roster —, a folder, a device or pipe) come here
    too, --force or not, naming the option; an empty name, two options naming one file and a folder
    that does not exist are refused. Raises ExamprepError."""
    inputs = {real_path(p) for p in named_inputs if p}
    files = [("--csv", outputs.csv), ("--json", outputs.json)]
    if outputs.gradebook:
        files.append(("--gradebook", outputs.gradebook[1]))
        if outputs.gradebook[1] == "-":
            raise ParamError("--gradebook: '-' (stdout) is not offered for a gradebook; give a file name")
    _one_path_each(outputs)
    for option, path in files:
        if path == "":
            raise ParamError(f"{option}: an empty file name; give a file name"
                             + (" (or - for stdout)" if option != "--gradebook" else ""))
        if not path or path == "-":
            continue
        target = Path(path)
        check_target(path, inputs, f"{option} {path}")             # the write's own checks, before any work
        if not target.parent.is_dir():            # as generate and sheet: a typo never makes folders
            raise OutputError(f"{option} {path}: the directory {target.parent} does not exist; create it first "
                              f"(mkdir -p {target.parent})")
        if target.is_file() and not outputs.force:
            raise OutputError(f"{option} {path}: already exists (earlier grades?); use --force to replace it, "
                              "or another name")


def check_earlier_feedback(planned: list[tuple[Path, str]], outputs: Outputs) -> None:
    """After planning, before writing: the feedback files (--report) and Gradescope results
    (--gradescope) this run would write that already exist — an earlier grading's — are replaced
    only with --force, as grades files, an analysis and a sheet are; other files in the folders are
    never touched. Raises OutputError."""
    if outputs.force:
        return
    for option, folder in (("--report", outputs.report), ("--gradescope", outputs.gradescope)):
        if not folder:
            continue
        found = [p for p, _ in planned if p.is_relative_to(folder) and p.exists()]
        if found:
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise OutputError(f"{option} {folder}: {found[0]} already exists{more}, of an earlier grading; "
                              "use --force to replace, or another folder")


def _one_path_each(outputs: Outputs) -> None:
    """Before any work: no two outputs — files (--csv, --json, --gradebook, --marks-template) or
    folders (--report, --gradescope, --analysis) — on one path (links followed): a file and a folder
    of one name failed half-way, after the first was written; two folders mixed their files.
    Raises ParamError naming both options."""
    named = [("--csv", outputs.csv), ("--json", outputs.json),
             ("--gradebook", outputs.gradebook[1] if outputs.gradebook else None),
             ("--marks-template", outputs.marks_template), ("--report", outputs.report),
             ("--gradescope", outputs.gradescope), ("--analysis", outputs.analysis)]
    seen: dict[Path, str] = {}
    for option, path in named:
        if not path or path == "-":
            continue
        real = real_path(path)
        if real in seen:
            raise ParamError(f"{seen[real]} and {option} {path} name one path; give each its own")
        seen[real] = f"{option} {path}"


def check_outputs_beside_submissions(submissions: list[str], outputs: Outputs) -> None:
    """Before any work: an output written straight into a folder of submissions would be read as a
    student by the next `grade` of that folder (grades.json, item-analysis.csv, results.json…), so
    such an output is refused in one line. Sub-folders are not searched, so a folder inside is fine.
    Raises ParamError."""
    folders = {real_path(s): s for s in submissions if Path(s).is_dir()}
    if not folders:
        return
    files = [("--csv", outputs.csv), ("--json", outputs.json), ("--marks-template", outputs.marks_template)]
    if outputs.gradebook:
        files.append(("--gradebook", outputs.gradebook[1]))
    dirs = [("--analysis", outputs.analysis), ("--gradescope", outputs.gradescope)]
    for option, path in files:
        if path and path != "-" and Path(path).suffix.lower() in SUFFIXES and real_path(path).parent in folders:
            raise ParamError(f"{option} {path}: is inside the submissions folder "
                             f"{folders[real_path(path).parent]}, where the next grading would read it as a "
                             "student; write it elsewhere")
    for option, path in dirs:
        if path and real_path(path) in folders:
            raise ParamError(f"{option} {path}: is the submissions folder itself, where the next grading would "
                             "read its files as students; choose another folder")


def plan_files(batch: BatchResult, outputs: Outputs) -> list[tuple[Path, str]]:
    """Every file a run writes, with its text, named after the students (examprep.fileio.safe_name)."""
    results = batch.results
    names = report_text.unique_names(results)
    planned: list[tuple[Path, str]] = []
    if outputs.marks_template:
        planned.append((Path(outputs.marks_template), template_text(results)))
    if outputs.csv and outputs.csv != "-":
        planned.append((Path(outputs.csv), report_text.csv_text(results, batch.conflicts)))
    if outputs.json and outputs.json != "-":
        planned.append((Path(outputs.json), report_text.json_text(batch) + "\n"))
    if outputs.report:
        for res, name in zip(results, names):
            planned.append((Path(outputs.report) / f"{name}.md",
                            report_text.markdown_report(res, show_answers=outputs.show_answers) + "\n"))
        taken = {n.lower() for n in names}
        for c in batch.conflicts:           # no grade: the report says why, and how to settle it
            name = safe_name(c.student_id)
            name = name if name.lower() not in taken else f"{name}-conflict"
            planned.append((Path(outputs.report) / f"{name}.md", report_text.conflict_markdown(c) + "\n"))
    if outputs.gradescope:
        for res, name in zip(results, names):
            folder = Path(outputs.gradescope) if len(results) == 1 else Path(outputs.gradescope) / name
            data = report_text.gradescope_json(res, visibility=outputs.visibility, show_answers=outputs.show_answers)
            planned.append((folder / "results.json", report_text.dump_json(data, indent=1) + "\n"))
    return planned


class _ProgressBar:
    """A live bar on stderr for a long class on a terminal (PROGRESS_FROM submissions or more)."""

    def __init__(self, err: Any):
        self.err, self.bar, self.task = err, None, None

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_FROM or not self.err.is_terminal:
            return
        if self.bar is None:
            self.bar = Progress(console=self.err, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("grading", total=total)
        self.bar.update(self.task, completed=done)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_self_test(key: Any, out: Any) -> int:
    """`grade --self-test`: every check's failure on one line, then the verdict. Returns the exit code."""
    checks, issues = self_test(key)
    for line in issues:
        out.print(f"[red]FAIL[/] {escape(line)}")
    n_parts = sum(len(p.parts) for ps in [key.problems, *key.variants.values()] for p in ps)
    verdict = "[red]failed[/]" if issues else "[green]passed[/]"
    out.print(f"self-test {verdict}: {checks} checks on {n_parts} parts, {len(issues)} failure"
              f"{'s' if len(issues) != 1 else ''}")
    return 1 if issues else 0


def run_grade(key_path: str, submissions: list[str], *, self_test: bool = False, outputs: Outputs | None = None,
              settings: Settings | None = None, details: bool | None = None, wide: bool = False,
              quiet: bool = False, no_color: bool = False, newest: bool = False,
              id_from_filename: str | None = None, limits: Any = None) -> int:
    """The `examprep grade` command: grade ``submissions`` (files or directories) against the key
    at ``key_path``, write the reports ``outputs`` asks for, and show the results. Returns the exit
    code: 0 every submission graded (or the self-test passed), 1 some could not be read (each is
    listed with its reason), a student's submissions conflict or an id is not on the roster, or the
    self-test failed. ``newest``, ``id_from_filename`` and ``outputs.roster``: how submissions are
    sorted out by student (examprep.grading.identity). Raises ExamprepError for a usage error.
    ``limits``: what one file may hold (examprep.answers.files.Limits; its defaults when None)."""
    outputs = outputs or Outputs()
    settings = settings or Settings()
    out = console(no_color)
    err = Console(stderr=True, no_color=no_color, highlight=False, soft_wrap=True, emoji=False)
    if outputs.visibility not in VISIBILITIES:
        raise ParamError(f"--gradescope-visibility: expected one of {', '.join(VISIBILITIES)}, "
                         f"got {outputs.visibility!r}")

    for note in recover([outputs.csv, outputs.json, outputs.report, outputs.gradescope, outputs.analysis,
                         outputs.marks_template, outputs.gradebook[1] if outputs.gradebook else None]):
        err.print(f"note: {escape(note)}")                 # a killed run's outputs, completed first
    check_replaced_outputs(outputs)
    the_key = keys.read_key(key_path)
    check_tolerance_targets(settings, the_key)
    if self_test:
        if submissions:
            raise ParamError("--self-test checks the key alone: give no SUBMISSION")
        given = [option for option, value in (("--csv", outputs.csv), ("--json", outputs.json),
                                              ("--report", outputs.report), ("--gradescope", outputs.gradescope),
                                              ("--marks", outputs.marks), ("--marks-template", outputs.marks_template),
                                              ("--analysis", outputs.analysis), ("--gradebook", outputs.gradebook),
                                              ("--roster", outputs.roster)) if value]
        if given:
            raise ParamError(f"--self-test checks the key alone and writes nothing: {', '.join(given)} "
                             f"{'has' if len(given) == 1 else 'have'} no class to report on")
        return run_self_test(the_key, out)
    if not submissions:
        raise ParamError("missing SUBMISSION: give answer files or a directory (or --self-test to check the key)")
    check_outputs_beside_submissions(submissions, outputs)
    check_earlier_grades(outputs, [key_path, *submissions, outputs.marks, outputs.roster])
    if len(submissions) == 1 and not Path(submissions[0]).exists() and not Path(submissions[0]).is_symlink():
        # the one path given is a typo: a usage error, as a missing KEY is (in a batch it is one unreadable line)
        raise ParamError(f"{submissions[0]}: no such answer file or folder")
    marks = None
    if outputs.marks:                         # read (and refused) before any grading
        marks = read_marks(outputs.marks)
    if outputs.csv == "-" and outputs.json == "-":
        raise ParamError("--csv - and --json - cannot both write to stdout")
    roster = None
    if outputs.gradebook:
        check_lms(outputs.gradebook[0])
    if outputs.roster:
        roster = read_roster(outputs.roster)

    progress = _ProgressBar(err)
    try:
        batch = grade_batch(the_key, submissions, settings, key_path=key_path, progress=progress, roster=roster,
                            roster_path=outputs.roster or "", id_from_filename=id_from_filename, newest=newest,
                            limits=limits)
    finally:
        progress.stop()
    results = batch.results
    if len(submissions) == 1 and Path(submissions[0]).is_file() and not results and batch.other_sheet:
        # one answer file, made for another sheet: the wrong KEY or file was given, a usage error
        raise ParamError(batch.other_sheet[0])
    if marks is not None:
        n_marked = apply_marks(results, marks[0], outputs.marks)
        still = sum(1 for res in results for _, _, r in res.parts() if r.status == "pending")
        err.print(f"merged {n_marked} hand mark{'s' if n_marked != 1 else ''} from {escape(outputs.marks)}"
                  + (f"; {still} written part{'s' if still != 1 else ''} still to be marked" if still else ""))
    planned = plan_files(batch, outputs)
    check_earlier_feedback(planned, outputs)
    book = None
    if outputs.gradebook:
        book = build(outputs.gradebook[0], results, title=the_key.title or Path(key_path).stem, roster=roster,
                     conflicted=[c.student_id for c in batch.conflicts], unreadable=batch.unreadable_of)
        planned.append((Path(outputs.gradebook[1]), book.text))
    conflicts_list = plan_conflicts(batch, outputs)
    if conflicts_list is not None:
        planned.append(conflicts_list)

    inputs = {real_path(p) for p in collect(submissions)[0] if p.exists()} | {real_path(key_path)}
    if outputs.roster:
        inputs.add(real_path(outputs.roster))
    if outputs.marks:
        inputs.add(real_path(outputs.marks))
    analysis = None
    if outputs.analysis:
        heading = pdf_title(the_key.title, Path(key_path).name)       # analysis.pdf's and the terminal's
        analysis = _plan_analysis(results, outputs.analysis, heading)

    folders = [Path(f) for f in (outputs.report, outputs.gradescope, outputs.analysis) if f]
    write_outputs(planned + (analysis[2] if analysis is not None else []), inputs, folders)    # all checked, then written
    if analysis is not None:
        planned += [(path, "") for path, _ in analysis[2]]

    if outputs.csv == "-":
        print(report_text.csv_text(results, batch.conflicts), end="")
    if outputs.json == "-":
        print(report_text.json_text(batch))
    show_details = details if details is not None else len(results) == 1
    if not quiet and not outputs.to_stdout:
        with decimal_comma(bool(the_key.meta.get("decimal_comma"))):      # values shown as the students write them
            _show_results(out, results, show_details=show_details, show_answers=outputs.show_answers, wide=wide,
                          conflicts=batch.conflicts)
    if analysis is not None and not quiet and not outputs.to_stdout:
        out.print(terminal_summary(analysis[0], analysis[1].left_out, title=heading))
    for warning in batch.warnings:          # about the key: once, not per student
        err.print(f"[yellow]warning[/]: {escape(key_path)}: {escape(warning)}")
    for note in batch.notes:
        err.print(f"note: {escape(note)}")
    stale = conflicts_file(outputs)
    if stale is not None and not batch.conflicts and not batch.unknown and stale.exists():
        err.print(f"note: {escape(str(stale))} is an earlier grading's: no conflicts now (remove it)")
    if not show_details or quiet or outputs.to_stdout:      # the feedback view shows them otherwise
        for res in results:
            for w in res.warnings:
                err.print(f"[yellow]warning[/]: {escape(res.source)}: {escape(w)}")
    said = set()            # unreadable lines the gradebook's listing already printed, with the student's id
    if book is not None:
        for w in book.warnings:
            err.print(f"[yellow]warning[/]: --gradebook: {escape(w)}")
        if book.missing:
            err.print(f"[yellow]no submission[/] from {len(book.missing)} student{'s' if len(book.missing) != 1 else ''} "
                      f"on the roster (an empty cell in the gradebook, not 0): {escape(', '.join(book.missing))}")
        for sid, why in book.unreadable:
            err.print(f"[red]unreadable[/] submission from {escape(sid)}, on the roster (an empty cell in the gradebook, "
                      f"not 0): {escape(why)}")
            said.add(why)
    for line in batch.unreadable:
        if line not in said:
            err.print(f"[red]unreadable[/]: {escape(line)}")
    for conflict in batch.conflicts:
        err.print(f"[red]conflict[/]: {escape(conflict.line())}")
    for unknown in batch.unknown[:MAX_UNKNOWN_SHOWN]:
        err.print(f"[red]unknown id[/]: {escape(unknown.line)}")
    if len(batch.unknown) > MAX_UNKNOWN_SHOWN:
        where = f"all listed in {conflicts_list[0]}" if conflicts_list is not None else \
            "all listed in the JSON's unknown_ids" if outputs.json == "-" else "give --json FILE to list them all"
        err.print(f"[red]unknown id[/]: … and {len(batch.unknown) - MAX_UNKNOWN_SHOWN:,} more ids not on the roster "
                  f"({escape(where)})")
    _say_written(err, planned, outputs, len(results), len(batch.conflicts))
    graded = f"graded {len(results)} submission{'s' if len(results) != 1 else ''}"
    problems = [f"{n} {what}" for n, what in ((len(batch.unreadable), "could not be read"),
                                              (len(batch.conflicts), f"student{'s' if len(batch.conflicts) != 1 else ''} "
                                                                     "in conflict"),
                                              (len(batch.unknown), "not on the roster")) if n]
    if problems:
        err.print(f"{graded}; [red]{', '.join(problems)}[/] (listed above)")
    elif not quiet:
        err.print(graded)
    return batch.exit_code


MAX_UNKNOWN_SHOWN = 10                  # unknown id lines in the terminal; all of them in the conflicts list
CONFLICTS_FILE = "conflicts.csv"        # in a --report or --gradescope folder; beside a file, STEM-conflicts.csv


def plan_conflicts(batch: BatchResult, outputs: Outputs) -> tuple[Path, str] | None:
    """The conflicts list (student_id, status, reason, sources) when some students are in conflict
    or some ids are not on the roster (conflicts_file: where); None when there is nothing to list or
    no output to put it beside."""
    path = conflicts_file(outputs)
    if path is None or not batch.conflicts and not batch.unknown:
        return None
    if path.exists() and not outputs.force:
        raise OutputError(f"{path}: already exists, of an earlier grading; use --force to replace it")

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student_id", "status", "reason", "sources"])
    for c in batch.conflicts:
        w.writerow([safe_cell(c.student_id), "conflict", safe_cell(c.reason), safe_cell(" | ".join(c.sources))])
    for u in batch.unknown:
        w.writerow([safe_cell(u.student_id), "unknown id", safe_cell(u.line), safe_cell(" | ".join(u.sources))])
    return path, buf.getvalue()


def conflicts_file(outputs: Outputs) -> Path | None:
    """Where the conflicts list goes: beside the first of --json, --csv, --gradebook written to a
    file, named after it (grades.json: grades-conflicts.csv), else conflicts.csv in the --report or
    --gradescope folder; None without such an output."""
    for f in (outputs.json, outputs.csv, outputs.gradebook[1] if outputs.gradebook else None):
        if f and f != "-":
            return Path(f).with_name(f"{Path(f).stem}-{CONFLICTS_FILE}")
    return next((Path(d) / CONFLICTS_FILE for d in (outputs.report, outputs.gradescope) if d), None)


def _plan_analysis(results: list[SubmissionResult], out_dir: str, heading: str) -> tuple[Any, Any, Any]:
    """(analysis, its ItemData, its planned files, analysis.pdf headed ``heading``) of a graded class,
    from the same records as grades.json."""
    explanations: dict[str, str] = {}
    for _, m, _, e in summarise(results)[1]:       # as analyze reads grades.json's summary: the first wins
        explanations.setdefault(m, e)
    data = item_data([r.to_dict() for r in results], explanations)
    result, files = analysis_files.plan(data, out_dir, title=heading)
    return result, data, files


def _show_results(out: Any, results: list[SubmissionResult], *, show_details: bool, show_answers: bool,
                  wide: bool, conflicts: Any = ()) -> None:
    if show_details:
        for res in results:
            out.print(report_text.feedback_view(res, show_answers=show_answers))
    if len(results) > 1 or not show_details or conflicts:
        table = report_text.class_table(results, width=out.width, wide=wide, conflicts=conflicts)
        if wide:            # every column whole: as wide as it needs, the terminal wraps or `less -S` scrolls
            terminal_width = out.width
            out.width = max(terminal_width, report_text.table_width(table))
            out.print(table, crop=False)
            out.width = terminal_width
        else:
            out.print(table)
        out.print(report_text.summary_view(results, width=out.width))


def _say_written(err: Any, planned: list[tuple[Path, str]], outputs: Outputs, n: int, n_conflicts: int = 0) -> None:
    for path, _ in planned:
        if not (outputs.report and path.suffix == ".md" or outputs.gradescope and path.name == "results.json"):
            err.print(f"wrote {escape(str(path))}")
    if outputs.report:
        err.print(f"wrote {n} feedback file{'s' if n != 1 else ''} in {escape(outputs.report)}"
                  + (f" (and {n_conflicts} saying a submission is in conflict)" if n_conflicts else ""))
    if outputs.gradescope:
        err.print(f"wrote {n} Gradescope results.json in {escape(outputs.gradescope)}")

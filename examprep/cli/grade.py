"""`examprep grade`: answer files against a key (the work is examprep.grading.reports.run_grade)."""

from typing import Optional

import typer

from examprep.cli.usage import paragraphs
from examprep.errors import ParamError

app = typer.Typer()

GRADE_HELP = paragraphs("""Grade answer files against a key: scores, feedback, misconceptions, carried-forward errors.

    Limits per file (a file over one is named with the option that raises it, and skipped): a class
    file (CSV or JSON list) 16 MB and 100,000 rows; one student's answers (a file, a row, an item)
    1 MB, 10,000 keys, nested 64 levels.

    Exit status: 0 every submission graded (or the self-test passed); 1 some could not be read
    (each is listed with its reason), some students' submissions conflict (different answers for
    one id, or a file claiming another's id: listed in conflicts.csv, not graded), an id is not on
    the --roster, or the self-test failed; 2 a usage error.""")


@app.command(help=GRADE_HELP)
def grade(
    key: str = typer.Argument(..., metavar="KEY", help="The answer key written by `examprep generate --key` (or a sheet)."),
    submissions: Optional[list[str]] = typer.Argument(
        None, metavar="SUBMISSION...", help="Answer files (.toml, .json, a class .csv) or directories of them."),
    self_test: bool = typer.Option(False, "--self-test",
                                   help="Check the key: its answers earn full marks, its misconceptions are named."),
    csv_out: Optional[str] = typer.Option(None, "--csv", metavar="FILE",
                                          help="Write one row per student to this CSV ('-': stdout)."),
    json_out: Optional[str] = typer.Option(None, "--json", metavar="FILE",
                                           help="Write every result as JSON to this file ('-': stdout)."),
    report: Optional[str] = typer.Option(None, "--report", metavar="DIR",
                                         help="Write a Markdown feedback file per student here."),
    gradescope: Optional[str] = typer.Option(
        None, "--gradescope", metavar="DIR",
        help="Write Gradescope results.json here (one submission: DIR/results.json; several: "
             "DIR/<student>/results.json)."),
    visibility: str = typer.Option("visible", "--gradescope-visibility", metavar="WHEN",
                                   help="Visibility of Gradescope tests: visible, hidden, after_due_date, after_published."),
    details: bool = typer.Option(False, "--details", help="Per-student feedback (default: on for a single submission)."),
    no_details: bool = typer.Option(False, "--no-details", help="No per-student feedback, only the class table."),
    show_answers: bool = typer.Option(False, "--show-answers", help="Show the key's answers in feedback and reports."),
    no_ecf: bool = typer.Option(False, "--no-ecf", help="No credit for errors carried forward from earlier parts."),
    ecf_credit: float = typer.Option(1.0, "--ecf-credit", metavar="SHARE",
                                     help="Share of a part's points for a carried-forward error (0-1)."),
    tolerance: Optional[list[str]] = typer.Option(
        None, "--tolerance", metavar="RULE",
        help="Override a tolerance: RULE:VALUE for every numeric part, or PART=RULE:VALUE (PART: q2.loss, q2 or "
             "loss); rules sigfigs, sigfigs-strict (exactly N figures written), decimals, rtol, atol, exact. "
             "Repeatable."),
    max_class_size: float = typer.Option(16.0, "--max-class-size", metavar="MB",
                                         help="Largest class file (CSV or JSON list) read, in MB."),
    max_class_rows: int = typer.Option(100_000, "--max-class-rows", metavar="N",
                                       help="Most rows (or JSON list items) in one class file."),
    max_file_size: float = typer.Option(1.0, "--max-file-size", metavar="MB",
                                        help="Largest answers of one student (a file, a CSV row, a list item), in MB."),
    max_keys: int = typer.Option(10_000, "--max-keys", metavar="N",
                                 help="Most keys in one student's answers (every table's, or a CSV's answer columns)."),
    max_nesting: int = typer.Option(64, "--max-nesting", metavar="N",
                                    help="Most tables and lists nested inside one another in one student's answers "
                                         "(at most 200, the deepest the parsers read)."),
    marks: Optional[str] = typer.Option(
        None, "--marks", metavar="FILE",
        help="Merge hand marks for written parts: a CSV of student_id, part (q3.w1), points, comment. A bad row "
             "(unknown student or part, too many points) is an error naming it."),
    marks_template: Optional[str] = typer.Option(
        None, "--marks-template", metavar="FILE",
            help="Write a CSV of every written answer of every student (a blank one scores 0), to fill in for --marks."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --csv, --json or --gradebook file, "
                                                      "a --marks-template (its marks are lost) or an earlier --analysis."),
    analysis: Optional[str] = typer.Option(
        None, "--analysis", metavar="DIR",
        help="Write an item analysis in this directory: item-analysis.json/.csv, analysis.pdf "
             "(difficulty, discrimination, misconceptions, Cronbach's alpha, variant groups)."),
    gradebook: Optional[tuple[str, str]] = typer.Option(
        None, "--gradebook", metavar="LMS FILE",
        help="Write the grade-import CSV of an LMS: canvas, moodle, blackboard or brightspace "
             "(see docs/grading.md, \"Gradebook files\")."),
    roster: Optional[str] = typer.Option(
        None, "--roster", metavar="FILE",
        help="The class roster (id, name, email, username, sis_id, lms_id): the only valid student ids (one not on "
             "it is named, not graded); with --gradebook every student gets a row, one with no submission an "
             "empty cell, listed."),
    newest: bool = typer.Option(False, "--newest", help="A student with several different submissions: grade the "
                                                        "newest file by modification time (said), not none."),
    id_from_filename: Optional[str] = typer.Option(
        None, "--id-from-filename", metavar="REGEX",
        help="Each file's owner from its name: a regex with a group (?P<id>...) (its student id, or a roster "
             "lms_id); a student_id inside the file that differs is a conflict. Moodle's and Canvas's download "
             "names are recognised without it (checked with --roster)."),
    wide: bool = typer.Option(False, "--wide", help="The class table with every question's column, however wide."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No tables: only files, warnings and errors."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """`examprep grade` (its help is GRADE_HELP, one paragraph a line)."""
    from examprep.answers.files import Limits
    from examprep.grading import Outputs, run_grade, settings_from

    if details and no_details:
        raise ParamError("--details and --no-details: give one")

    code = run_grade(key, submissions or [], self_test=self_test,
                     outputs=Outputs(csv=csv_out, json=json_out, report=report, gradescope=gradescope,
                                     visibility=visibility, show_answers=show_answers, marks=marks,
                                     marks_template=marks_template, force=force, analysis=analysis,
                                     gradebook=gradebook if gradebook and gradebook[0] else None, roster=roster),
                     settings=settings_from(no_ecf=no_ecf, ecf_credit=ecf_credit, tolerance=tolerance),
                     details=True if details else False if no_details else None, wide=wide, quiet=quiet, no_color=no_color,
                     newest=newest, id_from_filename=id_from_filename,
                     limits=Limits.from_options(max_class_size, max_class_rows, max_file_size, max_keys, max_nesting))
    raise typer.Exit(code)


ANALYZE_HELP = ("Item analysis of a graded class, from grades.json (no key or submissions needed).\n\n"
                "Per part and question: difficulty (mean fraction of the points earned), discrimination (item-rest "
                "correlation), blanks, unreadable answers, the three most frequent misconceptions and their share "
                "among the top and bottom 27% of students; for the test: mean, sd, Cronbach's alpha and its "
                "standard error of measurement; per question, students grouped by the variant they drew. Written "
                "parts still to be marked are left out.")


@app.command(help=ANALYZE_HELP)
def analyze(
    grades: str = typer.Argument(..., help="The grades file written by `examprep grade --json`."),
    out: Optional[str] = typer.Option(None, "--out", metavar="DIR",
                                      help="Write item-analysis.json/.csv and analysis.pdf here."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier analysis in --out."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary: only the files written."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
) -> None:
    """`examprep analyze` (its help is ANALYZE_HELP, one paragraph a line)."""
    from examprep.grading.analysis_files import run_analyze

    raise typer.Exit(run_analyze(grades, out, quiet=quiet, no_color=no_color, force=force))


AUTOGRADER_HELP = ("Write the autograder zip of a key for a Gradescope programming assignment.\n\n"
                   "setup.sh installs Python 3.11 when the image's is older, the dependencies pinned to the versions "
                   "running here and the bundled examprep wheel; run_autograder grades the submitted answer file and "
                   "writes results.json, one test per part.\n\n"
                   "With a key of per-student variants each submission is graded against the variant of the student "
                   "Gradescope says submitted it (its SID, else its e-mail, matched against --roster), never the one "
                   "the file names.")


@app.command("gradescope-autograder", help=AUTOGRADER_HELP)
def gradescope_autograder(
    key: str = typer.Argument(..., help="The answer key written by `examprep sheet` or `generate --key`."),
    out: str = typer.Option("autograder.zip", "--out", help="The zip to write."),
    visibility: str = typer.Option("visible", "--visibility",
                                   help="Visibility of the tests: visible, hidden, after_due_date, after_published."),
    show_answers: bool = typer.Option(False, "--show-answers", help="Show the key's answers in the feedback."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out zip."),
    roster: str = typer.Option(None, "--roster", help="The class roster CSV the sheet was made with: its id, email and "
                               "sis_id columns identify Gradescope's submitters (without it only the SID is matched, "
                               "against the key's ids)."),
) -> None:
    """`examprep gradescope-autograder` (its help is AUTOGRADER_HELP, one paragraph a line)."""
    from rich.console import Console

    from examprep.grading.autograder import WHEEL_STEP, autograder_notes, build_zip
    from examprep.render.terminal import StepProgress

    with StepProgress(plain={WHEEL_STEP: WHEEL_STEP + " (a few seconds)…"}) as progress:
        info = build_zip(key, out, visibility=visibility, show_answers=show_answers, force=force, roster=roster,
                         progress=progress)
    console = Console(stderr=True, highlight=False, markup=False, emoji=False)   # paths and ids as written
    console.print(
        f"wrote {out}: setup.sh, run_autograder, key.json ({info['parts']} parts, {info['points']:g} points), "
        f"{info['wheel']}, requirements.txt ({len(info['requirements'])} pinned), README.md"
        + (f", roster.json ({info['roster']} students)" if info["roster"] else ""))
    for line in autograder_notes(info):
        console.print(line)

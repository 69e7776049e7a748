"""CLI commands of the grade feature; heavy imports happen inside the commands."""
from __future__ import annotations

from typing import Optional

import typer

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def register(app: typer.Typer) -> None:
    """Add this feature's commands to the main app."""

    @app.command()
    def grade(
        key: str = typer.Argument(..., help="The answer key written by `examprep generate --key` (or a sheet)."),
        submissions: Optional[list[str]] = typer.Argument(
            None, help="Answer files (.toml, .json, a class .csv) or directories of them."),
        self_test: bool = typer.Option(False, "--self-test",
                                       help="Check the key: its answers earn full marks, its misconceptions are named."),
        csv_out: Optional[str] = typer.Option(None, "--csv", help="Write one row per student to this CSV ('-': stdout)."),
        json_out: Optional[str] = typer.Option(None, "--json", help="Write every result as JSON to this file ('-': stdout)."),
        report: Optional[str] = typer.Option(None, "--report", help="Write a Markdown feedback file per student here."),
        gradescope: Optional[str] = typer.Option(
            None, "--gradescope", help="Write Gradescope results.json here (one submission: DIR/results.json; "
                                       "several: DIR/<student>/results.json)."),
        visibility: str = typer.Option("visible", "--gradescope-visibility",
                                       help="Visibility of Gradescope tests: " + ", ".join(VISIBILITIES) + "."),
        details: Optional[bool] = typer.Option(None, "--details/--no-details",
                                               help="Per-student feedback (default: on for a single submission)."),
        show_answers: bool = typer.Option(False, "--show-answers", help="Show the key's answers in feedback and reports."),
        no_ecf: bool = typer.Option(False, "--no-ecf", help="No credit for errors carried forward from earlier parts."),
        ecf_credit: str = typer.Option("1", "--ecf-credit", help="Share of a part's points for a carried-forward error (0-1)."),
        tolerance: Optional[list[str]] = typer.Option(
            None, "--tolerance", help="Override a tolerance: RULE:VALUE for every numeric part, or PART=RULE:VALUE "
                                      "(PART: q2.loss, q2 or loss); rules sigfigs, sigfigs-strict (exactly N "
                                      "figures written), decimals, rtol, atol, exact. Repeatable."),
        wide: bool = typer.Option(False, "--wide", help="The class table with every question's column, however wide."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No tables: only files, warnings and errors."),
        no_color: bool = typer.Option(False, "--no-color", help="Plain output without colour."),
    ) -> None:
        """Grade answer files against a key: scores, feedback, misconceptions, carried-forward errors.

        Exit status: 0 every submission graded (or the self-test passed); 1 some could not be read
        (each is listed with its reason) or the self-test failed; 2 a usage error.
        """
        from examprep.cli import fail
        from examprep.errors import ExamprepError

        try:
            code = _grade(key, submissions or [], self_test=self_test, csv_out=csv_out, json_out=json_out,
                          report=report, gradescope=gradescope, visibility=visibility, details=details,
                          show_answers=show_answers, no_ecf=no_ecf, ecf_credit=ecf_credit, tolerance=tolerance or [],
                          wide=wide, quiet=quiet, no_color=no_color)
        except ExamprepError as err:
            raise fail(err) from None
        raise typer.Exit(code)


def _settings(no_ecf: bool, ecf_credit: str, tolerance: list[str]):
    from examprep.answers import parse_tolerance
    from examprep.errors import ParamError
    from examprep.grading import Settings

    try:
        credit = float(ecf_credit)
    except ValueError:
        raise ParamError(f"--ecf-credit: expected a number from 0 to 1, got {ecf_credit!r}") from None
    if not 0 <= credit <= 1:
        raise ParamError(f"--ecf-credit: expected a number from 0 to 1, got {ecf_credit}")
    tolerances = {}
    for spec in tolerance:
        target, sep, rule = spec.partition("=")
        if not sep or ":" in target:
            target, rule = "*", spec
        tolerances[target.strip()] = parse_tolerance(rule)
    return Settings(ecf=not no_ecf, ecf_credit=credit, tolerances=tolerances)


def _check_tolerance_targets(settings, the_key) -> None:
    """A --tolerance target must name something in the key: a mistyped one would silently grade
    with the default rule."""
    import difflib

    from examprep.errors import ParamError
    from examprep.grading import address

    names: set[str] = {"*"}
    for problems in [the_key.problems, *the_key.variants.values()]:
        for n, p in enumerate(problems, 1):
            names.add(f"q{n}")
            for part in p.parts:
                names.update({part.id, address(n, part.id)})
    for target in settings.tolerances:
        if target not in names:
            close = difflib.get_close_matches(target, sorted(names), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]}?" if close else " (a part like q2.loss, a problem like q2, or a part id)"
            raise ParamError(f"--tolerance: {target!r} names no part of this key{hint}")


def _grade(key: str, submissions: list[str], *, self_test: bool, csv_out: str | None, json_out: str | None,
           report: str | None, gradescope: str | None, visibility: str, details: bool | None, show_answers: bool,
           no_ecf: bool, ecf_credit: str, tolerance: list[str], wide: bool, quiet: bool, no_color: bool) -> int:
    from pathlib import Path

    from rich.console import Console

    from examprep import grading, keys
    from examprep.errors import ParamError
    from examprep.fileio import atomic_write_text
    from examprep.render import report as rep
    from examprep.render.terminal import console as make_console

    out = make_console(no_color)
    err = Console(stderr=True, no_color=no_color, highlight=False, soft_wrap=True)
    if visibility not in VISIBILITIES:
        raise ParamError(f"--gradescope-visibility: expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    settings = _settings(no_ecf, ecf_credit, tolerance)
    the_key = keys.read_key(key)
    _check_tolerance_targets(settings, the_key)
    if self_test:
        if submissions:
            raise ParamError("--self-test checks the key alone: give no SUBMISSION")
        checks, issues = grading.self_test(the_key)
        for line in issues:
            out.print(f"[red]FAIL[/] {rep._escape(line)}")
        n_parts = sum(len(p.parts) for ps in [the_key.problems, *the_key.variants.values()] for p in ps)
        verdict = "[red]failed[/]" if issues else "[green]passed[/]"
        out.print(f"self-test {verdict}: {checks} checks on {n_parts} parts, {len(issues)} failure"
                  f"{'s' if len(issues) != 1 else ''}")
        return 1 if issues else 0
    if not submissions:
        raise ParamError("missing SUBMISSION: give answer files or a directory (or --self-test to check the key)")
    to_stdout = "-" in (csv_out, json_out)
    if csv_out == "-" and json_out == "-":
        raise ParamError("--csv - and --json - cannot both write to stdout")

    progress_state: dict = {}

    def progress(done: int, total: int) -> None:
        if total < 200 or not err.is_terminal:
            return
        if "bar" not in progress_state:
            from rich.progress import Progress

            bar = Progress(console=err, transient=True)
            bar.start()
            progress_state["bar"] = bar
            progress_state["task"] = bar.add_task("grading", total=total)
        progress_state["bar"].update(progress_state["task"], completed=done)

    try:
        batch = grading.grade_batch(the_key, submissions, settings, key_path=key, progress=progress)
    finally:
        if "bar" in progress_state:
            progress_state["bar"].stop()
    results = batch.results

    # outputs: never onto an input file
    from examprep.answers.files import collect

    inputs = {p.resolve() for p in collect(submissions)[0] if p.exists()} | {Path(key).resolve()}
    names = rep.unique_names(results)
    planned: list[tuple[Path, str]] = []
    if csv_out and csv_out != "-":
        planned.append((Path(csv_out), rep.csv_text(results)))
    if json_out and json_out != "-":
        planned.append((Path(json_out), rep.json_text(batch) + "\n"))
    if report:
        for res, name in zip(results, names):
            planned.append((Path(report) / f"{name}.md", rep.markdown_report(res, show_answers=show_answers) + "\n"))
    if gradescope:
        for res, name in zip(results, names):
            path = Path(gradescope) / "results.json" if len(results) == 1 else Path(gradescope) / name / "results.json"
            planned.append((path, rep.dump_json(rep.gradescope_json(res, visibility=visibility, show_answers=show_answers),
                                                indent=1) + "\n"))
    for path, _ in planned:
        if path.resolve() in inputs:
            raise ParamError(f"{path}: an output would overwrite an input file; choose another path")
    for path, text in planned:
        atomic_write_text(path, text)

    if csv_out == "-":
        print(rep.csv_text(results), end="")
    if json_out == "-":
        print(rep.json_text(batch))
    show_details = details if details is not None else len(results) == 1
    if not quiet and not to_stdout:
        if show_details:
            for res in results:
                out.print(rep.feedback_view(res, show_answers=show_answers))
        if len(results) > 1 or not show_details:
            table = rep.class_table(results, width=out.width, wide=wide)
            if wide:            # every column whole: as wide as it needs, the terminal wraps or `less -S` scrolls
                terminal_width = out.width
                out.width = max(terminal_width, rep.table_width(table))
                out.print(table, crop=False)
                out.width = terminal_width
            else:
                out.print(table)
            out.print(rep.summary_view(results))
    for warning in batch.warnings:          # about the key: once, not per student
        err.print(f"[yellow]warning[/]: {rep._escape(key)}: {rep._escape(warning)}")
    for note in batch.notes:
        err.print(f"note: {rep._escape(note)}")
    if not show_details or quiet or to_stdout:      # the feedback view shows them otherwise
        for res in results:
            for w in res.warnings:
                err.print(f"[yellow]warning[/]: {rep._escape(res.source)}: {rep._escape(w)}")
    for line in batch.unreadable:
        err.print(f"[red]unreadable[/]: {rep._escape(line)}")
    for path, _ in planned:
        if not (report and path.suffix == ".md" or gradescope and path.name == "results.json"):
            err.print(f"wrote {rep._escape(str(path))}")
    if report:
        err.print(f"wrote {len(results)} feedback file{'s' if len(results) != 1 else ''} in {rep._escape(report)}")
    if gradescope:
        err.print(f"wrote {len(results)} Gradescope results.json in {rep._escape(gradescope)}")
    graded = f"graded {len(results)} submission{'s' if len(results) != 1 else ''}"
    if batch.unreadable:
        err.print(f"{graded}; [red]{len(batch.unreadable)} could not be read[/] (listed above)")
    elif not quiet:
        err.print(graded)
    return batch.exit_code


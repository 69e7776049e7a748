"""A sheet's outputs: rendered in memory (PDFs in worker processes), then written all or nothing;
``make_sheet`` is the `examprep sheet` command's one function."""
from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from examprep import keys
from examprep.answers.files import unprintable_char
from examprep.errors import ExamprepError, ParamError
from examprep.fileio import OutputError, check_output_folder, read_user_text, real_path, recover, safe_name, write_files
from examprep.render import fonts, pdf
from examprep.render.scannable import SCANNABLE_FILES, scannable_check, scannable_outputs
from examprep.render.exports import DEFAULT_FORMATS, EXPORTS, alias_of, format_names
from examprep.render.typst.sheet import sheet_source
from examprep.sheets.build import Progress, Sheet, build_sheet, font_plan, fresh_seed
from examprep.sources import recipe_from_topics, with_checkpoint
from examprep.sources.recipes import SheetError, bundled_recipes, load_recipe, with_difficulty
from examprep.sheets.variants import (LEGACY_WARNING, SECRET_FILE, Student, class_secret, class_secret_note, derivation,
                                      read_roster, read_secret_file, rebuild_command, save_class_secret, unmarked_warning)

PDF_CHUNK = 8          # copies per Typst compile: bounds memory; chunks are joined into one PDF


def render_outputs(sheet: Sheet, formats: tuple[str, ...] = DEFAULT_FORMATS,
                   progress: Progress | None = None, font_files: list | None = None,
                   split: bool = False, warnings: list[str] | None = None,
                   solutions: bool = True) -> dict[str, bytes]:
    """Every output file of the sheet, rendered in memory: relative path → bytes.

    Always the key (``key.json``) and answer template(s); each format adds the files its row of
    examprep.render.exports.EXPORTS names (pdf: problems.pdf and solutions.pdf, typeset here;
    ``solutions`` False: problems.pdf alone, the worked solutions not typeset).
    ``warnings``: the formats' warnings (parts an LMS cannot take) are appended to it.
    ``split`` (variants with "pdf"): each student's copy as a PDF of its own too,
    problems/<id>.pdf and solutions/<id>.pdf (ids made safe as the answer templates' are).
    ``progress("PDF parts", done, total)`` is called as each PDF part is typeset (and joined).
    ``font_files``: extra fonts for the PDFs (default: font_plan's, for names the bundled fonts lack).
    Raises TypstCompileError (nothing is written) when Typst rejects a document.
    """
    _check_lms(sheet, formats)
    if font_files is None:
        font_files = font_plan(sheet).files if "pdf" in formats else []
    with fonts.font_folder(font_files) as folder:
        return _render_outputs(sheet, formats, progress, folder, split and sheet.variants and "pdf" in formats,
                               [] if warnings is None else warnings, solutions)


def _check_lms(sheet: Sheet, formats: tuple[str, ...]) -> None:
    """An LMS quiz has no field for a list of shapes (a "shapes" part): refused before any work,
    naming the part, rather than exported wrong."""
    lms = [f for f in formats if EXPORTS[f].lms]
    if not lms:
        return
    for copy in sheet.copies[:1]:
        for n, problem in enumerate(copy.problems, 1):
            for part in problem.parts:
                if part.kind == "shapes":
                    raise SheetError(f"--format {lms[0]}: q{n}.{part.id} asks a list of shapes, which an LMS quiz has "
                                     "no field for; ask one shape per part there, or leave out "
                                     f"{', '.join(lms)}")


def _render_outputs(sheet: Sheet, formats: tuple[str, ...], progress: Progress | None,
                    font_folder: str | None, split: bool = False, warnings: list[str] | None = None,
                    solutions: bool = True) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    # The PDFs compile in worker processes while Python renders the rest. A long run of variants
    # compiles in chunks of PDF_CHUNK copies (Typst holds a document's whole layout in memory),
    # which are then joined into one PDF (render.pdf.PdfJoin).
    # Each chunk also reads back its copies' page counts, from which --split cuts each student's
    # pages out of the chunk in the same worker (no second layout).
    groups = [sheet.copies[i:i + PDF_CHUNK] for i in range(0, len(sheet.copies), PDF_CHUNK)]
    documents = [(n, s) for n, s in (("solutions.pdf", True), ("problems.pdf", False)) if solutions or not s]
    with pdf.PdfWorkers(tasks=len(documents) * len(groups) if "pdf" in formats else 0) as pool:
        chunks: dict[str, list] = {}
        if "pdf" in formats:
            # the solutions first: their chunks take about three times as long, and with the short
            # ones last the workers finish together instead of one waiting on the other
            for name, worked in documents:
                title = sheet.recipe.title + (" — solutions" if worked else "")
                chunks[name] = [pool.submit(pdf.compile_copies, sheet_source(sheet, solutions=worked, copies=g),
                                            font_folder, split=split, titles=[_copy_title(title, c) for c in g],
                                            author=sheet.recipe.course or "examprep")
                                for g in groups]
        out["key.json"] = (keys.key_to_json(make_key(sheet)) + "\n").encode("utf-8")
        if sheet.variants:
            for copy in sheet.copies:
                out[f"answers/{safe_name(copy.student.id)}.toml"] = keys.answer_template(
                    copy.problems, title=sheet.recipe.title, student_id=copy.student.id,
                    name=copy.student.name, decimal_comma=sheet.recipe.decimal_comma,
                    sheet=sheet.printed_id).encode("utf-8")
        else:
            out["answers.toml"] = keys.answer_template(sheet.copies[0].problems, title=sheet.recipe.title,
                                                       decimal_comma=sheet.recipe.decimal_comma,
                                                       sheet=sheet.printed_id).encode("utf-8")
        for export in (EXPORTS[f] for f in formats):
            if export.write is not None:
                files, said = export.write(sheet)
                out |= files
                if warnings is not None:
                    warnings += said
        # a class's chunks are joined here as they arrive, page objects copied as they are (pypdf),
        # while the workers typeset the next ones; each student gets a bookmark
        total = sum(len(f) for f in chunks.values()) + sum(1 for f in chunks.values() if len(f) > 1)
        done = 0
        for name, futures in chunks.items():
            join = pdf.PdfJoin()
            for g, f in enumerate(futures):
                part, pages, singles = f.result()
                group = sheet.copies[g * PDF_CHUNK:(g + 1) * PDF_CHUNK]
                if sheet.variants:      # the class PDF's outline: each student at the first page of their copy
                    starts = [sum(n + n % 2 for n in pages[:k]) for k in range(len(pages))]
                    join.add(part, [(_student_label(c), start) for c, start in zip(group, starts)])
                else:
                    out[name] = part
                for copy, single in zip(group, singles):
                    out[f"{name[:-4]}/{safe_name(copy.student.id)}.pdf"] = single
                done += 1
                if progress:
                    progress("PDF parts", done, total)
            if sheet.variants:
                out[name] = join.pdf()
            if len(futures) > 1:
                done += 1
                if progress:
                    progress("PDF parts", done, total)
    return {name: out[name] for name in sorted(out, key=_output_order)}


def _student_label(copy) -> str:
    """A student as their copy's bookmark and PDF title name them: "name (id)", or the id alone."""
    s = copy.student
    return f"{s.name} ({s.id})" if s.name else s.id


def _copy_title(title: str, copy) -> str:
    """A student's own PDF's title: the sheet's, then the student."""
    return f"{title} — {_student_label(copy)}" if copy.student else title


def _output_order(name: str) -> tuple[int, str]:
    """The listing's order: the documents, the key and answer template(s), the LMS quizzes (in
    EXPORTS' order), then the rest (per-student files) by name."""
    order = [f for e in EXPORTS.values() if not e.lms for f in e.files] + ["key.json", "answers.toml"] + \
        [f for e in EXPORTS.values() if e.lms for f in e.files]
    return (order.index(name) if name in order else len(order), name)


def make_key(sheet: Sheet):
    r = sheet.recipe
    meta = {"sheet_id": sheet.sheet_id, "recipe": r.name, "recipe_source": r.source, "seed": sheet.seed,
            "course": r.course, "minutes": r.minutes, "points": sheet.copies[0].points,
            "estimated_minutes": round(sheet.copies[0].minutes, 1)}
    if sheet.seed_secret:   # what the copies print instead of the seed (which they never print)
        meta["printed_id"] = sheet.printed_id
    if r.decimal_comma:     # grade reads answers with decimal commas and ';' separators, without a flag
        meta["decimal_comma"] = True
    if sheet.variants:
        meta["variants"] = derivation(sheet.legacy)
        meta["names"] = {c.student.id: c.student.name for c in sheet.copies}
        return keys.Key(title=r.title, problems=[], meta=meta,
                        variants={c.student.id: c.problems for c in sheet.copies},
                        variant_codes={c.student.id: c.code for c in sheet.copies})
    return keys.Key(title=r.title, problems=sheet.copies[0].problems, meta=meta)


def planned_paths(sheet_variants: bool, formats: tuple[str, ...], roster: list[Student] | None = None,
                  split: bool = False, solutions: bool = True) -> list[str]:
    """The relative paths a sheet will write (checked for overwrites before anything is built)."""
    paths = ["key.json"]
    if sheet_variants and roster is not None:
        paths += [f"answers/{safe_name(s.id)}.toml" for s in roster]
    else:
        paths.append("answers.toml")
    if "pdf" in formats and split and sheet_variants and roster is not None:
        paths += [f"{kind}/{safe_name(s.id)}.pdf" for kind in ("problems", "solutions")[:1 + solutions] for s in roster]
    for export in (EXPORTS[f] for f in formats):
        if export.student_files and sheet_variants and roster is not None:
            paths += [export.student_files.format(id=safe_name(s.id)) for s in roster]
        else:      # a long Blackboard file is split (blackboard-1.txt…): write_outputs checks those
            paths += [f for f in export.files if solutions or f != "solutions.pdf"]
    return sorted(paths, key=_output_order)


def check_output_dir(out_dir: Path, paths: list[str], force: bool, inputs: list[str] = ()) -> None:
    """Refuse to overwrite (without ``force``) and fail early on a directory we cannot write; never,
    --force or not, an output on one of ``inputs`` (the recipe, roster, secret and question files
    being read); only the last folder of --out is made (a typo would scatter sheets)."""
    check_output_folder(str(out_dir), "--out")     # a file, a dangling link or loop, a missing parent, '-'
    read = {real_path(i): i for i in inputs}
    clash = next((p for p in paths if real_path(out_dir / p) in read), None)
    if clash is not None:
        raise OutputError(f"--out {out_dir}: would write {out_dir / clash}, an input being read "
                          f"({read[real_path(out_dir / clash)]}); choose another --out, --force or not")
    existing = [p for p in paths if (out_dir / p).exists()]
    if existing and not force:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise OutputError(f"{out_dir / existing[0]}{more} already exist{'s' if len(existing) == 1 else ''}; "
                          "use --force to overwrite, or --out another directory")
    probe = out_dir
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"--out {out_dir}: cannot create it, {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"--out {out_dir}: cannot write there (permission denied)")


MANIFEST = ".examprep-files.json"     # in the output directory: the files the last run wrote there, with their hashes


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_outputs(out_dir: Path, outputs: dict[str, bytes], force: bool, *, stale: "Stale | None" = None,
                  private: tuple[str, ...] | set[str] = ()) -> list[Path]:
    """Write every output into ``out_dir``, all or nothing (examprep.fileio.write_files, the folder
    built beside and swapped into place with the files already in it), after the same checks as
    before the work: nothing is overwritten without ``force``. MANIFEST, written with them, lists
    each file with its SHA-256, with the earlier files it listed that are still there unchanged (a
    run without --force beside another one's outputs replaces none of them). ``stale``'s files (an
    earlier run's, proven ours) are left out of the new folder, or removed where it is written in
    place. ``private``: relative paths written 0600 (a secret)."""
    check_output_dir(out_dir, list(outputs), force)
    stale = stale or Stale()
    listed = {rel: _sha256(data) for rel, data in outputs.items()}
    if not force:
        for rel, digest in earlier_files(out_dir).items():
            if rel not in listed and digest is not None and _ours(out_dir, rel, digest):
                listed[rel] = digest
    manifest = {"written_by": "examprep sheet", "version": 2, "files": dict(sorted(listed.items()))}
    files = {out_dir / rel: data for rel, data in outputs.items()}
    files[out_dir / MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode("utf-8")
    written = write_files(files, overwrite=force, folders=[out_dir], drop={out_dir / rel for rel in stale.remove},
                          private_files={out_dir / rel for rel in private})
    for rel, digest in stale.remove.items():     # where the folder was written in place (a link, the current one)
        path = out_dir / rel
        if os.path.lexists(path) and _ours(out_dir, rel, digest):
            try:
                path.unlink()
            except OSError:
                continue
            parent = path.parent
            while parent != out_dir and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    return written[:-1]


def earlier_files(out_dir: Path) -> dict[str, str | None]:
    """The files (relative paths) an earlier run of `examprep sheet` wrote in ``out_dir``, each with
    the SHA-256 its MANIFEST recorded, or None where it recorded none: a manifest from before the
    hashes, or, for a run made before there was one, the per-student files its key names
    (answers/ID.toml and each format's, blackboard/ID.txt). Paths that leave the directory are never included."""
    try:
        listing = json.loads(read_user_text(out_dir / MANIFEST))
        files = listing["files"]
        if isinstance(files, dict):
            found = {f: h if isinstance(h, str) else None for f, h in files.items() if isinstance(f, str)}
        else:
            found = {f: None for f in files if isinstance(f, str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ExamprepError):
        try:
            names = json.loads(read_user_text(out_dir / "key.json"))["meta"]["names"]
            per_student = ["answers/{id}.toml"] + [e.student_files for e in EXPORTS.values() if e.student_files]
            found = {f.format(id=safe_name(str(sid))): None for sid in names for f in per_student}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, ExamprepError):
            return {}
    return {f: h for f, h in found.items() if f and not Path(f).is_absolute() and ".." not in Path(f).parts}


def _ours(out_dir: Path, rel: str, digest: str) -> bool:
    """Whether ``out_dir``/``rel`` is still the file an earlier run wrote: inside the folder, reached
    through real folders only (no link on the way), itself a regular file and not a link, and its
    SHA-256 still ``digest`` (a file the instructor edited since is theirs)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts or rel == MANIFEST:
        return False
    path = out_dir
    try:
        for i, part in enumerate(parts):
            path = path / part
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) if i == len(parts) - 1 else stat.S_ISDIR(mode)):
                return False
        return _sha256(path.read_bytes()) == digest
    except OSError:
        return False


@dataclass
class Stale:
    """What --force does with an earlier run's files that this run does not write again."""

    remove: dict[str, str] = field(default_factory=dict)   # proven ours (hash matches): removed
    edited: list[str] = field(default_factory=list)         # ours once, changed since: kept
    unproven: list[str] = field(default_factory=list)       # listed without a hash (older examprep): kept

    def warnings(self, out_dir: Path) -> list[str]:
        def names(rels: list[str]) -> str:
            return ", ".join(rels[:3]) + (", …" if len(rels) > 3 else "")

        out = []
        if self.edited:
            n = len(self.edited)
            out.append(f"kept {n} file{'s' if n != 1 else ''} in {out_dir} that an earlier run wrote and that "
                       f"{'were' if n != 1 else 'was'} changed since: {names(self.edited)}")
        if self.unproven:
            n = len(self.unproven)
            it = "they" if n != 1 else "it"
            out.append(f"kept {n} earlier file{'s' if n != 1 else ''} in {out_dir} that an older examprep listed "
                       f"without a hash, so {it} cannot be proven its own: {names(self.unproven)}; remove "
                       f"{'them' if n != 1 else 'it'} by hand if unwanted")
        return out


def stale_files(out_dir: Path, earlier: dict[str, str | None], outputs: dict[str, bytes] | list[str],
                keep: list[str] = ()) -> Stale:
    """Sort the files an earlier run wrote (``earlier``) that this run does not write again: removed
    only when proven ours (_ours: inside the folder, no link, its hash unchanged), never one of
    ``keep`` (the inputs this run read); the rest kept and named."""
    kept = {real_path(k) for k in keep}
    stale = Stale()
    for rel, digest in sorted(earlier.items()):
        # a class's secret is never tidied away
        if rel in outputs or rel in (MANIFEST, SECRET_FILE) or not os.path.lexists(out_dir / rel):
            continue
        if real_path(out_dir / rel) in kept:
            continue
        if digest is None:
            stale.unproven.append(rel)
        elif _ours(out_dir, rel, digest):
            stale.remove[rel] = digest
        elif (out_dir / rel).is_file():
            stale.edited.append(rel)
    return stale


@dataclass
class Result:
    sheet: Sheet
    out_dir: Path
    written: list[Path]
    warnings: list[str] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)     # an earlier run's files this one replaced
    notes: list[str] = field(default_factory=list)        # what the instructor must know (the class's secret)


def _old_derivation(out_dir: Path, legacy: bool) -> str | None:
    """A warning when --force replaces a key whose variants were derived the other way."""
    try:
        meta = json.loads((out_dir / "key.json").read_text(encoding="utf-8")).get("meta", {})
    except (OSError, ValueError, AttributeError):
        return None
    recorded = meta.get("variants") if isinstance(meta, dict) else None
    if recorded is None:
        return None
    old = not isinstance(recorded, dict) or recorded.get("version", 1) == 1
    if old and not legacy:
        return (f"{out_dir / 'key.json'} held variants derived the old way; these differ from them "
                "(add --legacy-secret to regenerate that sheet instead)")
    if legacy and not old:
        return f"{out_dir / 'key.json'} held variants from a stretched secret; --legacy-secret derives other ones"
    return None


def _earlier_seed(out_dir: Path, recipe_name: str | None = None) -> int | None:
    """The seed of the class sheet (with variants) in ``out_dir``/key.json, if there is one (and its
    recipe's name is ``recipe_name``, where given)."""
    seed, _ = _earlier_class(out_dir, recipe_name)
    return seed


def _earlier_class(out_dir: Path, recipe_name: str | None = None) -> tuple[int | None, dict]:
    """(seed, variant codes by student id) of the class key in ``out_dir``, as _earlier_seed finds it."""
    try:
        data = json.loads((out_dir / "key.json").read_text(encoding="utf-8"))
        meta, codes = data["meta"], data.get("variant_codes") or {}
        seed = meta["seed"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, {}
    ok = (recipe_name in (None, meta.get("recipe")) and "variants" in meta and type(seed) is int and seed >= 0
          and isinstance(codes, dict))
    return (seed, codes) if ok else (None, {})


def make_sheet(*, recipe: str | None = None, topics: list[str] | None = None, count: int | None = None,
               difficulty: int | None = None, seed: int | None = 0, roster: str | None = None,
               secret_file: str | None = None, formats: str | None = None, out: str | None = None,
               force: bool = False, title: str | None = None, course: str | None = None,
               legacy_secret: bool = False, progress: Progress | None = None, decimal_comma: bool = False,
               split: bool = False, questions_dir: str | None = None, checkpoint: str | None = None,
               canvas_per_student: bool = False, solutions: bool = False, scannable: bool = False) -> Result:
    """The `examprep sheet` command: validate everything, build, render in memory, then write.

    ``seed`` None: a fresh one (build.fresh_seed), which the copies never print. ``solutions``: a
    class build (``roster``) typesets its per-student worked solutions (solutions.pdf, and
    solutions/ID.pdf with ``split``) only when asked; a common sheet always has its solutions.

    Raises ExamprepError subclasses (usage: ParamError; recipe, roster, secret: SheetError;
    output: OutputError; Typst: TypstCompileError) before anything is written. Ctrl-C stops it
    with nothing written, as KeyboardInterrupt("nothing was written").
    """
    try:
        return _make_sheet(recipe=recipe, topics=topics, count=count, difficulty=difficulty, seed=seed, roster=roster,
                           secret_file=secret_file, formats=formats, out=out, force=force, title=title, course=course,
                           legacy_secret=legacy_secret, progress=progress, decimal_comma=decimal_comma,
                           split=split, questions_dir=questions_dir, checkpoint=checkpoint,
                           canvas_per_student=canvas_per_student, solutions=solutions, scannable=scannable)
    except KeyboardInterrupt:     # the workers are stopped and the temporaries removed on the way here
        raise KeyboardInterrupt("nothing was written") from None


def _make_sheet(*, recipe: str | None, topics: list[str] | None, count: int | None, difficulty: int | None,
                seed: int | None, roster: str | None, secret_file: str | None, formats: str | None, out: str | None,
                force: bool, title: str | None, course: str | None, legacy_secret: bool,
                progress: Progress | None, decimal_comma: bool = False, split: bool = False,
                questions_dir: str | None = None, checkpoint: str | None = None,
                canvas_per_student: bool = False, solutions: bool = False, scannable: bool = False) -> Result:
    fmts = parse_formats(formats)
    if scannable:
        scannable_check()
    if recipe and topics:
        raise ParamError("give either --recipe or --topics, not both")
    if topics:
        names = [t.strip() for spec in topics for t in spec.split(",") if t.strip()]
        r = recipe_from_topics(names, count=1 if count is None else count, difficulty=1 if difficulty is None else difficulty)
    else:
        if count is not None:
            raise ParamError("--count applies to --topics; a recipe sets the count of each problem")
        r = load_recipe(recipe or "midterm", questions_dir)
        if difficulty is not None:
            r = with_difficulty(r, difficulty)
    r = with_checkpoint(r, checkpoint)

    for option, value in (("--title", title), ("--course", course)):
        bad = unprintable_char(value or "")
        if bad is not None:
            raise ParamError(f"{option}: a line break or control character ({bad!r}) cannot be printed in one "
                             "line of the sheet and its answer files; write it on one line")
    if title is not None:
        if not title.strip():
            raise ParamError("--title: give a non-empty title")
        r = replace(r, title=title.strip())
    if course is not None:
        r = replace(r, course=course.strip())
    if decimal_comma:
        r = replace(r, decimal_comma=True)
    students = read_roster(roster) if roster else None
    solutions = solutions or students is None        # a class's worked solutions only on request
    if split and students is None:
        raise ParamError("--split writes one PDF per student: give --roster too")
    if split and "pdf" not in fmts:
        raise ParamError("--split writes one PDF per student: add pdf to --format")
    if canvas_per_student and (students is None or "canvas" not in fmts):
        raise ParamError("--canvas-per-student writes one Canvas quiz per student: give --roster and --format canvas")
    if legacy_secret and not secret_file:
        raise SheetError("--legacy-secret goes with --roster and --secret-file (it regenerates old variants)")
    if out is not None and not out.strip():
        raise ParamError("--out: an empty folder name; give a folder (without --out: the recipe's name)")
    out_dir = Path(out) if out else Path(r.name)
    secret, marked, own_secret, new_secret = None, True, False, False
    if secret_file:
        secret, marked = read_secret_file(secret_file, legacy=legacy_secret)
    elif students is not None:       # the folder's own secret: an earlier run's, or a new one saved with the outputs
        secret_file, own_secret = str(out_dir / SECRET_FILE), True
        secret, marked, new_secret = class_secret(out_dir)
        if new_secret and _earlier_seed(out_dir) is not None:     # a forgotten --secret-file would replace the class
            raise SheetError(f"--out {out_dir}: its key.json holds a class's variants, made from a secret other than "
                             f"{secret_file} (which is not there); give that sheet's --secret-file to rebuild it, "
                             "or --out another folder")
    inputs = [p for p in (recipe, roster, secret_file, *(getattr(i.question, "source", "") for i in r.items))
              if p and os.path.isfile(p)]

    recovered = recover([out_dir])           # a killed run's set completed, its temporaries removed
    check_output_dir(out_dir, planned_paths(students is not None, fmts, students, split, solutions)
                     + (list(SCANNABLE_FILES) if scannable else []), force, inputs)
    warnings = ([LEGACY_WARNING] if legacy_secret else [] if marked else [unmarked_warning(secret_file)]) + recovered
    if students is not None and force:
        replaced = _old_derivation(out_dir, legacy_secret)
        warnings += [replaced] if replaced else []
    seed_from, earlier_codes = "given" if seed is not None else "new", {}
    if seed is None and own_secret and not new_secret:     # a rerun of the class: its seed too, so the same variants
        seed, earlier_codes = _earlier_class(out_dir, r.name)
        seed_from = "new" if seed is None else "key"
    seed = fresh_seed() if seed is None else seed
    sheet = build_sheet(r, seed, roster=students, secret=secret, legacy=legacy_secret, progress=progress)
    sheet = replace(sheet, canvas_per_student=canvas_per_student)
    fonts = font_plan(sheet) if "pdf" in fmts else None
    warnings += fonts.warnings if fonts else []
    outputs = render_outputs(sheet, fmts, progress, fonts.files if fonts else [], split=split, warnings=warnings,
                             solutions=solutions)
    if scannable:
        outputs.update(scannable_outputs(sheet))
    notes = [CANVAS_GROUPS_NOTE] if sheet.variants and "canvas" in fmts and not canvas_per_student else []
    if students is not None and not solutions and "pdf" in fmts:
        notes.append("no solutions.pdf: a class's per-student worked solutions are typeset only with --solutions "
                     "(key.json holds every student's answers)")
    if sheet.variants and any(earlier_codes.get(c.student.id, c.code) != c.code for c in sheet.copies):
        seed_from = "key, other secret"     # that key was made with --secret-file: its variants are not these
    if own_secret:
        if new_secret:       # before the outputs: a key never exists without its secret (the folder swap carries it)
            save_class_secret(out_dir, secret)
        rebuild = rebuild_command(recipe=recipe, topics=topics, count=count, difficulty=difficulty, seed=seed,
                                  roster=roster, secret_file=secret_file, title=title, course=course,
                                  decimal_comma=decimal_comma, formats=formats, split=split,
                                  solutions=solutions and students is not None,
                                  questions_dir=questions_dir, checkpoint=checkpoint,
                                  canvas_per_student=canvas_per_student, scannable=scannable)
        notes.append(class_secret_note(secret_file, new_secret, seed_from, rebuild))
    stale = stale_files(out_dir, earlier_files(out_dir), outputs, keep=inputs) if force else Stale()
    written = write_outputs(out_dir, outputs, force, stale=stale)
    return Result(sheet, out_dir, written, warnings + stale.warnings(out_dir), [out_dir / rel for rel in stale.remove],
                  notes)


CANVAS_GROUPS_NOTE = ("canvas.zip is ONE quiz: each question is a group holding every student's variant, and "
                      "Canvas draws a variant per question per student at random, so a student's online quiz is "
                      "not their printed copy (item titles carry the variant code, to map results to the key); "
                      "--canvas-per-student writes one quiz per student instead")


def parse_formats(spec: str | None) -> tuple[str, ...]:
    """"pdf,md,moodle" → ("pdf", "md", "moodle"), in EXPORTS' order; ParamError naming an unknown
    format (and the format it is another name for, "markdown" → md)."""
    if spec is None:
        return DEFAULT_FORMATS
    names = [f.strip().lower() for f in spec.split(",") if f.strip()]
    if not names:
        raise ParamError(f"--format: give one or more of {format_names()}")
    for n in names:
        if n not in EXPORTS:
            alias = alias_of(n)
            hint = f"; did you mean {alias}?" if alias else ""
            raise ParamError(f"--format: unknown format {n!r}{hint}; choose from {format_names()}")
    return tuple(f for f in EXPORTS if f in names)


# ------------------------------------------------------------------------------------------ samples

SAMPLE_SEED = 2024
SAMPLE_RECIPES = ("midterm", "cnn", "rnn", "transformer", "optimization")


def sample_outputs(with_pdf: bool = True) -> dict[str, bytes]:
    """The repository's sample sheets: bundled recipes at seed SAMPLE_SEED, as paths relative to
    the repository root (problems/NAME.md|pdf, solutions/NAME.md|pdf, solutions/NAME-key.json)."""
    out: dict[str, bytes] = {}
    recipes = bundled_recipes()
    for name in SAMPLE_RECIPES:
        if name not in recipes:
            continue
        sheet = build_sheet(recipes[name], SAMPLE_SEED)
        files = render_outputs(sheet, ("pdf", "md") if with_pdf else ("md",))
        out[f"problems/{name}.md"] = files["problems.md"]
        out[f"solutions/{name}.md"] = files["solutions.md"]
        out[f"solutions/{name}-key.json"] = files["key.json"]
        if with_pdf:
            out[f"problems/{name}.pdf"] = files["problems.pdf"]
            out[f"solutions/{name}.pdf"] = files["solutions.pdf"]
    return out


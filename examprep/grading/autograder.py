"""`examprep gradescope-autograder KEY --out autograder.zip`: the zip Gradescope's programming
assignments run, and (``python -m examprep.grading.autograder``) what runs inside it.

The zip holds setup.sh (a Python ≥ 3.11 — installed from Ubuntu's archive when the image's is
older — a virtual environment in $AUTOGRADER_ROOT/venv, the dependencies pinned to the versions
running here, then the bundled examprep wheel), run_autograder (grades the answer file in
$AUTOGRADER_ROOT/submission against the bundled key and writes $AUTOGRADER_ROOT/results/results.json),
key.json, requirements.txt, the wheel and a README for the instructor. examprep is not on a
package registry, so the wheel is built from the running installation: from its source tree when
it is installed editable, else repacked from the installed files its RECORD lists.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from packaging.requirements import Requirement

import examprep
from examprep import __version__, keys
from examprep.answers.files import collect
from examprep.errors import ExamprepError, ParamError
from examprep.fileio import atomic_write_bytes, atomic_write_text, read_user_bytes
from examprep.grading.batch import grade_batch
from examprep.grading.report_text import gradescope_json
from examprep.grading.reports import VISIBILITIES
from examprep.sheets.variants import read_roster
from examprep.sources.recipes import SheetError


class AutograderError(ExamprepError):
    """The zip could not be built (the wheel of the running installation failed)."""

    exit_code = 1


SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && \
     "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    PY="$candidate"; break
  fi
done
if [ -z "$PY" ]; then      # Gradescope's Ubuntu 22.04 images ship Python 3.10: examprep needs 3.11
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv
  PY=python3.11
fi
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install -r "$HERE/requirements.txt"
"$ROOT/venv/bin/python" -m pip install --no-deps "$HERE"/{wheel}
"$ROOT/venv/bin/examprep" grade "$HERE/key.json" --self-test
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: the student's files are in $ROOT/submission, who
# submitted them in $ROOT/submission_metadata.json.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$ROOT/results"
exec "$ROOT/venv/bin/python" -m examprep.grading.autograder "$ROOT/source/key.json" "$ROOT/submission" \
  "$ROOT/results" --metadata "$ROOT/submission_metadata.json"{roster} --visibility {visibility}{show_answers}
"""

README = """# examprep autograder for Gradescope

Made by `examprep gradescope-autograder` (examprep {version}, Python {python}) for the key
"{title}" ({parts} parts, {points:g} points).

Upload: in Gradescope, create a Programming Assignment, open Configure Autograder, choose
"Zip file upload", upload this zip as it is, and wait for the image to build (setup.sh installs
Python 3.11 when the image's is older, the pinned dependencies and examprep). Students submit one
answer file (.toml or .json, as `examprep sheet` or `generate --template` gives them).

{who}

Each part is one Gradescope test (score, max_score, feedback with the misconception named). Written
parts stay pending (0 points, no pass/fail) until you mark them by hand in Gradescope; one left
blank is "no answer" (0 points, failed), as any blank part is.

Files: setup.sh, run_autograder, key.json (the answer key: keep the zip private), requirements.txt
(the dependencies pinned to the versions it was built with), {wheel}{roster_file}.
"""

WHO_COMMON = "The key has one common sheet: every submission is graded against it."
WHO_VARIANTS = """The key has one variant per student: each submission is graded against the variant of the
student Gradescope says submitted it (submission_metadata.json), never the one the file names.
A submitter is matched by Gradescope's SID (against the roster's id, then its sis_id), else by
e-mail (against the roster's email). {roster}"""
WHO_ROSTER = "roster.json holds each student's id, e-mail and sis_id from the roster it was\nbuilt with."
WHO_NO_ROSTER = ("Built without --roster: only the SID is matched, against the key's student ids; students whose\n"
                 "Gradescope SID is not their examprep id get a 0 with that reason.")
ROSTER_FORMAT = "examprep-autograder-roster"


def pinned_requirements(dist: str = "examprep") -> list[str]:
    """name==version of every installed dependency of ``dist`` (recursively, extras left out,
    markers evaluated for this interpreter)."""
    seen: dict[str, str] = {}
    todo = [dist]
    while todo:
        name = todo.pop()
        for spec in metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            key = req.name.lower().replace("_", "-")
            if key in seen:
                continue
            try:
                seen[key] = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                raise AutograderError(f"{req.name} (needed by {name}) is not installed: reinstall examprep") from None
            todo.append(req.name)
    return [f"{k}=={v}" for k, v in sorted(seen.items())]


def build_wheel(tmp: Path) -> Path:
    """A wheel of the running examprep: built from its source tree (an editable install) with pip
    and setuptools, else repacked from the installed files."""
    src = Path(examprep.__file__).resolve().parents[1]
    if (src / "pyproject.toml").is_file():
        tree = tmp / "src"
        shutil.copytree(src / "examprep", tree / "examprep", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            if (src / name).is_file():
                shutil.copy2(src / name, tree / name)
        out = tmp / "wheel"
        res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                              "-q", "-w", str(out), str(tree)], capture_output=True, text=True)
        wheels = sorted(out.glob("examprep-*.whl"))
        if res.returncode != 0 or not wheels:
            lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip() and not ln.lstrip().startswith("hint:")]
            reason = next((ln for ln in reversed(lines) if ln.lower().startswith("error")), lines[-1] if lines else "?")
            raise AutograderError(f"could not build the examprep wheel ({reason}); examprep's install provides "
                                  "setuptools>=70.1: reinstall with pip install -e '.[train]'")
        return wheels[0]
    return _repack(tmp)


def _repack(tmp: Path) -> Path:
    dist = metadata.distribution("examprep")
    name = f"examprep-{dist.version}-py3-none-any.whl"
    path = tmp / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for f in dist.files or []:
            p = Path(dist.locate_file(f))
            if p.is_file() and "__pycache__" not in f.parts and not str(f).startswith(".."):
                z.write(p, str(f))
    return path


def check_out(key_path: str, out: str, force: bool) -> None:
    """--out before any work: a .zip path, not the key itself, not a folder, and not an existing
    file unless --force."""
    target = Path(out)
    if not out.strip():
        raise ParamError("--out: the path is empty")
    if target.suffix.lower() != ".zip":
        raise ParamError(f"--out {out}: Gradescope takes a .zip; give a path ending in .zip")
    if target.is_dir():
        raise ParamError(f"--out {out}: is a directory; give the zip's path")
    if target.exists():
        if Path(key_path).exists() and target.resolve() == Path(key_path).resolve():
            raise ParamError(f"--out {out}: the zip would overwrite the key it is built from; choose another path")
        if not force:
            raise ParamError(f"--out {out}: exists; add --force to replace it")
    if not target.parent.is_dir():
        raise ParamError(f"--out {out}: the folder {target.parent} does not exist")


def roster_mapping(key: Any, roster_path: str) -> dict[str, Any]:
    """roster.json for a key with variants: each roster student's id, email and sis_id (what a
    Gradescope submitter is matched on). Raises SheetError for a bad roster, one whose e-mails or
    sis_ids are not unique (a submitter would match two students) or one that shares no student
    with the key."""
    students = read_roster(roster_path)
    for what in ("email", "sis_id"):
        seen: dict[str, str] = {}
        for st in students:
            value = getattr(st, what).strip().casefold()
            if value and value in seen:
                raise SheetError(f"--roster {roster_path}: the {what} {getattr(st, what)!r} is both {seen[value]}'s "
                                 f"and {st.id}'s; a Gradescope submitter is matched on it, so it must be unique")
            seen[value] = st.id
    if not any(st.id in key.variants for st in students):
        raise SheetError(f"--roster {roster_path}: none of its {len(students)} students has a variant in the key; "
                         "give the roster the sheet was made with")
    return {"format": ROSTER_FORMAT, "students": [{"id": st.id, "email": st.email, "sis_id": st.sis_id}
                                                  for st in students]}


WHEEL_STEP = "building examprep's wheel"


def build_zip(key_path: str, out: str, *, visibility: str = "visible", show_answers: bool = False,
              force: bool = False, roster: str | None = None,
              progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, Any]:
    """Write the autograder zip; returns what it holds (for the summary). ``roster``: the class
    roster CSV; with a key of per-student variants its ids, e-mails and sis_ids are bundled as
    roster.json so that run_autograder can tell which student Gradescope says submitted.
    ``progress(WHEEL_STEP, 0, None)`` is called before the wheel is built (seconds), after every check."""
    if visibility not in VISIBILITIES:
        raise ParamError(f"--visibility: expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    check_out(key_path, out, force)
    key = keys.read_key(key_path)
    key_bytes = read_user_bytes(key_path)
    mapping = roster_mapping(key, roster) if roster is not None and key.variants else None
    problems = key.problems or next(iter(key.variants.values()), [])
    n_parts = sum(len(p.parts) for p in problems)
    points = sum(p.points for p in problems)
    if progress:
        progress(WHEEL_STEP, 0, None)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        wheel_bytes = wheel.read_bytes()
    requirements = pinned_requirements()
    files = {
        "setup.sh": SETUP_SH.replace("{wheel}", wheel.name),
        "run_autograder": RUN_AUTOGRADER.replace("{visibility}", visibility)
                                        .replace("{show_answers}", " --show-answers" if show_answers else "")
                                        .replace("{roster}", ' --roster "$ROOT/source/roster.json"' if mapping else ""),
        "requirements.txt": "\n".join(requirements) + "\n",
        "README.md": README.format(version=__version__, python=".".join(map(str, sys.version_info[:3])),
                                   title=key.title or Path(key_path).stem, parts=n_parts, points=points, wheel=wheel.name,
                                   who=WHO_VARIANTS.format(roster=WHO_ROSTER if mapping else WHO_NO_ROSTER)
                                   if key.variants else WHO_COMMON,
                                   roster_file=", roster.json" if mapping else ""),
    }
    if mapping:
        files["roster.json"] = json.dumps(mapping, indent=1, ensure_ascii=False) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
            z.writestr(info, text)
        z.writestr(zipfile.ZipInfo("key.json", date_time=(2020, 1, 1, 0, 0, 0)), key_bytes)
        z.writestr(zipfile.ZipInfo(wheel.name, date_time=(2020, 1, 1, 0, 0, 0)), wheel_bytes)
    atomic_write_bytes(out, buf.getvalue())
    off_roster = [sid for sid in key.variants if mapping and sid not in {st["id"] for st in mapping["students"]}]
    return {"wheel": wheel.name, "requirements": requirements, "parts": n_parts, "points": points,
            "variants": len(key.variants), "roster": len(mapping["students"]) if mapping else None,
            "off_roster": off_roster, "roster_unused": roster is not None and not key.variants}


def autograder_notes(info: dict[str, Any]) -> list[str]:
    """What the instructor should know about how submitters will be matched (build_zip's summary)."""
    notes = []
    if info["roster_unused"]:
        notes.append("note: --roster unused: the key has one common sheet, graded the same for every submitter")
    elif info["variants"] and info["roster"] is None:
        notes.append(f"note: {info['variants']} variants and no --roster: a submitter is matched only by the SID in "
                     "Gradescope's roster against the key's student ids; give --roster to match e-mails too")
    if info["off_roster"]:
        shown = ", ".join(info["off_roster"][:5]) + (" …" if len(info["off_roster"]) > 5 else "")
        notes.append(f"note: {len(info['off_roster'])} of the key's students are not on --roster ({shown}): "
                     "their submissions will get a 0 saying so")
    return notes


class Unidentified(ExamprepError):
    """Who submitted cannot be told (no metadata, not on the roster, a group with different
    variants): the submission is a 0 with this reason, never graded as someone else's."""


def read_metadata(path: str | None) -> list[dict[str, Any]]:
    """The submitters ("users") in Gradescope's submission_metadata.json.

    Documented shape (https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/):
    {"id", "created_at", "assignment": {...}, "submission_method", "users": [{"email", "id", "name"}, ...]
    (several in a group submission), "previous_submissions": [...]}; Gradescope also gives each user
    the "sid" of its course roster. Raises Unidentified for a missing or unreadable file or no users."""
    where = "Gradescope's submission metadata" + (f" ({path})" if path else "")
    tail = "this submission cannot be matched to a student's variant; nothing was graded: tell your instructor"
    if not path:
        raise Unidentified(f"{where} was not given; {tail}")
    try:
        data = json.loads(read_user_bytes(path, where, error=Unidentified, kind="metadata file", limit=16 << 20,
                                          limit_what="submission metadata"))
    except Unidentified as err:
        raise Unidentified(f"{err}; {tail}") from None
    except (ValueError, RecursionError):
        raise Unidentified(f"{where} is not valid JSON; {tail}") from None
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, list) or not users or not all(isinstance(u, dict) for u in users):
        raise Unidentified(f"{where} names no submitter (no \"users\" list); {tail}")
    return users


def read_roster_mapping(path: str | None, key: Any) -> list[dict[str, str]]:
    """The students a submitter is matched against: roster.json's (id, email, sis_id), or without
    one the key's own student ids (then only Gradescope's SID can match)."""
    if not path:
        return [{"id": sid, "email": "", "sis_id": ""} for sid in key.variants]
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        students = data["students"] if data.get("format") == ROSTER_FORMAT else None
        return [{k: str(st.get(k) or "") for k in ("id", "email", "sis_id")} for st in students]
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise Unidentified(f"the autograder's roster ({Path(path).name}) cannot be read ({type(err).__name__}): "
                           "nothing was graded; tell your instructor to rebuild the autograder") from None


def _fold(text: Any) -> str:
    return str(text or "").strip().casefold()


def _shown_user(user: dict[str, Any]) -> str:
    bits = [str(user.get(k) or "").strip() for k in ("name", "email")]
    sid = str(user.get("sid") or "").strip()
    return ", ".join([b for b in bits if b] + ([f"SID {sid}"] if sid else [])) or f"Gradescope user {user.get('id')}"


def match_user(user: dict[str, Any], roster: list[dict[str, str]]) -> dict[str, str]:
    """The roster student a Gradescope user is. Precedence: the user's "sid" against the roster's id,
    then against its sis_id; else the user's "email" against the roster's email (all compared
    trimmed and case-insensitively). A SID and an e-mail naming two different students, or neither
    naming one, raise Unidentified."""
    sid, email = _fold(user.get("sid")), _fold(user.get("email"))
    by_sid = (next((st for st in roster if sid and _fold(st["id"]) == sid), None)
              or next((st for st in roster if sid and _fold(st["sis_id"]) == sid), None))
    by_email = next((st for st in roster if email and _fold(st["email"]) == email), None)
    if by_sid and by_email and by_sid is not by_email:
        raise Unidentified(f"{_shown_user(user)}: Gradescope's SID is {by_sid['id']}'s on the roster but the e-mail is "
                           f"{by_email['id']}'s, so whose variant to grade is not clear; nothing was graded: "
                           "tell your instructor")
    found = by_sid or by_email
    if found is None:
        raise Unidentified(f"{_shown_user(user)} is not on the roster this autograder was built with (matched by "
                           "SID and e-mail), so there is no variant to grade against; nothing was graded: "
                           "tell your instructor")
    return found


def submitter(key: Any, users: list[dict[str, Any]], roster: list[dict[str, str]]) -> tuple[str, str]:
    """(student id, how to name them) of the submission's users: one student, or a group whose
    members all have one variant. Raises Unidentified otherwise."""
    found = [(user, match_user(user, roster)) for user in users]
    for user, st in found:
        if st["id"] not in key.variants:
            raise Unidentified(f"{_shown_user(user)} is {st['id']} on the roster, but the key has no variant for "
                               f"{st['id']}; nothing was graded: tell your instructor")
    variants = {st["id"]: [p.to_dict() for p in key.variants[st["id"]]] for _, st in found}
    first = next(iter(variants.values()))
    if any(v != first for v in variants.values()):
        who = "; ".join(f"{st['id']} ({_shown_user(user)}) has variant {key.variant_codes.get(st['id'], st['id'])}"
                        for user, st in found)
        raise Unidentified(f"this group submission's members have different variants ({who}): one file cannot "
                           "answer them all; nothing was graded: each member submits their own answers alone")
    user, st = found[0]
    email = str(user.get("email") or "").strip()
    return st["id"], st["id"] + (f" ({email})" if email else "")


def results_for(key_path: str, submission: str, *, metadata: str | None = None, roster: str | None = None,
                visibility: str = "visible", show_answers: bool = False) -> dict:
    """Gradescope's results.json for the one answer file in ``submission``: never raises for a
    student's mistake (no file, several, unreadable): those are a 0 with the reason in output.

    With a key of per-student variants the file is graded against the variant of the student
    Gradescope's ``metadata`` (submission_metadata.json) names, matched on ``roster`` (roster.json,
    see match_user); whom the file names does not count. No metadata, a submitter not on the roster
    and a group whose members have different variants are a 0 with that reason. A key with one
    common sheet needs neither."""
    key = keys.read_key(key_path)
    who = None
    if key.variants:
        try:
            who = submitter(key, read_metadata(metadata), read_roster_mapping(roster, key))
        except Unidentified as err:
            return _zero(str(err), visibility)
    files, skipped = collect([submission])
    not_read = "".join(f"\n  {_short(n, submission)}" for n in skipped)
    try:
        batch = grade_batch(key, [submission], submitter=who)
    except ExamprepError as err:
        if not files:
            why = (f"no answer files in this submission; each file was skipped:{not_read}" if skipped
                   else "no answer files: this submission is empty")
            return _zero(f"{why}\nSubmit one answer file (.toml or .json).", visibility)
        return _zero(f"{err}. Submit one answer file (.toml or .json).", visibility)
    also = f"\nAlso submitted, not read:{not_read}" if skipped else ""
    if batch.unreadable:
        return _zero("Your answer file could not be read:\n" + "\n".join(_short(u, submission) for u in batch.unreadable)
                     + also, visibility)
    sources = [r.source for r in batch.results] + [src for c in batch.conflicts for src in c.sources]
    if len(sources) != 1:
        names = ", ".join(_short(src, submission) for src in sources)
        return _zero(f"Submit exactly one answer file; this submission has {len(sources)}: {names}", visibility)
    data = gradescope_json(batch.results[0], visibility=visibility, show_answers=show_answers)
    data["output"] += also
    return data


def _short(line: str, root: str) -> str:
    return line.replace(str(Path(root)) + os.sep, "")


def _zero(message: str, visibility: str) -> dict:
    return {"score": 0, "output": message, "visibility": visibility, "tests": []}


def main(argv: list[str] | None = None) -> int:
    """The container's entry point: KEY SUBMISSION_DIR RESULTS_DIR [--metadata FILE] [--roster FILE]
    [--visibility V] [--show-answers]."""
    ap = argparse.ArgumentParser(prog="python -m examprep.grading.autograder")
    ap.add_argument("key")
    ap.add_argument("submission")
    ap.add_argument("results")
    ap.add_argument("--metadata", default=None)
    ap.add_argument("--roster", default=None)
    ap.add_argument("--visibility", default="visible")
    ap.add_argument("--show-answers", action="store_true")
    a = ap.parse_args(argv)
    data = results_for(a.key, a.submission, metadata=a.metadata, roster=a.roster, visibility=a.visibility,
                       show_answers=a.show_answers)
    atomic_write_text(Path(a.results) / "results.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

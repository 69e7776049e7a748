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

import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from examprep.errors import ExamprepError, ParamError

ROOT_DEFAULT = "/autograder"


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
# Gradescope runs this for every submission: the student's files are in $ROOT/submission.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$ROOT/results"
exec "$ROOT/venv/bin/python" -m examprep.grading.autograder "$ROOT/source/key.json" "$ROOT/submission" \
  "$ROOT/results" --visibility {visibility}{show_answers}
"""

README = """# examprep autograder for Gradescope

Made by `examprep gradescope-autograder` (examprep {version}, Python {python}) for the key
"{title}" ({parts} parts, {points:g} points).

Upload: in Gradescope, create a Programming Assignment, open Configure Autograder, choose
"Zip file upload", upload this zip as it is, and wait for the image to build (setup.sh installs
Python 3.11 when the image's is older, the pinned dependencies and examprep). Students submit one
answer file (.toml or .json, as `examprep sheet` or `generate --template` gives them; with
per-student variants it must keep its student_id or variant line).

Each part is one Gradescope test (score, max_score, feedback with the misconception named). Written
parts stay pending (0 points, no pass/fail) until you mark them by hand in Gradescope.

Files: setup.sh, run_autograder, key.json (the answer key: keep the zip private), requirements.txt
(the dependencies pinned to the versions it was built with), {wheel}.
"""


def pinned_requirements(dist: str = "examprep") -> list[str]:
    """name==version of every installed dependency of ``dist`` (recursively, extras left out,
    markers evaluated for this interpreter)."""
    from importlib import metadata

    from packaging.requirements import Requirement

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
    import shutil

    import examprep

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
    from importlib import metadata

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


def build_zip(key_path: str, out: str, *, visibility: str = "visible", show_answers: bool = False,
              force: bool = False) -> dict[str, Any]:
    """Write the autograder zip; returns what it holds (for the summary)."""
    from examprep import __version__, keys
    from examprep.fileio import atomic_write_bytes, read_user_bytes
    from examprep.grading.reports import VISIBILITIES

    if visibility not in VISIBILITIES:
        raise ParamError(f"--visibility: expected one of {', '.join(VISIBILITIES)}, got {visibility!r}")
    check_out(key_path, out, force)
    key = keys.read_key(key_path)
    key_bytes = read_user_bytes(key_path)
    problems = key.problems or next(iter(key.variants.values()), [])
    n_parts = sum(len(p.parts) for p in problems)
    points = sum(p.points for p in problems)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        wheel_bytes = wheel.read_bytes()
    requirements = pinned_requirements()
    files = {
        "setup.sh": SETUP_SH.replace("{wheel}", wheel.name),
        "run_autograder": RUN_AUTOGRADER.replace("{visibility}", visibility)
                                        .replace("{show_answers}", " --show-answers" if show_answers else ""),
        "requirements.txt": "\n".join(requirements) + "\n",
        "README.md": README.format(version=__version__, python=".".join(map(str, sys.version_info[:3])),
                                   title=key.title or Path(key_path).stem, parts=n_parts, points=points, wheel=wheel.name),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
            z.writestr(info, text)
        z.writestr(zipfile.ZipInfo("key.json", date_time=(2020, 1, 1, 0, 0, 0)), key_bytes)
        z.writestr(zipfile.ZipInfo(wheel.name, date_time=(2020, 1, 1, 0, 0, 0)), wheel_bytes)
    atomic_write_bytes(out, buf.getvalue())
    return {"wheel": wheel.name, "requirements": requirements, "parts": n_parts, "points": points}


def results_for(key_path: str, submission: str, *, visibility: str = "visible", show_answers: bool = False) -> dict:
    """Gradescope's results.json for the one answer file in ``submission``: never raises for a
    student's mistake (no file, several, unreadable): those are a 0 with the reason in output."""
    from examprep import keys
    from examprep.grading.batch import grade_batch
    from examprep.render.report import gradescope_json

    key = keys.read_key(key_path)
    try:
        batch = grade_batch(key, [submission])
    except ExamprepError as err:
        return _zero(f"{err}. Submit one answer file (.toml or .json).", visibility)
    if batch.unreadable:
        return _zero("Your answer file could not be read:\n" + "\n".join(_short(u, submission) for u in batch.unreadable),
                     visibility)
    sources = [r.source for r in batch.results] + [src for c in batch.conflicts for src in c.sources]
    if len(sources) != 1:
        names = ", ".join(_short(src, submission) for src in sources)
        return _zero(f"Submit exactly one answer file; this submission has {len(sources)}: {names}", visibility)
    return gradescope_json(batch.results[0], visibility=visibility, show_answers=show_answers)


def _short(line: str, root: str) -> str:
    return line.replace(str(Path(root)) + os.sep, "")


def _zero(message: str, visibility: str) -> dict:
    return {"score": 0, "output": message, "visibility": visibility, "tests": []}


def main(argv: list[str] | None = None) -> int:
    """The container's entry point: KEY SUBMISSION_DIR RESULTS_DIR [--visibility V] [--show-answers]."""
    import argparse

    from examprep.fileio import atomic_write_text

    ap = argparse.ArgumentParser(prog="python -m examprep.grading.autograder")
    ap.add_argument("key")
    ap.add_argument("submission")
    ap.add_argument("results")
    ap.add_argument("--visibility", default="visible")
    ap.add_argument("--show-answers", action="store_true")
    a = ap.parse_args(argv)
    data = results_for(a.key, a.submission, visibility=a.visibility, show_answers=a.show_answers)
    atomic_write_text(Path(a.results) / "results.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

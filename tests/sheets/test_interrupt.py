"""Ctrl-C while a roster's PDFs are being typeset: the terminal sends SIGINT to the whole process
group (the command and its PDF workers). The workers ignore it; the command stops them, prints one
line, exits 130 and leaves nothing behind: no output directory, no temporary files, no processes.
The signal is real and sent once the first worker has reported (the first progress line)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"),
                                reason="needs POSIX process groups and /proc to see the workers")

SECRET = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n"


def _live_members(pgid: int) -> list[int]:
    """Processes of the group that are still running (zombies, which have exited, excluded)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child before exec: SIGINT handled by default, as a shell gives a command it starts in
    the foreground — a suite started in the background by a non-interactive shell inherits it ignored,
    and the command would never see the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_the_pdfs_stops_everything_and_writes_nothing(tmp_path):
    (tmp_path / "roster.csv").write_text("id,name\n" + "".join(f"s{i},Student {i}\n" for i in range(24)))
    (tmp_path / "secret.txt").write_text(SECRET)
    out = tmp_path / "class"
    proc = subprocess.Popen(
        [sys.executable, "-m", "examprep", "sheet", "-r", "midterm", "-s", "1", "--roster", str(tmp_path / "roster.csv"),
         "--secret-file", str(tmp_path / "secret.txt"), "-f", "pdf,md", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True,
        preexec_fn=_ctrl_c_as_at_a_terminal)
    try:
        first = proc.stderr.readline()                  # blocks until the first PDF part is typeset
        assert first.startswith("typeset 1 of "), first + proc.stderr.read()
        os.killpg(proc.pid, signal.SIGINT)              # as a terminal's Ctrl-C: to the whole group
        stdout, stderr = proc.communicate(timeout=120)  # a hang guard, not a timing assertion
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("typeset ")]
    assert lines == ["interrupted: nothing was written"], stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr and stdout == ""
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["roster.csv", "secret.txt"]
    for _ in range(300):                               # the workers and the fork server go with it
        if not _live_members(proc.pid):
            break
        time.sleep(0.1)
    assert _live_members(proc.pid) == []


def test_long_sheets_report_their_progress(tmp_path):
    """A class build reports each variant and PDF part; without solutions=True it typesets the
    problems alone (no per-student worked solutions: one document's chunks and join)."""
    from examprep import sheets

    (tmp_path / "roster.csv").write_text("id\n" + "".join(f"s{i}\n" for i in range(10)))
    (tmp_path / "secret.txt").write_text(SECRET)
    seen = []
    sheets.make_sheet(recipe="cnn", seed=1, roster=str(tmp_path / "roster.csv"), secret_file=str(tmp_path / "secret.txt"),
                      formats="pdf", out=str(tmp_path / "o"), progress=lambda *a: seen.append(a))
    variants = [s for s in seen if s[0] == "variants"]
    parts = [s for s in seen if s[0] == "PDF parts"]
    assert variants == [("variants", n, 10) for n in range(1, 11)]
    chunks = -(-10 // sheets.PDF_CHUNK)
    total = chunks + 1                                 # the problems' chunks, then their join
    assert parts == [("PDF parts", n, total) for n in range(1, total + 1)]
    assert (tmp_path / "o" / "problems.pdf").is_file() and not (tmp_path / "o" / "solutions.pdf").exists()


KILLED_AT_RENAME = """
import os, signal, sys
from examprep.cli import main
real, calls = os.rename, []
def rename(*args, **kw):
    calls.append(args)
    if len(calls) == int(os.environ["KILL_AT_RENAME"]):
        os.kill(os.getpid(), signal.SIGKILL)              # no handler, no finally: as kill -9
    return real(*args, **kw)
os.rename = rename
sys.argv[0] = "examprep"
main()
"""


@pytest.mark.slow
def test_a_sheet_killed_between_its_renames_is_completed_by_the_next_run(tmp_path):
    """kill -9 after the old --out folder was set aside and before the new one took its name: the
    next run puts the killed run's complete folder in place (the instructor's notes in it), then
    builds its own; never a mix of two runs' files, and nothing hidden is left beside it."""
    (tmp_path / "secret.txt").write_text(SECRET)
    out = tmp_path / "class"

    def sheet(roster, kill_at=0):
        (tmp_path / "roster.csv").write_text("id\n" + "".join(f"{s}\n" for s in roster))
        return subprocess.run([sys.executable, "-c", KILLED_AT_RENAME, "sheet", "-r", "cnn", "-s", "1", "--roster",
                               str(tmp_path / "roster.csv"), "--secret-file", str(tmp_path / "secret.txt"), "-f", "md",
                               "--out", str(out), "--force"], capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "KILL_AT_RENAME": str(kill_at)})

    assert sheet(["s1", "s2", "s3"]).returncode == 0
    (out / "notes.txt").write_text("mine")
    killed = sheet(["s1", "s2"], kill_at=2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists()                                   # between the two renames
    hidden = sorted(p.name.split("-")[0] for p in tmp_path.iterdir() if p.name.startswith("."))
    assert hidden == [".class.examprep", ".class.examprep", ".examprep"]     # old, new, and the journal
    res = sheet(["s1", "s2"])
    assert res.returncode == 0, res.stderr
    assert "warning: completed the outputs an interrupted run had written (1 renamed)" in res.stderr
    assert sorted(p.name for p in (out / "answers").iterdir()) == ["s1.toml", "s2.toml"]
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["class", "roster.csv", "secret.txt"]

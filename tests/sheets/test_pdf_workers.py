"""The PDF worker processes start wherever the command is run, and a pool whose workers cannot
start falls back to threads instead of hanging."""
import multiprocessing.pool
import subprocess
import sys

from examprep.render import pdf


def test_sheet_runs_from_a_folder_holding_a_directory_named_examprep(tmp_path):
    # the worker processes once re-ran the console script, which imported the local "examprep"
    # folder as a namespace package, failed, and was restarted forever: the command hung
    (tmp_path / "examprep").mkdir()
    script = ("import sys; from examprep.cli import main; sys.argv = ['examprep', 'sheet', '--recipe', 'cnn', "
              f"'--seed', '3', '--out', {str(tmp_path / 'out')!r}]; main()")
    (tmp_path / "bin").mkdir()
    main_py = tmp_path / "bin" / "examprep"           # like the console script: a file elsewhere, run by path
    main_py.write_text(script + "\n")
    res = subprocess.run([sys.executable, str(main_py)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "out" / "problems.pdf").read_bytes().startswith(b"%PDF")
    assert "Traceback" not in res.stderr


def test_workers_that_never_answer_fall_back_to_threads(monkeypatch):
    class Silent:
        def get(self, timeout=None):
            raise multiprocessing.TimeoutError

    real = multiprocessing.pool.Pool.apply_async
    calls = []

    def apply_async(self, fn, args=(), kwds=None, *rest, **kw):
        calls.append(fn)
        if len(calls) == 1:              # the start-up probe
            return Silent()
        return real(self, fn, args, kwds or {}, *rest, **kw)

    monkeypatch.setattr(multiprocessing.pool.Pool, "apply_async", apply_async)
    monkeypatch.setattr(pdf.PdfWorkers, "STARTUP_TIMEOUT", 1)
    spec_before = getattr(sys.modules["__main__"], "__spec__", None)
    with pdf.PdfWorkers(2) as pool:
        assert pool._pool is None                      # threads
        assert pool.submit(sum, [1, 2, 3]).result() == 6
    assert getattr(sys.modules["__main__"], "__spec__", None) is spec_before


def test_an_error_in_the_parent_stops_idle_workers_without_hanging():
    # an idle worker waits for a task holding the task queue's lock: killing it before terminate()
    # (as a first fix of the Ctrl-C hang did) left the lock held and terminate() waited forever
    code = ("import time\nfrom examprep.render import pdf\n"
            "try:\n"
            "    with pdf.PdfWorkers(2) as pool:\n"
            "        assert pool.submit(int, '7').result() == 7\n"
            "        time.sleep(1.0)\n"
            "        raise RuntimeError('boom')\n"
            "except RuntimeError:\n"
            "    print('stopped')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout == "stopped\n", res.stderr

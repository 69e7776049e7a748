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


def _typst_threads() -> tuple[str | None, int | None]:
    """In a worker: RAYON_NUM_THREADS, and the threads the process runs after a compile (Typst's
    thread pool starts with its first compile and stays); None where /proc cannot tell."""
    import os

    pdf.compile_pdf("x")
    tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
    return os.environ.get("RAYON_NUM_THREADS"), tasks


def test_typst_lays_out_on_one_thread_per_worker_when_compiles_outnumber_workers(monkeypatch):
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)
    with pdf.PdfWorkers(2, tasks=5) as pool:            # a class: every worker busy with a compile of its own
        setting, threads = pool.submit(_typst_threads).result()
    assert setting == "1" and threads in (None, 2)      # the worker's own thread and Typst's one
    with pdf.PdfWorkers(2, tasks=2) as pool:            # one sheet: Typst keeps its thread per CPU
        assert pool.submit(_typst_threads).result()[0] is None


def test_a_typst_thread_count_the_user_set_is_kept():
    # in a process of its own: the workers inherit the environment the fork server started with
    import os

    code = ("import os\nfrom examprep.render import pdf\n"
            "with pdf.PdfWorkers(2, tasks=9) as pool:\n"
            "    print(pool.submit(os.getenv, 'RAYON_NUM_THREADS').result())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, RAYON_NUM_THREADS="3"))
    assert res.returncode == 0 and res.stdout == "3\n", res.stderr[-2000:]

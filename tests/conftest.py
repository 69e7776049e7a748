import os
import sys

# One thread per core: each pytest-xdist worker (one per core) gets its share of the cores for
# torch's OpenMP threads and numpy's OpenBLAS threads, and so do the commands the tests run in
# subprocesses, which inherit it. Left alone, every worker's libraries start a thread per core, and
# threads whose core the other worker keeps busy spin-wait at every operation: the torch-heavy test
# files took twice the CPU time. Set before numpy or torch is imported (neither is, yet, in a
# worker); a value already in the environment is kept. Results do not change: the suite compares
# whatever a BLAS sums to 1e-12 relative, and the trainer's tests already ran on one thread.
if os.environ.get("PYTEST_XDIST_WORKER"):
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, str(max(1, (os.cpu_count() or 1) // _workers)))

# The test modules' bytecode (pytest's assertion-rewritten copies) is cached in tests/**/__pycache__
# even where PYTHONDONTWRITEBYTECODE is set: each worker otherwise rewrote and compiled all 150
# test files on every run (12.4 CPU-s of collection instead of 5.2). Set before any test module is
# imported; pytest checks it at each import. The caches are ignored by git.
sys.dont_write_bytecode = False

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# A fixed profile in CI: derandomized, so a run is reproducible; "dev" explores more.
settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    # Once per run, in the main process (pytest-xdist's workers have `workerinput`): byte-compile
    # examprep, so that the suite's many `python -m examprep` subprocesses (and the workers) load it
    # instead of compiling every module they import again. Where PYTHONDONTWRITEBYTECODE is set no
    # process writes .pyc files, and the suite spent 0.4 CPU-s compiling in every short command.
    # compileall skips what is up to date; Python checks each file against its source's mtime and
    # size, so a cache left by an older source is never used. A tree it cannot write is left as it is.
    if hasattr(config, "workerinput"):
        return
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("examprep")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            compileall.compile_dir(folder, quiet=2, workers=1)
        except OSError:
            pass


@pytest.fixture(scope="session")
def tiny_dates(tmp_path_factory):
    """A tiny dates model trained for 40 steps (a few seconds): real weights, real checkpoint files.
    Shared by the reference-model tests; a test that alters checkpoint files works on a copy.

    Trained once per run: pytest-xdist's workers share one temporary root (the parent of each
    worker's own), and the first worker to get there trains while the others wait on a lock."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    out, done = root / "tiny-dates" / "dates", root / "tiny-dates.done"
    with open(root / "tiny-dates.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _train_tiny_dates(out)
            done.touch()
    return out


def _train_tiny_dates(out):
    # In this process, through the command itself (a subprocess cost a second torch import, more
    # than the training), on one thread so that the weights are the same on any machine and load;
    # the caller's thread count and random state are left as they were.
    import torch
    from typer.testing import CliRunner

    from examprep.cli import app

    threads = torch.get_num_threads()
    try:
        with torch.random.fork_rng():
            res = CliRunner().invoke(app, ["train", "--steps", "40", "--d-model", "32", "--layers", "1", "--heads", "2",
                                           "--d-ff", "64", "--out", str(out), "--eval-every", "40", "--eval-size", "50",
                                           "--seed", "3", "--threads", "1"])
    finally:
        torch.set_num_threads(threads)
    assert res.exit_code == 0, res.output


# The files that take longest start first, longest first; the rest follow in their usual order
# (each under 3 CPU-s). pytest-xdist's workers (pyproject's addopts: --dist loadfile,
# --no-loadscope-reorder) take whole files in this order, so the run ends on small files that keep
# both workers busy to the last second instead of one long file while the other worker idles. The
# figures: CPU seconds of each file on the project's 2-core machine (Dec 2026; PDF compiles in the
# worker processes of examprep.render.pdf not counted, so the sheets files sit a little higher).
# Only the order changes; every test runs.
LONGEST_FIRST = (
    "tests/train/test_train.py",          # 60 s: the dates default reaching its goal (52 s)
    "tests/train/test_distributed.py",    # 17 s: two torchrun processes
    "tests/sheets/test_outputs.py",       # 14 s: the midterm's PDFs
    "tests/sheets/test_split.py",         # 12 s: class PDFs split per student
    "tests/train/test_bench.py",          # 12 s: the trainer's benchmarks at a tiny size
    "tests/grading/test_analysis_cli.py",  # 11 s: a class of 40 graded
    "tests/test_trained_model.py",        # 9 s
    "tests/sheets/test_page_breaks.py",   # 9 s
    "tests/train/test_model.py",          # 8 s
    "tests/sheets/test_decimal_comma.py",  # 8 s
    "tests/train/test_cli_train.py",      # 7 s (and waits for Ctrl-C)
    "tests/sheets/test_interrupt.py",     # 5 s (and waits for Ctrl-C)
    "tests/train/test_rnn.py",            # 6 s
    "tests/generators/test_framework.py",  # 6 s
    "tests/render/test_typst_math.py",    # 5 s
    "tests/grading/test_autograder.py",   # 5 s
    "tests/render/test_qti21.py",         # 5 s
    "tests/verify/test_references.py",    # 4 s
    "tests/generators/test_sweep_digest.py",  # 4 s
    "tests/render/test_fonts.py",         # 3 s
    "tests/test_layout.py",               # 3 s
    "tests/engine/test_network.py",       # 3 s
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))

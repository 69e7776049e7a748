"""The trainer's tests run only where torch is installed (pip install -e '.[train]')."""
import pytest

torch = pytest.importorskip("torch", reason="the trainer's tests need torch: pip install -e '.[train]'")


@pytest.fixture(autouse=True)
def _seeded_single_thread():
    # Small models gain nothing from a second thread, and one thread keeps the timings steady on a
    # shared machine (OpenMP threads spin when the cores are busy).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)

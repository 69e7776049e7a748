import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings

# A fixed profile in CI: derandomized, so a run is reproducible; "dev" explores more.
settings.register_profile(
    "ci", max_examples=40, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def tiny_dates(tmp_path_factory):
    """A tiny dates model trained for 40 steps (a few seconds): real weights, real checkpoint files.
    Shared by the reference-model tests; a test that alters checkpoint files works on a copy."""
    out = tmp_path_factory.mktemp("tiny") / "dates"
    res = subprocess.run([sys.executable, "-m", "examprep", "train", "--steps", "40", "--d-model", "32", "--layers", "1",
                          "--heads", "2", "--d-ff", "64", "--out", str(out), "--eval-every", "40", "--eval-size", "50",
                          "--seed", "3"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return out

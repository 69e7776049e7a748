"""Every quiz test gets its own history: EXAMPREP_HOME points into a temporary directory."""
import pytest


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    path = tmp_path / "home"
    monkeypatch.setenv("EXAMPREP_HOME", str(path))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return path

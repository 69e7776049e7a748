"""The sample sheets in problems/ and solutions/ (bundled recipes at a fixed seed): a showcase and
a regression guard. A change that alters them must be deliberate; regenerate with

    EXAMPREP_UPDATE_SAMPLES=1 python -m pytest tests/sheets/test_samples.py

(which also rewrites the sample PDFs). The key's examprep_version is not compared.
"""
import json
import os
from pathlib import Path

import pytest

from examprep import sheets

ROOT = Path(__file__).resolve().parents[2]


def _comparable(path: str, data: bytes):
    if path.endswith(".json"):
        d = json.loads(data)
        d.pop("examprep_version", None)
        return d
    return data.decode("utf-8")


def test_samples_match_a_fresh_run():
    if os.environ.get("EXAMPREP_UPDATE_SAMPLES"):
        for rel, data in sheets.sample_outputs(with_pdf=True).items():
            (ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
            (ROOT / rel).write_bytes(data)
        pytest.skip("samples rewritten")
    fresh = sheets.sample_outputs(with_pdf=False)
    assert len(fresh) == 3 * len(sheets.SAMPLE_RECIPES)
    for rel, data in fresh.items():
        stored = ROOT / rel
        assert stored.exists(), f"{rel} is missing; regenerate the samples (see this module's doc)"
        assert _comparable(rel, stored.read_bytes()) == _comparable(rel, data), (
            f"{rel} differs from a fresh run: a generator or renderer changed; regenerate the samples if intended")
    for name in sheets.SAMPLE_RECIPES:
        for rel in (f"problems/{name}.pdf", f"solutions/{name}.pdf"):
            assert (ROOT / rel).read_bytes().startswith(b"%PDF-"), rel

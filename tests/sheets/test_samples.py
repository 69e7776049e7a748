"""The sample sheets in problems/ and solutions/ (bundled recipes at a fixed seed): a showcase and
a regression guard. A change that alters them must be deliberate; regenerate with

    EXAMPREP_UPDATE_SAMPLES=1 python -m pytest tests/sheets/test_samples.py

(which also rewrites the sample PDFs). The key's examprep_version is not compared.

Numbers in the keys are compared to 1e-12 relative, never bit for bit: a BLAS dot product (the
positional-encoding problem's PE(p)·PE(p + k)) sums in an order that depends on the CPU's kernel,
so its last bits differ between machines. The Markdown is compared as text: it prints 4
significant figures, which a last-bit difference does not reach.
"""
import json
import math
import os
from pathlib import Path

import pytest

from examprep import sheets

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-12


def _numbers(value) -> list[float]:
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return [float(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def json_mismatch(stored, fresh, where: str = "", scale: float | None = None) -> str | None:
    """Where two JSON values differ beyond round-off, or None: the same structure, the same
    strings, booleans and nulls, integers equal, and floats equal to RTOL relative, with an
    absolute floor of RTOL × the largest magnitude of the numeric array they sit in (RTOL for a
    lone number), so a cancelled 0 and 1e-17 count as equal."""
    if isinstance(stored, dict) and isinstance(fresh, dict):
        if stored.keys() != fresh.keys():
            return f"{where or 'top'}: keys {sorted(stored.keys() ^ fresh.keys())} in only one of the two"
        for k in stored:
            found = json_mismatch(stored[k], fresh[k], f"{where}.{k}", None)
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(fresh, list):
        if len(stored) != len(fresh):
            return f"{where}: {len(stored)} entries stored, {len(fresh)} now"
        nums = _numbers(stored)
        if scale is None and nums:
            scale = max(abs(x) for x in nums)
        for i, (a, b) in enumerate(zip(stored, fresh)):
            found = json_mismatch(a, b, f"{where}[{i}]", scale)
            if found:
                return found
        return None
    number = (int, float)
    if isinstance(stored, number) and isinstance(fresh, number) and not isinstance(stored, bool) \
            and not isinstance(fresh, bool):
        if isinstance(stored, int) and isinstance(fresh, int):
            ok = stored == fresh                     # counts and sizes are exact
        else:
            ok = math.isclose(stored, fresh, rel_tol=RTOL, abs_tol=RTOL * (1.0 if scale is None else scale))
        return None if ok else f"{where}: {stored!r} stored, {fresh!r} now"
    if type(stored) is not type(fresh) or stored != fresh:
        return f"{where}: {stored!r} stored, {fresh!r} now"
    return None


def _mismatch(path: str, stored: bytes, fresh: bytes) -> str | None:
    if path.endswith(".json"):
        a, b = json.loads(stored), json.loads(fresh)
        a.pop("examprep_version", None)
        b.pop("examprep_version", None)
        return json_mismatch(a, b)
    return None if stored.decode("utf-8") == fresh.decode("utf-8") else "the text differs"


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
        found = _mismatch(rel, stored.read_bytes(), data)
        assert found is None, (f"{rel} differs from a fresh run ({found}): a generator or renderer changed; "
                               "regenerate the samples if intended")
    for name in sheets.SAMPLE_RECIPES:
        for rel in (f"problems/{name}.pdf", f"solutions/{name}.pdf"):
            assert (ROOT / rel).read_bytes().startswith(b"%PDF-"), rel


def test_sample_comparison_ignores_last_bits_only():
    # the pair seen on two CPUs: ...128 stored, ...117 computed (2 ulps apart)
    assert json_mismatch({"x": 0.009557537148542128}, {"x": 0.009557537148542117}) is None
    assert json_mismatch([[1.0, 1e-17], [2.0, 3.0]], [[1.0, 0.0], [2.0, 3.0 * (1 + 1e-15)]]) is None
    assert json_mismatch({"x": 0.0095575}, {"x": 0.0095576}) is not None        # a real change
    assert json_mismatch({"x": 1e-17}, {"x": 0.0}) is None
    assert json_mismatch({"x": 1e-9}, {"x": 0.0}) is not None
    assert json_mismatch({"n": 3}, {"n": 4}) is not None                         # integers are exact
    assert json_mismatch({"s": "a"}, {"s": "b"}) is not None
    assert json_mismatch({"a": [1, 2]}, {"a": [1, 2, 3]}) is not None
    assert json_mismatch({"a": 1}, {"b": 1}) is not None
    assert json_mismatch({"a": True}, {"a": 1}) is not None

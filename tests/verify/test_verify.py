"""`examprep verify`: agreement on every topic, and a deliberately wrong formula is caught."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from examprep import engine  # noqa: E402
from examprep.cli import app  # noqa: E402
from examprep.verify import verify, REFERENCES  # noqa: E402

runner = CliRunner()


def test_verify_passes_on_every_topic_torch_computes():
    rows = verify(instances=8, seed=1)
    assert {r.topic for r in rows} == set(REFERENCES)
    assert all(r.passed for r in rows), [r for r in rows if not r.passed]


def test_verify_cli_prints_a_table_and_exits_zero():
    res = runner.invoke(app, ["verify", "-n", "3", "--no-color"])
    assert res.exit_code == 0, res.output
    assert "gru-cell" in res.output and "pass" in res.output and "FAIL" not in res.output


def test_a_wrong_gru_blend_is_caught(monkeypatch):
    right = engine.gru_cell

    def wrong(*args, **kwargs):        # always PyTorch's blend, whatever the convention asks
        kwargs["convention"] = "pytorch"
        return right(*args, **kwargs)

    monkeypatch.setattr(engine, "gru_cell", wrong)
    res = runner.invoke(app, ["verify", "-n", "10", "--topic", "gru-cell", "--json"])
    assert res.exit_code == 1
    row = json.loads(res.output)[0]
    assert not row["passed"] and row["failures"] > 0 and row["first_failure"]["answer"] == "h_new"


def test_a_missing_sqrt_dk_is_caught(monkeypatch):
    right = engine.attention

    def unscaled(*args, **kwargs):
        if kwargs.get("scale") is None and kwargs.get("score", "scaled-dot") == "scaled-dot":
            kwargs["scale"] = 1.0
        return right(*args, **kwargs)

    monkeypatch.setattr(engine, "attention", unscaled)
    rows = verify(instances=20, seed=2, topics=["attention"])
    assert not rows[0].passed


def test_an_engine_crash_counts_as_a_failure(monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(engine, "softmax", broken)
    row = verify(instances=3, topics=["softmax"])[0]
    assert row.failures == 3 and "ZeroDivisionError" in row.first_failure["error"]


def test_unknown_topic_is_a_usage_error():
    res = runner.invoke(app, ["verify", "--topic", "nope"])
    assert res.exit_code == 2 and "no torch reference" in res.output


def test_compare_reports_shape_mismatch_as_failure():
    from examprep.verify import _compare
    assert _compare(np.zeros(2), np.zeros(3))[2] is False


def test_a_negative_seed_is_a_usage_error_not_a_traceback():
    res = runner.invoke(app, ["verify", "--seed", "-1"])
    assert res.exit_code == 2 and "--seed" in res.output and "Traceback" not in res.output


def test_a_topic_given_twice_runs_once_and_the_table_fits_80_columns():
    res = runner.invoke(app, ["verify", "-n", "2", "--topic", "positional-encoding-relative",
                              "--topic", "positional-encoding-relative", "--json"])
    assert res.exit_code == 0, res.output
    assert [r["topic"] for r in json.loads(res.output)] == ["positional-encoding-relative"]
    res = runner.invoke(app, ["verify", "-n", "2", "--topic", "positional-encoding-relative", "--topic", "attention",
                              "--no-color"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "positional-encoding-relative " in res.output and "…" not in res.output
    assert "result" in res.output and all(len(line) <= 80 for line in res.output.splitlines())


def test_verify_leaves_the_callers_torch_thread_count_alone():
    import torch

    # a count of our own, neither 1 (what the command sets while it works) nor the pytest-xdist
    # worker's pinned count, so that a command that does not restore it fails here
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        assert runner.invoke(app, ["verify", "-n", "1", "--topic", "attention"]).exit_code == 0
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)

"""Shared by the tests that check the engine against the torch references (torch imported on use)."""
import numpy as np


def assert_agrees(topic: str, params: dict) -> None:
    from examprep import solve
    from examprep.verify import REFERENCES

    ours = solve.answer_only(topic, params)
    theirs = REFERENCES[topic](params)
    for name, want in theirs.items():
        if isinstance(want, list) and len({np.shape(v) for v in want}) > 1:      # ragged: a network's shapes
            assert [list(v) for v in ours[name]] == [list(v) for v in want], f"{topic}.{name} for {params}"
            continue
        got = np.asarray(ours[name], dtype=float)
        want = np.asarray(want, dtype=float)
        assert got.shape == want.shape, f"{topic}.{name}: shape {got.shape} vs torch {want.shape} for {params}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11, err_msg=f"{topic}.{name} for {params}")

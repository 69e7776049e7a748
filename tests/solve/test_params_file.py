"""`solve --params @FILE` reads its file through fileio: a named pipe is refused at once in one line
(open() on a pipe with no writer waits forever)."""
from __future__ import annotations

import os
import threading

import pytest

from examprep.errors import ParamError
from examprep.solve.contract import read_params


def _within(seconds, fn):
    """fn()'s result or exception, or a failure when it has not returned after ``seconds`` (a hang)."""
    out = {}

    def call():
        try:
            out["value"] = fn()
        except BaseException as err:           # handed back to the test
            out["error"] = err

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s"
    return out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_params_from_a_named_pipe_are_refused_in_one_line_without_waiting(tmp_path):
    fifo = tmp_path / "params.json"
    os.mkfifo(fifo)
    out = _within(5, lambda: read_params(f"@{fifo}"))
    assert isinstance(out.get("error"), ParamError)
    assert str(out["error"]) == f"--params {fifo}: a named pipe, not a regular file"


def test_params_from_a_file_that_is_not_utf8_name_the_line(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(b'{"x": [1, 2],\n "h": "\xff"}')
    with pytest.raises(ParamError, match=rf"^--params {f}: not UTF-8 text \(line 2\)$"):
        read_params(f"@{f}")

"""The one setting of a sheet made with --decimal-comma, for the block that handles it: the parser
reads its answers with decimal commas and ';' between list entries (examprep.answers.parse), and
the renderers print its numbers so (examprep.render). A context variable, so that concurrent work
(threads, the quiz's timer) keeps its own. Standard library only: imported by both layers."""
from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

_ON: contextvars.ContextVar[bool] = contextvars.ContextVar("decimal_comma", default=False)


@contextlib.contextmanager
def decimal_comma(on: bool = True) -> Iterator[None]:
    """Within the block, answers are read with decimal commas ("0,245") and ";" between list
    entries ("[0,1; 0,9]", "[[1; 2]; [3; 4]]"), and sheets print their numbers so, as a sheet made
    with --decimal-comma asks for."""
    token = _ON.set(bool(on))
    try:
        yield
    finally:
        _ON.reset(token)


def decimal_comma_on() -> bool:
    return _ON.get()

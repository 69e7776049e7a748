"""One table per area (issue 37, item 5): each verify/<area>.py ends with its TOPICS table, a row
per solve topic with its torch reference and its random instances, and verify/__init__.py only
gathers them (no parallel dicts to keep in step)."""
import inspect
from pathlib import Path

import pytest

pytest.importorskip("torch")

import examprep.verify as verify  # noqa: E402
from examprep import solve  # noqa: E402
from examprep.verify._torch import Reference  # noqa: E402

AREA_FILES = sorted(p.stem for p in Path(verify.__file__).parent.glob("*.py") if not p.stem.startswith("_"))


def test_every_area_module_is_gathered_and_declares_its_own_topics():
    assert sorted(a.__name__.rpartition(".")[2] for a in verify.AREAS) == [s for s in AREA_FILES if s != "__init__"]
    seen: dict[str, str] = {}
    for area in verify.AREAS:
        assert area.TOPICS, area.__name__
        for topic, row in area.TOPICS.items():
            assert isinstance(row, Reference), topic
            assert topic not in seen, f"{topic} in {seen.get(topic)} and {area.__name__}"    # a merge would drop one
            seen[topic] = area.__name__
            # the row's functions are the area's own
            assert {inspect.getmodule(f).__name__ for f in row} == {area.__name__}, topic
    assert seen.keys() == verify.TOPICS.keys() == verify.REFERENCES.keys()
    assert len(seen) >= 38 and set(seen) <= set(solve.TOPICS)


def test_the_package_keeps_no_second_table():
    assert not hasattr(verify, "RANDOM")
    for topic, row in verify.TOPICS.items():
        assert verify.REFERENCES[topic] is row.reference

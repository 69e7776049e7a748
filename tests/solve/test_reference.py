"""docs/topics.md, the solve contract's reference, is written from the solve tables: the checked-in
page is the generated text (regenerate it with `python -m examprep solve --reference > docs/topics.md`),
every topic, parameter, answer, mistake and ECF rule is on it, and each refusal it shows is refused."""
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import solve
from examprep.cli import app
from examprep.solve.contract import Refusal, Topic
from examprep.solve.reference import reference_markdown, refusal_error, topic_section

PAGE = Path(__file__).resolve().parents[2] / "docs" / "topics.md"


def test_the_checked_in_page_is_the_generated_reference():
    assert PAGE.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/topics.md is out of date: python -m examprep solve --reference > docs/topics.md")


def test_solve_reference_prints_the_page():
    res = CliRunner().invoke(app, ["solve", "--reference"])
    assert res.exit_code == 0, res.output
    assert res.output == reference_markdown()


@pytest.mark.parametrize("extra", [["gru-cell"], ["--list"], ["--json"], ["--batch"], ["--params", "{}"]])
def test_solve_reference_with_anything_else_is_one_usage_line(extra):
    res = CliRunner().invoke(app, ["solve", "--reference", *extra])
    assert res.exit_code == 2 and res.output == (
        "error: --reference prints every topic's reference as Markdown; give no TOPIC, --params, --batch, --list or --json\n")


def test_every_topic_parameter_answer_mistake_and_ecf_rule_is_on_the_page():
    text = reference_markdown()
    for t in solve.TOPICS.values():
        section = text[text.index(f"\n## {t.name}\n"):]
        section = section[:section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
        for p in t.params:
            assert f"| `{p.name}` |" in section, (t.name, p.name)
        for a in t.answers:
            assert f"`{a}`" in section, (t.name, a)
        for answer, mistakes in t.mistakes.items():
            for m in mistakes:
                assert re.search(rf"- `{re.escape(m.id)}` \(.*\): ", section), (t.name, answer, m.id)
        for answer, rules in t.ecf.items():
            assert all(f"`{e.op}`" in section for e in rules), (t.name, answer)


def test_a_section_shows_defaults_conventions_mistakes_and_refusals():
    text = topic_section(solve.get_topic("gru-cell"))
    assert '| `convention` | "lecture": h\' = (1−z)⊙h + z⊙n; "pytorch": h\' = (1−z)⊙n + z⊙h | `"lecture"` |' in text
    assert "| `x` | vector (I) | required |" in text and "| `bias_ih` | vector (3H); zeros when omitted | optional |" in text
    assert "- convention: lecture: h' = (1−z)⊙h + z⊙n" in text
    assert "- `h_new`; ECF: `gru-blend`" in text
    assert "  - `swapped-blend` (the engine with convention = \"pytorch\"): You blended with z" in text
    assert "  - `tanh-gate` (computed over the problem's trace): Gates use the sigmoid σ" in text
    pool = topic_section(solve.get_topic("max-pool"))
    assert ("  $ examprep solve max-pool --params '{\"input\": [1, 2, 3, 4], \"kernel_size\": 2, \"padding\": 2}'\n"
            "  error: padding: pooling padding must be at most half the kernel size") in pool
    # a topic whose conventions read a required parameter says so instead of guessing
    assert "(They depend on `name`, which has no default" in topic_section(solve.get_topic("activation"))


REFUSALS = [(t, r) for t in solve.TOPICS.values() for r in t.refuses]


@pytest.mark.parametrize("topic, refusal", REFUSALS, ids=[f"{t.name}-{i}" for i, (t, _) in enumerate(REFUSALS)])
def test_each_refusal_on_the_page_is_refused_with_one_line(topic, refusal):
    message = refusal_error(topic, refusal.example)
    assert message and "\n" not in message


def test_a_refusal_whose_example_is_answered_stops_the_page():
    t = solve.get_topic("max-pool")
    fake = Topic(**{**{f: getattr(t, f) for f in t.__dataclass_fields__},
                    "refuses": (Refusal("nothing", {"input": [1, 2, 3, 4], "kernel_size": 2}),)})
    with pytest.raises(AssertionError, match="was answered"):
        topic_section(fake)

"""The registry: every topic is listed by `solve --list`."""

from examprep import solve


def test_new_topics_are_listed_by_solve_list():
    names = {t["topic"] for t in __import__("json").loads(solve.topics_json())}
    assert {"residual", "residual-stack", "rnn-unroll", "vanishing-gradient"} <= names


NEW_TOPICS = ("multi-head-shapes", "cross-attention", "causal-mask", "teacher-forcing", "rope-score",
              "positional-encoding-relative", "lora-memory", "training-time")


def test_new_topics_are_listed_by_solve():
    listed = {t["topic"] for t in __import__("json").loads(solve.topics_json())}
    assert set(NEW_TOPICS) <= listed

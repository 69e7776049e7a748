"""`examprep solve` from the command line, as the contract (docs/topics.md) states it."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.solve import TOPICS

runner = CliRunner()
GRU = {"x": [1.0], "h": [0.5], "weight_ih": [[0.5], [1.0], [1.0]], "weight_hh": [[-1.0], [1.0], [2.0]],
       "bias_ih": [0, 0, 0], "bias_hh": [0, 0, 0.5]}
CASES = Path(__file__).resolve().parents[2].parent / "shared" / "cases"


def run(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def test_human_view_shows_each_step_with_formula_and_values():
    res = run("solve", "gru-cell", "--params", json.dumps(GRU), "--no-color")
    assert res.exit_code == 0, res.output
    for text in ("Reset gate", "Update gate", "Candidate", "New hidden state (lecture convention)",
                 "0.817574", "0.941376", "0.860857", "(1 - z) ⊙ h + z ⊙ n", "answer", "conventions"):
        assert text in res.output


def test_human_view_shows_matrices_as_aligned_tables():
    res = run("solve", "attention", "--params", json.dumps({"query": [[1, 0], [0, 1]], "key": [[1, 0], [1, 1]],
                                                            "value": [[1, 2], [3, 4]], "causal": True}), "--no-color")
    assert res.exit_code == 0
    assert "│ 0.330238 │ 0.669762 │" in res.output and "−∞" in res.output


def test_json_output_follows_the_contract():
    res = run("solve", "gru-cell", "--params", json.dumps(GRU | {"convention": "pytorch"}), "--json")
    assert res.exit_code == 0
    out = json.loads(res.output)
    assert set(out) == {"topic", "params", "answer", "steps", "conventions"}
    assert out["topic"] == "gru-cell" and out["params"]["convention"] == "pytorch"
    assert set(out["answer"]) == {"r", "z", "n", "h_new"}
    assert out["answer"]["h_new"] == pytest.approx([0.580518], rel=1e-5)
    for step in out["steps"]:
        assert set(step) == {"title", "formula", "values"} and step["formula"]
    assert "pytorch" in out["conventions"]["convention"]


def test_json_never_holds_nan_or_infinity():
    params = {"query": [[1], [1]], "key": [[0], [1]], "value": [[10], [20]], "mask": [[1, 0], [0, 0]], "scale": 1}
    res = run("solve", "attention", "--params", json.dumps(params), "--json")
    assert res.exit_code == 0
    assert "Infinity" not in res.output and "NaN" not in res.output
    out = json.loads(res.output)
    masked = next(s for s in out["steps"] if "masked_scores" in s["values"])
    assert masked["values"]["masked_scores"] == [[0.0, None], [None, None]]
    assert out["answer"]["output"] == [[10.0], [0.0]]


def test_batch_answers_every_line_in_order_and_rejects_bad_ones():
    lines = [
        {"id": "a", "topic": "softmax", "params": {"logits": [0, 0]}},
        {"id": "b", "topic": "nope", "params": {}},
        "this is not json",
        {"id": 4, "topic": "lora", "params": {"d": 512, "k": 512, "r": 8}},
        {"id": "e", "topic": "softmax", "params": {"logits": [1, "x"]}},
        {"id": "f", "params": {}},
    ]
    feed = "\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n\n"
    res = run("solve", "--batch", input=feed)
    assert res.exit_code == 1
    out = [json.loads(line) for line in res.output.splitlines()]
    assert len(out) == 6
    assert out[0] == {"id": "a", "answer": {"probs": [0.5, 0.5]}}
    assert out[1]["id"] == "b" and "unknown topic" in out[1]["error"]
    assert out[2]["id"] is None and "line 3" in out[2]["error"] and "invalid JSON" in out[2]["error"]
    assert out[3] == {"id": 4, "answer": {"trainable_params": 8192, "full_params": 262144, "fraction": 0.03125}}
    assert out[4]["id"] == "e" and "logits" in out[4]["error"]
    assert out[5]["id"] == "f" and "topic" in out[5]["error"]


def test_batch_all_good_exits_zero_and_usage_error_exits_two():
    good = json.dumps({"id": 1, "topic": "lora", "params": {"d": 4, "k": 4, "r": 1}}) + "\n"
    assert run("solve", "--batch", input=good).exit_code == 0
    assert run("solve", "softmax", "--batch", input=good).exit_code == 2


def test_batch_rejects_nan_literals():
    res = run("solve", "--batch", input='{"id": 1, "topic": "softmax", "params": {"logits": [NaN, 1]}}\n')
    assert res.exit_code == 1 and "error" in json.loads(res.output)


def test_list_names_every_topic_with_parameters_and_defaults():
    res = run("solve", "--list", "--no-color")
    assert res.exit_code == 0
    for name in TOPICS:
        assert name in res.output
    listing = json.loads(run("solve", "--list", "--json").output)
    gru = next(t for t in listing if t["topic"] == "gru-cell")
    params = {p["name"]: p["default"] for p in gru["params"]}
    assert params["convention"] == "lecture" and params["reset"] == "after" and params["x"] == "required"
    assert gru["answer"] == ["r", "z", "n", "h_new"]


def test_list_json_keeps_answer_names_and_adds_each_answers_mistakes_and_ecf_rules():
    listing = {t["topic"]: t for t in json.loads(run("solve", "--list", "--json").output)}
    gru = listing["gru-cell"]
    assert gru["answer"] == ["r", "z", "n", "h_new"]                 # still a list of names
    assert set(gru) == {"topic", "title", "params", "answer", "mistakes", "ecf"}
    assert gru["mistakes"]["h_new"][0] == {
        "id": "swapped-blend", "why": "You blended with z on the old state — that is PyTorch's convention; "
                                      "the lecture's is h' = (1 − z)⊙h + z⊙n."}
    assert [m["id"] for m in gru["mistakes"]["r"]] == ["swapped-gates", "tanh-gate"]
    assert gru["ecf"] == {"r": [], "z": [], "n": [{"op": "gru-candidate", "output": None}],
                          "h_new": [{"op": "gru-blend", "output": None}]}
    assert [m["id"] for m in listing["softmax"]["mistakes"]["probs"]] == ["exp-only", "sigmoid-each"]
    assert listing["softmax"]["ecf"] == {"probs": []}                # an answer without a rule: an empty list
    assert listing["residual-stack"]["mistakes"]["outputs"] == []    # and without mistakes
    rnn = listing["rnn-cell"]              # a worked step's value with mistakes of its own is listed after the answers
    assert rnn["answer"] == ["h_new"] and list(rnn["mistakes"]) == ["h_new", "pre_activation"]
    assert rnn["ecf"]["h_new"] == [{"op": "solve:activation", "output": "output"}]
    declared = sum(bool(t["mistakes"]) and any(t["mistakes"].values()) for t in listing.values())
    assert declared == sum(1 for t in TOPICS.values() if t.mistakes)


def test_list_topic_shows_ecf_rules_with_the_answer_they_pick_and_step_values_with_mistakes():
    lines = run("solve", "--list", "rnn-cell", "--no-color").output.splitlines()
    assert "  h_new  ECF: solve:activation → output (from pre_activation)" in lines
    assert "  pre_activation  a worked step's value, not an answer" in lines
    assert "      one-bias  Both biases are added: b_ih and b_hh." in lines


@pytest.mark.parametrize("args,fragment", [
    (["solve", "gru-cell", "--params", "{not json"], "invalid JSON at line 1"),
    (["solve", "gru-cell", "--params", "[1, 2]"], "JSON object"),
    (["solve", "gru", "--params", "{}"], "did you mean gru-cell"),
    (["solve", "gru-cell", "--params", json.dumps(GRU | {"convention": "keras"})], "convention"),
    (["solve", "conv-output-size", "--params", '{"input_size": 32, "kernel_size": 3, "stride": 0}'], "stride"),
    (["solve", "gru-cell", "--params", "@/nonexistent/file.json"], "--params /nonexistent/file.json: no such file"),
    (["solve"], "missing TOPIC"),
])
def test_bad_input_exits_two_with_one_line_and_no_traceback(args, fragment):
    res = run(*args)
    assert res.exit_code == 2
    assert fragment in res.output
    assert "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1


def test_params_from_a_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(GRU), encoding="utf-8")
    res = run("solve", "gru-cell", "--params", f"@{f}", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["answer"]["h_new"] == pytest.approx([0.860857], rel=1e-5)


def _subprocess(args, **kw):
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, **kw)


@pytest.mark.parametrize("argv", [["--help"], ["solve", "--help"]])
def test_help_imports_neither_torch_nor_sympy(argv):
    code = ("import sys; sys.argv = ['examprep', *%r]\n"
            "from examprep.cli import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('torch', 'sympy') if m in sys.modules]\n"
            "print('IMPORTED', bad)" % (argv,))
    res = _subprocess(["-c", code])
    assert "IMPORTED []" in res.stdout, res.stdout + res.stderr


def test_python_dash_m_runs_the_cli():
    res = _subprocess(["-m", "examprep", "solve", "lora", "--params", '{"d": 8, "k": 8, "r": 2}', "--json"])
    assert res.returncode == 0 and json.loads(res.stdout)["answer"]["trainable_params"] == 32


@pytest.mark.skipif(not (CASES / "run").exists(), reason="../shared/cases is not beside this checkout")
def test_public_acceptance_cases_all_pass():
    res = _subprocess([str(CASES / "run")])
    assert res.returncode == 0, res.stdout + res.stderr
    assert ", 0 failed" in res.stdout


@pytest.mark.skipif(not (CASES / "exam-topics.json").exists(), reason="../shared/cases is not beside this checkout")
def test_exam_topic_acceptance_cases_all_pass():
    res = _subprocess([str(CASES / "run"), str(CASES / "exam-topics.json")])
    assert res.returncode == 0, res.stdout + res.stderr
    assert ", 0 failed" in res.stdout


def test_list_on_an_80_column_terminal_is_one_entry_per_topic():
    res = runner.invoke(app, ["solve", "--list", "--no-color"], env={"COLUMNS": "80"})
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    starts = {line.split()[0] for line in lines if line and not line.startswith(" ")}
    assert set(TOPICS) <= starts
    assert "    parameters x, weight, [bias], [grad_output], [target]" in lines


@pytest.mark.parametrize("topic, params", [
    ("conv2d", {"input": [[1]], "kernel": [[1]], "padding": 100_000_000}),
    ("max-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 2, "padding": 1, "stride": 1}),   # within the cap
    ("conv2d", {"input": [[1]], "kernel": [[1]], "padding": 5000}),        # would have allocated 800 MB
])
def test_a_padding_past_hand_size_is_one_line_not_a_memory_error(topic, params):
    # padding 100000000 asked numpy for 284 PiB (a traceback)
    res = run("solve", topic, "--params", json.dumps(params))
    if params["padding"] == 1:
        assert res.exit_code == 0, res.output
        return
    assert res.exit_code == 2 and res.stderr.startswith("error: padding: the padded input would be ")
    assert "at most 10,000,000 entries" in res.stderr and len(res.stderr.splitlines()) == 1
    feed = json.dumps({"id": "p", "topic": topic, "params": params}) + "\n"
    out = json.loads(run("solve", "--batch", input=feed).output)
    assert out["id"] == "p" and out["error"].startswith("padding: the padded input would be ")


def test_a_float_too_large_to_be_an_exact_integer_is_refused():
    # 1e100 was read as 10000000000000000159028911097599180468360808563945281389781327…
    res = run("solve", "conv-output-size", "--params", json.dumps({"input_size": 1e100, "kernel_size": 3}))
    assert res.exit_code == 2 and res.stderr == ("error: input_size: expected an integer, got 1e+100 (a float this "
                                                 "large is not an exact integer: write its digits)\n")
    res = run("solve", "conv-output-size", "--params", json.dumps({"input_size": 5.0, "kernel_size": 3}))
    assert res.exit_code == 0 and "3" in res.output                  # 5.0 is still 5 (JSON writers emit it)


@pytest.mark.parametrize("topic, params", [("positional-encoding", {"position": 1, "d_model": 100_000_000}),
                                           ("positional-encoding-relative",
                                            {"position": 1, "offset": 1, "d_model": 100_000_000})])
def test_a_d_model_past_hand_size_is_one_line_not_minutes_and_gigabytes(topic, params):
    res = run("solve", topic, "--params", json.dumps(params))
    assert res.exit_code == 2 and res.stderr == ("error: d_model: at most 100,000 (the engine computes hand-sized "
                                                 "problems), got 100,000,000\n"), res.output

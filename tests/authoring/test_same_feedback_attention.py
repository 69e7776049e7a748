"""Issue 37 item 1, attention topics: an authored question (`solve = "<topic>"`) with a built-in
problem's own parameters gets, on each part both ask, the same known mistakes (ids, values and
explanations) and the same ECF rule as the built-in problem — one test per (generator, solve topic)
pair, each over every level (standard and calculator-free) and seeds 0–2, the generator's allow-listed
slips (examprep.generators.slips.SLIPS) aside. A part an authored question cannot ask (a worked-step
value such as self-attention's `concat`, a parameter such as the reduced-rank W) is named where it
changes a rule."""
from __future__ import annotations

import json

import numpy as np
import pytest

from examprep.document import Matrix

from examprep import generators, solve
from examprep.authoring import QuestionError, build_question, parse_question
from examprep.generators.slips import SLIPS

SEEDS = range(3)


def authored(topic: str, params: dict, answers: list[str]):
    """The Problem of a question file asking ``answers`` of ``topic`` (each in a part of its own name)
    with ``params`` fixed (those of the topic's parameters among them)."""
    names = {p.name for p in solve.get_topic(topic).params}
    lines = ["[question]", 'id = "pair"', f'solve = "{topic}"', 'text = "Same parameters."', "[question.params]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in params.items() if v is not None and k in names]
    for a in answers:
        lines += ["[[question.part]]", f'answer = "{a}"', f'prompt = "{a}?"']
    return build_question(parse_question("\n".join(lines) + "\n", "pair.toml"), 0)


def feedback(part, slips=(), rename: dict | None = None):
    """A part's mistakes as (id, value, explanation), its allow-listed slips aside, and its ECF rule as
    (op, arguments, output): a solve topic's arguments with its defaults filled in (a generator may
    leave a parameter at its default out), references to parts ``rename`` names written as the
    names it gives."""
    mistakes = [(m.id, m.value, m.explanation) for m in part.misconceptions if m.id not in slips]
    rule = part.ecf_rule
    if rule is None:
        return mistakes, None
    args = rule.args
    if rule.op.startswith("solve:"):
        args = solve.full_params(rule.op.removeprefix("solve:"), {k: v for k, v in args.items()})
    text = json.dumps(args, sort_keys=True)
    for old, new in (rename or {}).items():
        text = text.replace(f'{{"$ref": "{old}"}}', f'{{"$ref": "{new}"}}')
    return mistakes, (rule.op, text, rule.output)


def assert_same(built_part, mine_part, where, slips=(), rename=None) -> int:
    """The two parts' mistakes (ids and explanations equal, values within 1e-9) and ECF rules agree;
    returns how many mistakes were compared."""
    (want, want_rule), (got, got_rule) = feedback(built_part, slips, rename), feedback(mine_part, slips)
    assert [(i, why) for i, _, why in got] == [(i, why) for i, _, why in want], where
    for (i, a, _), (_, b, _) in zip(got, want):
        if isinstance(a, str) or isinstance(b, str):
            assert a == b, (where, i)
        else:
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{where} {i}")
    assert got_rule == want_rule, where
    return len(want)


def builds(name: str, levels=(1, 2, 3), seeds=SEEDS):
    free = (False, True) if generators.get(name).calculator_free else (False,)
    for level in levels:
        for cf in free:
            for seed in seeds:
                yield f"{name} L{level}{'-cf' if cf else ''} s{seed}", generators.build(name, seed, level, cf)


def test_attention_generator_and_the_attention_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("attention"):
        asked = [p.id for p in built.parts]           # scores (unprojected) or scaled_scores, weights, output
        mine = authored("attention", built.params, asked)
        for pid in asked:
            compared += assert_same(built.part(pid), mine.part(pid), f"{where} {pid}")
    assert compared > 100


def _form(params: dict) -> dict:
    return {k: params[k] for k in ("score", "weight", "w_query", "w_key", "v") if params.get(k) is not None}


def test_attention_scores_generators_score_weight_and_context_parts_and_the_attention_topic_give_the_same_feedback():
    slips = SLIPS["attention-scores"]
    compared = 0
    for where, built in builds("attention-scores"):
        base = {k: built.params[k] for k in ("query", "key", "value")}
        form = _form(built.params)                    # the form the weights and context use
        name = {"dot": "dot", "bilinear": "bilinear", "additive": "additive"}[form["score"]]
        mine = authored("attention", base | form, ["scores", "weights", "output"])
        compared += assert_same(built.part("weights"), mine.part("weights"), f"{where} weights", slips,
                                rename={f"{name}_scores": "scores"})
        compared += assert_same(built.part("context"), mine.part("output"), f"{where} context", slips)
        compared += assert_same(built.part("dot_scores"), authored("attention", base | {"score": "dot"}, ["scores"])
                                .part("scores"), f"{where} dot_scores", slips)
        for pid, score in (("bilinear_scores", "bilinear"), ("additive_scores", "additive")):
            if any(p.id == pid for p in built.parts):
                own = {k: built.params[k] for k in ("weight", "w_query", "w_key", "v") if built.params.get(k) is not None}
                scores = authored("attention", base | own | {"score": score}, ["scores"]).part("scores")
                part = built.part(pid)
                if part.ecf_rule is not None and "$ref" in json.dumps(part.ecf_rule.args):
                    # level 3 asks W = u wᵀ first and the scores carry the student's W; a question file cannot
                    # ask a parameter, so it gets the same rule on the problem's own W
                    rule = part.ecf_rule
                    assert rule.args["weight"] == {"$ref": "W"}
                    given = type(rule)(rule.op, rule.args | {"weight": own["weight"]}, rule.output)
                    part = type(part)(**{**part.__dict__, "ecf_rule": given})
                compared += assert_same(part, scores, f"{where} {pid}", slips)
    assert compared > 100


def test_attention_scores_low_rank_parts_and_the_lora_topic_give_the_same_feedback():
    # level 3's W = u wᵀ is LoRA's rank-1 update B A (B = u as a column, A = wᵀ), and the count of a
    # rank-r factorisation of a d×d W is lora's trainable_params: an authored lora question gets the same
    compared = 0
    for where, built in builds("attention-scores"):
        if not any(p.id == "W" for p in built.parts):
            continue
        u, w = ({b.name: b.values for b in built.statement if isinstance(b, Matrix)}[n] for n in ("u", "w"))
        update = authored("lora", {"d": 2, "k": 2, "r": 1, "lora_B": [[x] for x in u], "lora_A": [w]}, ["delta_weight"])
        compared += assert_same(built.part("W"), update.part("delta_weight"), f"{where} W")
        rule = built.part("factor_params").ecf_rule
        count = authored("lora", {k: rule.args[k] for k in ("d", "k", "r")}, ["trainable_params"])
        compared += assert_same(built.part("factor_params"), count.part("trainable_params"), f"{where} factor_params")
    assert compared >= 20


def test_causal_mask_generator_and_the_causal_mask_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("causal-mask"):
        p = built.params
        params = {k: p[k] for k in ("scores", "alignment", "scale")} | ({"position": p["position"]} if "position" in p else {})
        ids = {"mask": "allowed", "masked_count": "masked_count", "weights": "weights", "visible": "visible"}
        asked = {pid: a for pid, a in ids.items() if any(q.id == pid for q in built.parts)}
        mine = authored("causal-mask", params, list(asked.values()))
        for pid, a in asked.items():
            compared += assert_same(built.part(pid), mine.part(a), f"{where} {pid}", SLIPS["causal-mask"],
                                    rename={"mask": "allowed"})
        if any(q.id == "top_left_visible" for q in built.parts):     # the last query under torch's top-left mask
            top_left = authored("causal-mask", params | {"alignment": "top-left"}, ["visible"])
            compared += assert_same(built.part("top_left_visible"), top_left.part("visible"), f"{where} top-left")
    assert compared > 50


def test_causal_mask_generators_teacher_forcing_choice_lists_the_teacher_forcing_tables_mistakes():
    """The decoder input is a list of tokens: a question file cannot ask it as a graded part (it has no
    number), so the pair holds between the table and the built-in choice, written as text."""
    for where, built in builds("causal-mask", levels=(2,)):
        p = built.params
        table = solve.mistakes("teacher-forcing", {"tokens": p["tokens"], "bos": p["bos"]})
        want = [(m.id, " ".join(m.value), m.explanation) for m in table.of("decoder_input")]
        part = built.part("decoder_input")
        assert [(m.id, m.value, m.explanation) for m in part.misconceptions] == want, where
        assert part.expected == " ".join(table.trace().decoder_input) and set(part.choices) == {part.expected,
                                                                                                   *(w[1] for w in want)}
    with pytest.raises(QuestionError, match="decoder_input is not a number, vector or matrix"):
        authored("teacher-forcing", {"tokens": ["le", "chat", "dort"], "bos": "[GO]"}, ["decoder_input"])


def test_cross_attention_generator_and_the_cross_attention_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("cross-attention", levels=(2, 3)):
        asked = ["query", "key", "value", "scores", "weights", "output"]
        mine = authored("cross-attention", built.params, asked)
        for a in asked:
            compared += assert_same(built.part(a), mine.part(a), f"{where} {a}", SLIPS["cross-attention"])
    assert compared > 50


def _shape_feedback(built, mine, topic, where, slips=()) -> int:
    """Shape parts: a built-in one links to its answer by its generator's ``answers`` table, an authored
    one by a recipe of its topic (docs/authoring.md); the mistakes agree."""
    compared = 0
    for part in built.parts:
        link = (generators.get(built.generator).answers or (lambda p: {}))(built).get(part.id)
        if link is None or part.ecf_rule is not None:
            continue
        assert link == (topic, part.id)
        got = mine.part(part.id)
        assert (got.ecf_rule.op, got.ecf_rule.output) == (f"solve:{topic}", part.id), where
        compared += assert_same(part, type(got)(**{**got.__dict__, "ecf_rule": None}), f"{where} {part.id}", slips)
    return compared


ANSWERS = ("d_k", "query_shape", "scores_shape", "output_shape", "score_macs_per_head", "score_macs", "score_entries",
           "score_mib", "score_growth")


def test_multi_head_generator_and_the_multi_head_shapes_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("multi-head"):
        ids = {("growth" if a == "score_growth" else a): a for a in ANSWERS}
        asked = {pid: a for pid, a in ids.items() if any(q.id == pid for q in built.parts)}
        mine = authored("multi-head-shapes", built.params, list(asked.values()))
        compared += _shape_feedback(built, mine, "multi-head-shapes", where)
        for pid, a in asked.items():
            if built.part(pid).ecf_rule is not None or pid == "growth":
                compared += assert_same(built.part(pid), mine.part(a), f"{where} {pid}", SLIPS["multi-head"])
    assert compared > 40


def test_cross_attention_generators_shape_parts_and_the_multi_head_shapes_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("cross-attention", levels=(1,), seeds=range(6)):
        mine = authored("multi-head-shapes", built.params, ["scores_shape", "output_shape"])
        compared += _shape_feedback(built, mine, "multi-head-shapes", where, SLIPS["cross-attention"])
    assert compared >= 6 * 3


def test_self_attention_generator_and_the_self_attention_topic_give_the_same_feedback():
    compared = 0
    for where, built in builds("self-attention"):
        heads = built.params["num_heads"]
        # with two heads scaled_scores and weights hold one matrix per head: no graded part of a question file
        shared = ["query", "key", "value"] + (["scaled_scores", "weights", "output"] if heads == 1 else [])
        mine = authored("self-attention", built.params, shared)
        for a in shared:
            compared += assert_same(built.part(a), mine.part(a), f"{where} {a}")
        if heads == 1:
            continue
        table = solve.mistakes("self-attention", built.params)
        for h in range(heads):               # one part per head: the table's weights, head h of each
            part = built.part(f"weights_{h}")
            got = {m.id: m for m in part.misconceptions}
            kept = []
            for m in table.of("weights"):
                value = np.asarray(m.value)[h]
                if m.id in got:
                    assert got[m.id].explanation == m.explanation, where
                    np.testing.assert_allclose(got[m.id].value, value, rtol=1e-12, err_msg=where)
                    kept.append(value)
                else:                    # left out by the framework: no different from the answer or a kept one
                    assert any(np.allclose(value, v, atol=1e-3) for v in [part.expected, *kept]), (where, h, m.id)
            assert list(got) == [m.id for m in table.of("weights") if m.id in got], where
            compared += len(got)
        if any(p.id == "output" for p in built.parts):
            mine = authored("self-attention", built.params, ["output"])
            # the output after W_O: the same mistakes; its rule carries the student's concatenation, a worked-step
            # value (concat) a question file cannot ask, so the authored part has none
            out = built.part("output")
            assert out.ecf_rule.op == "matmul" and out.ecf_rule.args["a"] == {"$ref": "concat"}, where
            compared += assert_same(type(out)(**{**out.__dict__, "ecf_rule": None}), mine.part("output"), f"{where} output")
    assert compared > 100


@pytest.mark.parametrize("params,answer,want", [
    # one query (the lecture's context vector): plain normalisation, raw scores, uniform weights; no column softmax
    ({"query": [1.0, 0.0], "key": [[1.0, 0.0], [0.0, 1.0]], "value": [[2.0, 0.0], [0.0, 4.0]], "score": "dot"},
     "output", {"scores-as-weights": [2.0, 0.0], "uniform": [1.0, 2.0]}),
    # the same problem with two queries: the column softmax, and none of the context-vector mistakes
    ({"query": [[1.0, 0.0], [0.0, 2.0]], "key": [[1.0, 0.0], [0.0, 1.0]], "value": [[2.0, 0.0], [0.0, 4.0]], "score": "dot"},
     "output", None),
])
def test_the_context_vector_mistakes_are_declared_for_one_query(params, answer, want):
    got = {m.id: m.value for m in solve.mistakes("attention", params).of(answer)}
    if want is None:
        assert "wrong-axis" in got and not {"scores-as-weights", "uniform"} & set(got)
    else:
        assert "wrong-axis" not in got
        for k, v in want.items():
            np.testing.assert_allclose(got[k], v)       # α = (1, 0)·… by hand: raw scores (1, 0) times V; V's mean


@pytest.mark.parametrize("alignment,visible", [("top-left", [1, 2]), ("bottom-right", [3, 4])])
def test_the_keys_a_query_may_attend_are_its_row_of_the_mask(alignment, visible):
    # two new queries against four keys, by hand: top-left j ≤ i; bottom-right j ≤ i + (m − n) = i + 2
    # (torch's CausalBias counts the same in verify/decoder.py)
    for position, want in zip((1, 2), visible):
        t = solve.mistakes("causal-mask", {"scores": [[0.0] * 4] * 2, "alignment": alignment, "position": position})
        assert t.trace().visible == want
    mistakes = {m.id: m.value for m in solve.mistakes("causal-mask", {"scores": [[0.0] * 4] * 2,
                                                                      "alignment": alignment}).of("visible")}
    assert mistakes == ({"bottom-right": 4} if alignment == "top-left" else {"top-left": 2})


def test_the_growth_of_the_score_cost_is_the_square_of_the_factor_and_the_projections_the_factor():
    # n·m·d_model multiply-adds with n and m both k times longer: k²; (2n + 2m)·d_model²: k
    p = solve.mistakes("multi-head-shapes", {"n": 3, "m": 5, "d_model": 8, "num_heads": 2, "growth_factor": 4})
    assert (p.trace().score_growth, p.trace().projection_growth) == (16, 4)
    assert {m.id: m.value for m in p.of("score_growth")} == {"linear": 4, "cubic": 64}


def test_an_authored_cross_attention_shape_question_gets_the_swapped_and_self_attention_lengths_only():
    p = authored("multi-head-shapes", {"n": 3, "m": 5, "d_model": 64, "num_heads": 4},
                 ["d_k", "scores_shape", "output_shape", "score_macs_per_head"])
    # by hand: the scores are n × m = 3 × 5; swapped 5 × 3; with the decoder's keys (self-attention) 3 × 3
    assert {m.id: m.value for m in p.part("scores_shape").misconceptions} == {"transposed": [5, 3],
                                                                              "self-attention": [3, 3]}
    assert {m.id: m.value for m in p.part("output_shape").misconceptions} == {"encoder-length": [5, 64],
                                                                              "one-head": [3, 16]}
    rule = p.part("score_macs_per_head").ecf_rule
    assert (rule.op, rule.args["values"][:2]) == ("int-product", [3, 5])        # n queries × m keys
    one = authored("multi-head-shapes", {"n": 3, "d_model": 64, "num_heads": 1}, ["output_shape"])
    assert [m.id for m in one.part("output_shape").misconceptions] == []     # one head: both give the answer itself

"""An authored question with a built-in CNN problem's own parameters gets the built-in part's known
mistakes (ids and values), one test per (generator, solve topic) pair (issue 37 item 1)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from examprep import generators, solve
from examprep.authoring import build_question, parse_question
from examprep.generators.slips import SLIPS

SEEDS = (0, 1, 2)


def _toml(v) -> str:
    """A parameter value as TOML (inline tables for objects)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return json.dumps(v)


def _authored(topic: str, params: dict, answers: list[str]):
    """The Problem of a question file asking ``answers`` of ``topic`` with fixed ``params``."""
    text = (f'[question]\nid = "q"\ntitle = "q"\nsolve = "{topic}"\ntext = "A stack."\n[question.params]\n'
            + "".join(f"{k} = {_toml(v)}\n" for k, v in params.items())
            + "".join(f'[[question.part]]\nanswer = "{a}"\nid = "p{i}"\nprompt = "?"\n' for i, a in enumerate(answers)))
    return build_question(parse_question(text, "q.toml"), 0)


def _feedback(part) -> list[tuple[str, object]]:
    return [(m.id, m.value) for m in part.misconceptions]


def _conv_args(n: int, layer: dict) -> dict:
    return {"input_size": n, "kernel_size": layer["kernel_size"], "stride": layer["stride"], "padding": layer["padding"],
            "dilation": layer["dilation"], "op": "pool" if layer["type"] == "max-pool" else "conv"}


@pytest.mark.parametrize("level", (1, 2, 3))
def test_receptive_field_generator_and_conv_output_size(level):
    for seed in SEEDS:
        built = generators.build("receptive-field", seed, level)
        n = built.params["input_size"]
        for i, layer in enumerate(built.params["layers"]):
            own = built.part(f"size_{i + 1}")
            q = _authored("conv-output-size", _conv_args(n, layer), ["output_size"])
            assert q.part("p0").expected == own.expected
            assert _feedback(q.part("p0")) == _feedback(own), (seed, i)
            # the built-in ECF rule chains the layers (its input is the previous part's size): one layer's
            # question has no earlier part to carry forward from, so no rule
            assert q.part("p0").ecf_rule is None
            n = own.expected
        if level >= 2:
            same = built.params["same"] | {"padding": "same"}
            q = _authored("conv-output-size", same, ["output_size", "pad_before", "pad_after"])
            for pid, own in zip(("p0", "p1", "p2"), ("same_output", "pad_before", "pad_after")):
                assert _feedback(q.part(pid)) == _feedback(built.part(own)), (seed, own)
                assert q.part(pid).ecf_rule is None and built.part(own).ecf_rule is None


@pytest.mark.parametrize("level", (1, 2, 3))
def test_receptive_field_generator_and_receptive_field(level):
    for seed in SEEDS:
        built = generators.build("receptive-field", seed, level)
        own = built.part("receptive_field")
        q = _authored("receptive-field", {"layers": built.params["layers"]}, ["receptive_field"])
        assert q.part("p0").expected == own.expected
        assert _feedback(q.part("p0")) == _feedback(own) and own.misconceptions, seed
        assert q.part("p0").ecf_rule is None and own.ecf_rule is None


def test_an_authored_stack_of_stride_one_layers_gets_no_ignored_stride_mistake():
    # the mistake would equal the answer there: the table leaves it out, as it leaves out a dilation of 1
    q = _authored("receptive-field", {"layers": [{"kernel_size": 3}, {"kernel_size": 5, "stride": 1}]}, ["receptive_field"])
    assert q.part("p0").expected == 7
    assert _feedback(q.part("p0")) == [("sum-kernels", 8)]


def test_an_authored_same_padding_with_an_even_split_gets_no_extra_at_start_mistake():
    q = _authored("conv-output-size", {"input_size": 10, "kernel_size": 3, "stride": 2, "padding": "same"},
                  ["output_size", "pad_before", "pad_after"])
    assert [p.expected for p in q.parts] == [5, 0, 1]
    assert _feedback(q.part("p1")) == [("extra-at-start", 1)] and _feedback(q.part("p2")) == [("extra-at-start", 0)]
    even = _authored("conv-output-size", {"input_size": 9, "kernel_size": 3, "stride": 2, "padding": "same"},
                     ["pad_before", "pad_after"])
    assert [p.expected for p in even.parts] == [1, 1] and not even.part("p0").misconceptions


# param-count: the parts and the layer each counts, per level
_COUNTED = {1: {"linear": "linear", "conv2d": "conv2d", "embedding": "embedding"},
            2: {"count_pytorch": "pytorch", "count_keras": "keras"},
            3: {"mha": "mha", "layer": "layer"}}


@pytest.mark.parametrize("level", (1, 2, 3))
def test_param_count_generator_and_param_count(level):
    for seed in SEEDS:
        built = generators.build("param-count", seed, level)
        for part_id, layer in _COUNTED[level].items():
            own = built.part(part_id)
            q = _authored("param-count", built.params[layer], ["count"])
            assert q.part("p0").expected == own.expected
            assert _feedback(q.part("p0")) == _feedback(own) and _feedback(own), (seed, part_id)
            assert _rule(q.part("p0")) == _rule(own) is not None, (seed, part_id)
        if level == 3:      # the choice of how the count depends on the heads: its options are the slips
            assert {m.id for m in built.part("depends_on_heads").misconceptions} == set(SLIPS["param-count"])


def test_an_authored_keras_gru_count_gets_the_keras_mistakes_and_a_square_linear_no_bias_per_input():
    q = _authored("param-count", {"layer": "gru", "input_size": 3, "hidden_size": 2, "framework": "keras",
                                  "reset_after": False}, ["count"])
    # Keras GRU, one bias: 3·(2·3 + 2·2 + 2) = 36; PyTorch's two: 42; weights alone: 30
    assert q.part("p0").expected == 36
    assert _feedback(q.part("p0")) == [("two-biases", 42), ("no-bias", 30)]
    square = _authored("param-count", {"layer": "linear", "in_features": 4, "out_features": 4}, ["count"])
    assert _feedback(square.part("p0")) == [("no-bias", 16)]       # in = out: bias-per-input is no mistake there


def _close(a, b) -> bool:
    """Two mistake values alike to 1e-9 (a built-in part's values are snapped: −0 and float noise)."""
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-9, atol=1e-12))


def _same(got: list, want: list) -> bool:
    return [i for i, _ in got] == [i for i, _ in want] and all(_close(a, b) for (_, a), (_, b) in zip(got, want))


def _projected(mistakes, pick, expected) -> list[tuple[str, object]]:
    """(id, pick(value)) of mistakes (Misconceptions, or (id, value) pairs) as a part asking a piece of the
    answer shows them: those giving the part's own answer, or an earlier mistake's value, left out (as a
    built-in part leaves them)."""
    out: list[tuple[str, object]] = []
    for m in mistakes:
        mid, value = (m.id, m.value) if hasattr(m, "id") else m
        v = pick(value)
        if not _close(v, expected) and not any(_close(v, k) for _, k in out):
            out.append((mid, v))
    return out


def _rule(part):
    return part.ecf_rule.to_dict() if part.ecf_rule else None


@pytest.mark.parametrize("level", (1, 2, 3))
def test_max_pool_generator_and_max_pool(level):
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("max-pool", seed, level, cf)
            q = _authored("max-pool", built.params, ["output", "grad_input"])
            for pid, own in (("p0", "output"), ("p1", "grad_input")):
                assert q.part(pid).expected == built.part(own).expected
                assert _same(_feedback(q.part(pid)), _feedback(built.part(own))), (seed, own)
                assert _rule(q.part(pid)) == _rule(built.part(own)) is not None, (seed, own)
            if level == 2:      # the indices: no answer an authored part can ask, but its table's mistakes
                known = solve.mistakes("max-pool", built.params)
                own = built.part("indices")
                assert _same(_projected(known.of("indices"), lambda v: np.asarray(v, dtype=float).tolist(), own.expected),
                             _feedback(own)), seed
            if level == 3:
                # the padding part asks one side's [before, after], no answer an authored part can ask: each id of
                # the table's pad_before and pad_after (per dimension) read at rows
                known = solve.mistakes("max-pool", built.params)
                before, after = ({m.id: int(m.value[0]) for m in known.of(side)} for side in ("pad_before", "pad_after"))
                t = known.trace()
                ok = [int(t.pad_before[0]), int(t.pad_after[0])]
                assert ok == built.part("padding").expected
                pairs = [(i, [before.get(i, ok[0]), after.get(i, ok[1])]) for i in dict.fromkeys([*before, *after])]
                pairs = [(i, v) for i, v in pairs if v != ok]
                assert _same(pairs, _feedback(built.part("padding"))) and pairs, seed


def test_an_authored_max_pool_with_integer_padding_gets_the_zero_padding_mistake():
    # −∞ padding: the padded cells never win; a student padding with 0 gets 0 wherever a window reaches the padding
    q = _authored("max-pool", {"input": [[-1.0, -2.0], [-3.0, -4.0]], "kernel_size": 2, "stride": 1, "padding": 1,
                               "grad_output": [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]}, ["output", "grad_input"])
    assert q.part("p0").expected == [[-1, -1, -2], [-1, -1, -2], [-3, -3, -4]]
    assert ("zero-padding", [[0, 0, 0], [0, -1, 0], [0, 0, 0]]) in _feedback(q.part("p0"))
    assert q.part("p1").expected == [[4, 2], [2, 1]]
    assert ("zero-padding", [[1, 0], [0, 0]]) in _feedback(q.part("p1"))     # only the middle window's δ reaches x
    assert "stride-1" not in [m for m, _ in _feedback(q.part("p0"))]     # stride 1 already: no such slip


def test_avg_pool_generator_and_max_pool():
    # avg-pool's level 1 asks max-pooling's routing of the same δ: max-pool's table less its tie rules
    from examprep.generators.avg_pool import MAX_TIES

    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("avg-pool", seed, 1, cf)
            params = {k: built.params[k] for k in ("input", "kernel_size", "stride", "padding", "grad_output")}
            q = _authored("max-pool", params, ["grad_input"])
            own = built.part("max_grad_input")
            assert q.part("p0").expected == own.expected
            authored = [m for m in _feedback(q.part("p0")) if m[0] not in MAX_TIES]
            assert _same(authored, _feedback(own)) and authored, seed


@pytest.mark.parametrize("level", (1, 2, 3))
def test_avg_pool_generator_and_avg_pool(level):
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("avg-pool", seed, level, cf)
            q = _authored("avg-pool", built.params, ["output", "grad_input"])
            for pid, own in (("p0", "output"), ("p1", "grad_input")):
                assert _close(q.part(pid).expected, built.part(own).expected)
                assert _same(_feedback(q.part(pid)), _feedback(built.part(own))) and _feedback(q.part(pid)), (seed, own)
                assert _rule(q.part(pid)) is None and _rule(built.part(own)) is None
            if level == 3:
                # the same windows without count_include_pad: which cells count is that part's point, so it
                # leaves out the sum-not-mean of the output part
                excl = _authored("avg-pool", built.params | {"count_include_pad": False}, ["output"])
                own = built.part("output_exclude_pad")
                assert _close(excl.part("p0").expected, own.expected)
                assert _same([m for m in _feedback(excl.part("p0")) if m[0] != "sum-not-mean"], _feedback(own)), seed
            if level == 2:
                # global average pooling of the same x, δ given in the prompt (the spread of δ is that part's point:
                # it leaves out delta-ignored)
                delta = 9 * built.part("gap_grad").expected[0][0]
                gap = _authored("avg-pool", {"input": built.params["input"], "kernel_size": 3, "grad_output": [[delta]]},
                                ["output", "grad_input"])
                scalar = [(i, v[0][0]) for i, v in _feedback(gap.part("p0"))]
                assert _same(scalar, _feedback(built.part("gap"))) and scalar, seed
                spread = [m for m in _feedback(gap.part("p1")) if m[0] != "delta-ignored"]
                assert _same(spread, _feedback(built.part("gap_grad"))) and spread, seed


def _renamed(rule, asked: list[str]):
    """An authored part's rule with its references to parts p0, p1, … written as the answers they ask
    (the built-in problem's part ids)."""
    if rule is None:
        return None
    text = json.dumps(rule)
    for i, answer in enumerate(asked):
        text = text.replace(f'{{"$ref": "p{i}"}}', f'{{"$ref": "{answer}"}}')
    return json.loads(text)


@pytest.mark.parametrize("level", (1, 2, 3))
def test_conv2d_generator_and_conv2d(level):
    # every part asks one answer of conv2d by its own name; level 1's δ is the output (L = ½ Σ y²), which the
    # table's recipes carry forward from the student's own output part, as the built-in problem's do
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("conv2d", seed, level, cf)
            asked = [p.id for p in built.parts]
            q = _authored("conv2d", built.params, asked)
            for i, answer in enumerate(asked):
                mine, own = q.part(f"p{i}"), built.part(answer)
                assert _close(mine.expected, own.expected)
                assert _same(_feedback(mine), _feedback(own)), (seed, cf, answer)
                assert _renamed(_rule(mine), asked) == _rule(own) is not None, (seed, cf, answer)
            assert sum(len(p.misconceptions) for p in built.parts) >= len(asked)


# conv2d-channels: each part's answer of conv2d and the piece of it the part asks, per level
def _channel_parts(level: int) -> dict:
    if level == 1:
        return {"output": ("output", lambda v: np.asarray(v)[0]), "grad_kernel_0": ("grad_kernel", lambda v: np.asarray(v)[0, 0]),
                "grad_kernel_1": ("grad_kernel", lambda v: np.asarray(v)[0, 1]),
                "grad_bias": ("grad_bias", lambda v: float(np.ravel(v)[0]))}
    if level == 2:
        return {"output_0": ("output", lambda v: np.asarray(v)[0]), "output_1": ("output", lambda v: np.asarray(v)[1]),
                "grad_weight": ("grad_kernel", lambda v: np.asarray(v)[:, :, 0, 0]), "grad_bias": ("grad_bias", np.asarray)}
    return {f"{a}_{c}": (a, lambda v, c=c: np.asarray(v)[c]) for a in ("output", "grad_input") for c in (0, 1)}


@pytest.mark.parametrize("level", (1, 2, 3))
def test_conv2d_channels_generator_and_conv2d(level):
    # an authored part holds a number, a vector or a matrix, so of the channel answers (C×H×W, a 4-D kernel) it
    # asks only the bias gradient: the others are compared with what conv2d's table gives those answers, read
    # at the piece each part asks. The parts that ask a piece of an answer carry no recipe (none recomputes a piece).
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("conv2d-channels", seed, level, cf)
            known = solve.mistakes("conv2d", built.params)
            for pid, (answer, pick) in _channel_parts(level).items():
                own = built.part(pid)
                table = _projected(known.of(answer), pick, own.expected)
                assert _same(table, _feedback(own)) and table, (seed, cf, pid)
            if level < 3:
                q = _authored("conv2d", built.params, ["grad_bias"])
                own = built.part("grad_bias")
                if level == 1:        # the one filter's bias gradient, a number
                    assert _same([(i, v[0]) for i, v in _feedback(q.part("p0"))], _feedback(own)), seed
                    assert own.ecf_rule is None
                else:
                    assert _same(_feedback(q.part("p0")), _feedback(own)), seed
                    assert _rule(q.part("p0")) == _rule(own) is not None


def test_conv2d_channels_generator_and_param_count():
    # level 2's 1×1 layer: param-count's table, and the count times the statement's 2×2 positions (a slip)
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("conv2d-channels", seed, 2, cf)
            own = built.part("params")
            q = _authored("param-count", {"layer": "conv2d", "in_channels": 3, "out_channels": 2, "kernel_size": 1},
                          ["count"])
            assert q.part("p0").expected == own.expected
            table = [m for m in _feedback(own) if m[0] not in SLIPS["conv2d-channels"]]
            assert _feedback(q.part("p0")) == table and table, seed
            assert _rule(q.part("p0")) == _rule(own) is not None


def _separable(c: int) -> dict:
    return {"input_shape": [c, 8, 8], "layers": [
        {"type": "conv2d", "out_channels": c, "kernel_size": 3, "padding": 1, "groups": c, "name": "depthwise 3×3"},
        {"type": "conv2d", "out_channels": 2 * c, "kernel_size": 1, "name": "pointwise 1×1"}]}


def test_conv2d_channels_generator_and_network_shapes():
    # level 3's two counts: the separable block and the standard conv it replaces, each a network of its own
    # (the input channels are the statement's: the one of 16, 32, 64 whose count the part asks)
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("conv2d-channels", seed, 3, cf)
            count = built.part("separable_params").expected
            [c] = [c for c in (16, 32, 64) if solve.mistakes("network-shapes", _separable(c)).trace().total_params == count]
            standard = {"input_shape": [c, 8, 8],
                        "layers": [{"type": "conv2d", "out_channels": 2 * c, "kernel_size": 3, "padding": 1}]}
            for pid, params in (("separable_params", _separable(c)), ("standard_params", standard)):
                own = built.part(pid)
                q = _authored("network-shapes", params, ["total_params"])
                assert q.part("p0").expected == own.expected
                table = [m for m in _feedback(own) if m[0] not in SLIPS["conv2d-channels"]]
                assert _feedback(q.part("p0")) == table and table, (seed, pid)
                assert _rule(q.part("p0")) is None and own.ecf_rule is None


@pytest.mark.parametrize("level", (1, 2, 3))
def test_network_shapes_generator_and_network_shapes(level):
    # the built-in table asks one layer's shape or count per part: an authored question asks the whole lists
    # (output_shapes, params) and the total, and each built-in part gets the authored list's mistakes read at its
    # layer. The built-in rules carry a student's own cell of the layer before forward (and add the student's
    # counts for the total): a whole list has no earlier part, so the authored parts carry none.
    for seed in SEEDS:
        for cf in (False, True):
            built = generators.build("network-shapes", seed, level, cf)
            q = _authored("network-shapes", built.params, ["output_shapes", "params", "total_params"])
            shapes, counts, total = (q.part(f"p{i}") for i in range(3))
            compared = 0
            for i, layer in enumerate(built.params["layers"]):
                stem = layer["name"].replace(" ", "_").replace("-", "_")
                for pid, mine, pick in ((f"{stem}_shape", shapes, list), (f"{stem}_params", counts, int)):
                    if pid not in {p.id for p in built.parts}:
                        continue
                    own = built.part(pid)
                    assert pick(mine.expected[i]) == own.expected
                    at_layer = _projected(_feedback(mine), lambda v, i=i, pick=pick: pick(v[i]), own.expected)
                    assert _same(at_layer, _feedback(own)), (seed, cf, pid)
                    compared += len(own.misconceptions)
            assert _feedback(total) == _feedback(built.part("total_params")) and _feedback(total), (seed, cf)
            assert compared and all(_rule(p) is None for p in (shapes, counts, total))


# counting topics no generator asks: their tables' mistakes, each the number a student who makes it writes
def test_an_authored_lora_memory_question_gets_the_counting_mistakes():
    q = _authored("lora-memory", {"d": 1024, "k": 512, "r": 8, "optimizer": "adam"},
                  ["bytes_per_param", "saved_bytes", "saved_mib"])
    full, lora = 1024 * 512, 8 * (1024 + 512)
    # Adam: gradient + two moments = 3 float32 values a trained parameter
    assert [p.expected for p in q.parts] == [12, (full - lora) * 12, pytest.approx((full - lora) * 12 / 2 ** 20)]
    # forgetting Adam's two moments (the gradient alone, 4 B); forgetting the gradient (the moments alone, 8 B)
    assert _feedback(q.part("p0")) == [("no-optimizer-states", 4), ("no-gradient", 8)]
    assert _feedback(q.part("p1")) == []
    assert _feedback(q.part("p2")) == [("no-optimizer-states", pytest.approx((full - lora) * 4 / 2 ** 20)),
                                       ("decimal-megabytes", pytest.approx((full - lora) * 12 / 1e6)),
                                       ("lora-memory-not-saving", pytest.approx(lora * 12 / 2 ** 20))]
    sgd = _authored("lora-memory", {"d": 1024, "k": 512, "r": 8, "optimizer": "sgd"}, ["bytes_per_param"])
    assert _feedback(sgd.part("p0")) == []       # plain SGD: the gradient alone, no states to forget


def test_an_authored_training_time_question_gets_the_throughput_mistakes():
    # a question file's values lie within ±10⁹: a small model on slow accelerators (a month of training)
    n, d, peak = 1000, 20_000, 10.0
    q = _authored("training-time", {"params": n, "tokens": d, "peak_flops": peak, "num_gpus": 8, "utilization": 0.5},
                  ["compute", "days"])
    c = 6 * n * d
    assert q.part("p0").expected == pytest.approx(c)
    assert _feedback(q.part("p0")) == [("forward-only", pytest.approx(2 * n * d)), ("no-factor", pytest.approx(n * d))]
    days = c / (8 * peak * 0.5) / 86400
    assert q.part("p1").expected == pytest.approx(days)
    assert _feedback(q.part("p1")) == [("ignored-utilization", pytest.approx(days / 2)),
                                       ("forward-only", pytest.approx(days / 3)),
                                       ("one-accelerator", pytest.approx(days * 8)), ("hours-not-days", pytest.approx(days * 24))]
    assert q.part("p1").ecf_rule.args["compute"] == {"$ref": "p0"}          # the days of the student's own compute
    alone = _authored("training-time", {"compute": c, "peak_flops": peak}, ["days"])
    assert _feedback(alone.part("p0")) == [("hours-not-days", pytest.approx(c / peak / 3600))]   # one GPU at its peak

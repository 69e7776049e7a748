"""Bad parameters give one clear ParamError naming the parameter, never a traceback or a NaN."""
import pytest

from examprep import solve
from examprep.errors import ParamError, UnknownTopicError

GRU = {"x": [1.0], "h": [0.5], "weight_ih": [[0.5], [1.0], [1.0]], "weight_hh": [[-1.0], [1.0], [2.0]]}

CASES = [
    # (topic, params, words the message must contain)
    ("gru-cell", {k: v for k, v in GRU.items() if k != "h"}, ["h", "missing"]),
    ("gru-cell", GRU | {"wieght_ih": 1}, ["wieght_ih", "unknown", "weight_ih"]),
    ("gru-cell", GRU | {"weight_ih": [[0.5], [1.0]]}, ["weight_ih", "3×1", "2×1"]),
    ("gru-cell", GRU | {"x": ["a"]}, ["x", "numbers"]),
    ("gru-cell", GRU | {"x": [float("nan")]}, ["x", "finite"]),
    ("gru-cell", GRU | {"convention": "keras"}, ["convention", "lecture", "pytorch", "keras"]),
    ("gru-cell", GRU | {"reset": 1}, ["reset", "after"]),
    ("softmax", {"logits": [[1, 2], [3]]}, ["logits", "rectangular"]),
    ("softmax", {"logits": []}, ["logits", "empty"]),
    ("softmax", {"logits": 3}, ["logits", "single number"]),
    ("softmax", {"logits": [1, float("inf")]}, ["logits", "finite"]),
    ("cross-entropy", {"logits": [1, 2, 3], "target": 3}, ["target", "[0, 2]", "3"]),
    ("cross-entropy", {"logits": [[1, 2], [3, 4]], "target": [0]}, ["target", "2 class indices"]),
    ("cross-entropy", {"logits": [1, 2], "target": 0, "label_smoothing": 2}, ["label_smoothing", "[0, 1]"]),
    ("cross-entropy", {"logits": [1, 2], "target": 0.5}, ["target", "integer"]),
    ("activation", {"name": "swish", "x": 1}, ["name", "sigmoid", "swish"]),
    ("activation", {"name": "relu", "x": True}, ["x", "numbers"]),
    ("dense", {"x": [1, 2, 3], "weight": [[1, 2]]}, ["x", "2 features", "3"]),
    ("dense", {"x": [1, 2], "weight": [[1, 2]], "bias": [1, 2]}, ["bias", "length 1"]),
    ("dense", {"x": [1, 2], "weight": [[1, 2]], "grad_output": [1, 2]}, ["grad_output", "shape"]),
    ("linear-regression", {"X": [[1], [2]], "y": [1, 2], "w": [0]}, ["lr", "missing"]),
    ("linear-regression", {"X": [[1], [2]], "y": [1], "w": [0], "lr": 0.1}, ["y", "length 2"]),
    ("conv-output-size", {"input_size": 5, "kernel_size": 7}, ["kernel", "larger", "padded input 5"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 3, "stride": 0}, ["stride", "≥ 1", "0"]),
    ("conv-output-size", {"input_size": -4, "kernel_size": 3}, ["input_size", "≥ 1"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 3, "padding": -1}, ["padding", "≥ 0"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 3, "padding": "full"}, ["padding", "same"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 3, "ceil_mode": True}, ["ceil_mode", "pool"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 2, "op": "pool", "padding": 2}, ["padding", "half"]),
    ("conv-output-size", {"input_size": 8, "kernel_size": 3, "stride": 2, "transposed": True,
                          "output_padding": 2}, ["output_padding", "smaller"]),
    ("conv-output-size", {"input_size": 32, "kernel_size": 3, "op": "avg"}, ["op", "conv", "pool"]),
    ("receptive-field", {"layers": []}, ["layers", "non-empty"]),
    ("receptive-field", {"layers": [{"kernel_size": 3, "strid": 2}]}, ["layers[0]", "strid"]),
    ("receptive-field", {"layers": [3, 3]}, ["layers[0]", "object"]),
    ("conv2d", {"input": [[1, 2], [3, 4]], "kernel": [[1, 1, 1], [1, 1, 1], [1, 1, 1]]}, ["kernel", "larger"]),
    ("conv2d", {"input": [[1, 2], [3, 4]], "kernel": [1, 1]}, ["kernel", "2-D"]),
    ("conv2d", {"input": [1, 2, 3], "kernel": [1], "stride": 0}, ["stride", "≥ 1"]),
    ("max-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 3}, ["kernel", "larger"]),
    ("max-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 2, "grad_output": [[1, 2]]}, ["grad_output", "1×1"]),
    ("lstm-cell", {"x": [1], "h": [1], "c": [1, 2], "weight_ih": [[1]] * 4, "weight_hh": [[1]] * 4}, ["c", "length 1"]),
    ("rnn-cell", {"x": [1], "h": [1], "weight_ih": [[1]], "weight_hh": [[1]], "nonlinearity": "sigmoid"}, ["nonlinearity"]),
    ("param-count", {"layer": "lstm", "input_size": 10}, ["hidden_size", "missing"]),
    ("param-count", {"layer": "transformer", "d_model": 8}, ["layer", "transformer-encoder-layer"]),
    ("param-count", {"layer": "multi-head-attention", "d_model": 10, "num_heads": 3}, ["num_heads", "divide"]),
    ("param-count", {"layer": "linear", "in_features": 3, "out_features": 0}, ["out_features", "≥ 1"]),
    ("param-count", {"layer": "linear", "in_features": 3, "out_features": 4, "bidirectional": True}, ["bidirectional"]),
    ("layer-norm", {"x": [1, 2], "gamma": [1, 2, 3]}, ["gamma", "length 2"]),
    ("layer-norm", {"x": [1, 1], "eps": 0}, ["eps", "zero"]),
    ("layer-norm", {"x": [1, 2], "eps_placement": "outside"}, ["eps_placement", "inside-sqrt"]),
    ("positional-encoding", {"position": -1, "d_model": 4}, ["position", "≥ 0"]),
    ("positional-encoding", {"position": 1, "d_model": 0}, ["d_model", "≥ 1"]),
    ("rope", {"x": [1, 2, 3], "position": 1}, ["x", "even"]),
    ("attention", {"query": [[1, 2]], "key": [[1, 2, 3]], "value": [[1]]}, ["key", "d_k"]),
    ("attention", {"query": [[1]], "key": [[1], [2]], "value": [[1]]}, ["value", "2 rows"]),
    ("attention", {"query": [[1]], "key": [[1]], "value": [[1]], "mask": [[1, 0]]}, ["mask", "1×1"]),
    ("attention", {"query": [[1]], "key": [[1]], "value": [[1]], "mask": [[2]]}, ["mask", "0/1"]),
    ("attention", {"query": [[1]], "key": [[1]], "value": [[1]], "score": "bilinear"}, ["weight", "bilinear"]),
    ("lora", {"d": 8, "k": 8, "r": 0}, ["r", "≥ 1"]),
    ("scaling-law", {"params": 1e9, "tokens": 2e10, "compute": 1e20}, ["not all three"]),
    ("scaling-law", {}, ["give two"]),
    ("scaling-law", {"compute": -5}, ["compute", "positive"]),
]


@pytest.mark.parametrize("topic,params,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bad_params_raise_a_clear_one_line_error(topic, params, words):
    with pytest.raises(ParamError) as err:
        solve.solve(topic, params)
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"


def test_unknown_topic_suggests_close_names():
    with pytest.raises(UnknownTopicError, match="gru-cell"):
        solve.solve("gru", {})
    with pytest.raises(UnknownTopicError, match="--list"):
        solve.solve("zzzz", {})


def test_params_must_be_an_object():
    with pytest.raises(ParamError, match="JSON object"):
        solve.solve("softmax", [1, 2])

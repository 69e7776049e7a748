"""Bad parameters give one clear ParamError naming the parameter, never a traceback or a NaN."""
import pytest

from examprep import solve
from examprep.errors import ParamError, ShapeError, UnknownTopicError

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


BAD_GRADIENT_FLOW = [
    ("residual", {"x": [1, 2], "w1": [[1, 2, 3]]}, ShapeError, ["w1", "2 columns"]),
    ("residual", {"x": [1, 2], "w1": [[1, 2]]}, ShapeError, ["w1", "w2", "x's size 2"]),
    ("residual", {"x": [1, 2], "w1": [[1, 2]], "w2": [[1, 2]]}, ShapeError, ["w2", "2×1"]),
    ("residual", {"x": [1, 2], "w1": [[1, 0], [0, 1]], "grad_output": [1]}, ShapeError, ["grad_output", "size 2"]),
    ("residual", {"x": [1, 2], "w1": [[1, 0], [0, 1]], "b2": [1, 1]}, ParamError, ["b2", "w2"]),
    ("residual", {"x": 1, "w1": 1, "activation": "swish"}, ParamError, ["activation", "relu"]),
    ("residual-stack", {"x": 1, "weights": [1, 2], "biases": [1]}, ShapeError, ["biases", "2"]),
    ("residual-stack", {"x": [1, 2], "weights": [1]}, ParamError, ["x", "number"]),
    ("residual-stack", {"x": 1, "weights": [1], "skip": "yes"}, ParamError, ["skip", "true or false"]),
    ("rnn-unroll", {"x": [[1]], "weight_ih": [[1]], "weight_hh": [[1, 2]]}, ShapeError, ["weight_hh", "square"]),
    ("rnn-unroll", {"x": [[1, 2]], "weight_ih": [[1]], "weight_hh": [[1]]}, ShapeError, ["weight_ih", "1×2"]),
    ("rnn-unroll", {"x": [[1]], "h0": [0, 0], "weight_ih": [[1]], "weight_hh": [[1]]}, ShapeError, ["h0", "length 1"]),
    ("rnn-unroll", {"x": [[1]], "weight_ih": [[1]], "weight_hh": [[1]], "nonlinearity": "sigmoid"}, ParamError,
     ["nonlinearity", "tanh"]),
    ("vanishing-gradient", {"w": [1, 2], "x": [1]}, ParamError, ["w", "number"]),
    ("vanishing-gradient", {"w": 0.5, "x": []}, ShapeError, ["x", "empty"]),
    ("vanishing-gradient", {"w": 0.5}, ParamError, ["x", "missing"]),
    ("vanishing-gradient", {"w": float("nan"), "x": [1]}, ParamError, ["w", "finite"]),
]


@pytest.mark.parametrize("topic,params,err,words", BAD_GRADIENT_FLOW,
                         ids=[f"{t}-{i}" for i, (t, *_) in enumerate(BAD_GRADIENT_FLOW)])
def test_bad_input_names_the_parameter(topic, params, err, words):
    with pytest.raises(err) as info:
        solve.solve(topic, params)
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


BAD_TRANSFORMER = [
    ("multi-head-shapes", {"n": 4, "d_model": 10, "num_heads": 3}, ["num_heads", "divide"]),
    ("multi-head-shapes", {"n": 0, "d_model": 8, "num_heads": 2}, ["n", "≥ 1"]),
    ("multi-head-shapes", {"d_model": 8, "num_heads": 2}, ["n", "missing"]),
    ("cross-attention", {"decoder_states": [[1, 0]], "encoder_output": [[1, 0]], "w_query": [[1], [0], [0]],
                         "w_key": [[1], [0]], "w_value": [[1], [0]]}, ["w_query", "2×?", "3×1"]),
    ("cross-attention", {"decoder_states": [[1, 0]], "encoder_output": [[1, 0]], "w_query": [[1, 0], [0, 1]],
                         "w_key": [[1], [0]], "w_value": [[1], [0]]}, ["w_key", "d_k"]),
    ("cross-attention", {"decoder_states": [[1]], "encoder_output": [[1]], "w_query": [[1]], "w_key": [[1]],
                         "w_value": [[1]], "layout": "keras"}, ["layout", "x-w", "linear"]),
    ("causal-mask", {"scores": [[1, 2], [3]]}, ["scores", "rectangular"]),
    ("causal-mask", {"scores": [[1, 2]], "alignment": "left"}, ["alignment", "top-left", "bottom-right"]),
    ("teacher-forcing", {"tokens": []}, ["tokens", "non-empty"]),
    ("teacher-forcing", {"tokens": ["a", 1.5]}, ["tokens[1]", "token"]),
    ("rope-score", {"query": [1, 2, 3], "key": [1, 2, 3], "position_query": 1, "position_key": 0}, ["even"]),
    ("rope-score", {"query": [1, 2], "key": [1, 2, 3, 4], "position_query": 1, "position_key": 0}, ["key", "length 2"]),
    ("positional-encoding-relative", {"position": 2, "offset": 1, "d_model": 5}, ["d_model", "even"]),
    ("positional-encoding-relative", {"position": 2, "offset": -3, "d_model": 4}, ["offset", "≥ 0"]),
    ("lora-memory", {"d": 8, "k": 8, "r": 2, "optimizer": "adagrad"}, ["optimizer", "adam"]),
    ("lora-memory", {"d": 8, "k": 8, "r": 0}, ["r", "≥ 1"]),
    ("training-time", {"compute": 1e20}, ["peak_flops", "missing"]),
    ("training-time", {"compute": 1e20, "params": 1e9, "peak_flops": 1e15}, ["compute", "not both"]),
    ("training-time", {"params": 1e9, "peak_flops": 1e15}, ["params, tokens", "both"]),
    ("training-time", {"compute": 1e20, "peak_flops": 1e15, "utilization": 1.5}, ["utilization", "(0, 1]"]),
]


@pytest.mark.parametrize("topic,params,words", BAD_TRANSFORMER, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD_TRANSFORMER)])
def test_bad_parameters_give_one_line_param_errors(topic, params, words):
    with pytest.raises(ParamError) as err:
        solve.solve(topic, params)
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


# the topics real exams ask (issue 18): one line naming the parameter (and, for a network, the layer)
_CONV = {"input": [[[1, 2, 0], [0, 1, 3], [2, 1, 0]], [[0, 1, 1], [2, 0, 1], [1, 1, 2]]],
         "kernel": [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]]]}
_BN = {"x": [[1.0, 2.0], [3.0, 5.0]]}
_NET = {"input_shape": [1, 8, 8]}
EXAM_TOPICS = [
    ("conv2d", _CONV | {"kernel": [[[[1, 0], [0, 1]]]]}, ShapeError, ["kernel", "1×1×2×2", "input 2×3×3", "2"]),
    ("conv2d", _CONV | {"bias": [1, 2]}, ShapeError, ["bias", "1 values"]),
    ("conv2d", _CONV | {"groups": 2}, ParamError, ["groups", "2", "output channels (1)"]),
    ("conv2d", {"input": [[1, 2], [3, 4]], "kernel": [[1]], "groups": 2}, ParamError, ["groups", "C×H×W"]),
    ("max-pool", {"input": [1, 2, 3], "kernel_size": 2, "padding": "same", "ceil_mode": True}, ParamError, ["ceil_mode"]),
    ("max-pool", {"input": [1, 2, 3], "kernel_size": 2, "padding": "full"}, ParamError, ["padding", "same"]),
    ("avg-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 3}, ParamError, ["kernel", "larger"]),
    ("avg-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 2, "padding": 2}, ParamError, ["padding", "half"]),
    ("avg-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 2, "padding": "same"}, ParamError, ["padding", "valid"]),
    ("avg-pool", {"input": [[1, 2], [3, 4]], "kernel_size": 2, "grad_output": [1, 2]}, ShapeError, ["grad_output", "1×1"]),
    ("batch-norm", {"x": [[1.0, 2.0]]}, ParamError, ["x", "one value per channel"]),
    ("batch-norm", _BN | {"gamma": [1, 2, 3]}, ShapeError, ["gamma", "2 values"]),
    ("batch-norm", _BN | {"momentum": 1.5}, ParamError, ["momentum", "[0, 1]"]),
    ("batch-norm", {"x": [1.0, 2.0]}, ShapeError, ["x", "matrix"]),
    ("dropout", {"x": [1, 2], "mask": [1, 0], "p": -0.1}, ParamError, ["p", "probability"]),
    ("dropout", {"x": [1, 2], "mask": [1], "p": 0.5}, ShapeError, ["mask", "x's shape"]),
    ("mlp-regression", {"x": [1, 2], "target": [1], "w1": [[1, 2]], "w2": [[1, 2]]}, ShapeError, ["w2", "?×1"]),
    ("mlp-regression", {"x": [1, 2], "target": [1], "w1": [[1, 2]], "w2": [[1]], "loss": "sse"}, ParamError,
     ["loss", "half-sse"]),
    ("logistic-regression", {"X": [[1, 2], [3, 4]], "y": [1, 2], "w": [0, 0]}, ParamError, ["y", "0 or 1"]),
    ("logistic-regression", {"X": [[1, 2], [3, 4]], "y": [1, 0], "w": [0, 0, 0]}, ShapeError, ["w", "2 weights"]),
    ("rnn-bptt", {"cell": "lstm", "x": [[1.0]], "weight_ih": [[1.0]], "weight_hh": [[1.0]]}, ShapeError,
     ["weight_hh", "4H×H"]),
    ("rnn-bptt", {"cell": "elman", "x": [[1.0]], "weight_ih": [[1.0]], "weight_hh": [[1.0]]}, ParamError, ["cell", "rnn"]),
    ("rnn-bptt", {"cell": "rnn", "x": [[1.0]], "weight_ih": [[1.0]], "weight_hh": [[1.0]], "truncation": 0}, ParamError,
     ["truncation", "≥ 1"]),
    ("self-attention", {"x": [[1, 0]], "w_query": [[1], [0]], "w_key": [[1, 0], [0, 1]], "w_value": [[1], [1]]},
     ShapeError, ["w_key", "2×1"]),
    ("self-attention", {"x": [[1, 0]], "w_query": [[1], [0]], "w_key": [[1], [0]], "w_value": [[1], [1]],
                        "num_heads": 2}, ParamError, ["num_heads", "divide"]),
    ("optimizer-step", {"optimizer": "adam", "params": [1, 2], "grads": [1, 2, 3], "lr": 0.1}, ShapeError,
     ["grads", "2 values per step"]),
    ("optimizer-step", {"optimizer": "sgd", "params": [1], "grads": [1], "lr": 0.1, "momentum": 0.9}, ParamError,
     ["momentum", "'sgd'"]),
    ("optimizer-step", {"optimizer": "lion", "params": [1], "grads": [1], "lr": 0.1}, ParamError, ["optimizer", "adamw"]),
    ("optimizer-step", {"optimizer": "adam", "params": [1], "grads": [1]}, ParamError, ["lr", "missing"]),
    ("network-shapes", _NET | {"layers": [{"type": "conv2d", "out_channels": 2, "kernel_size": 9}]}, ShapeError,
     ["layers[0] (conv2d)", "empty"]),
    ("network-shapes", _NET | {"layers": [{"type": "max-pool", "kernel_size": 2},
                                          {"type": "max-pool", "kernel_size": 2}, {"type": "max-pool", "kernel_size": 4}]},
     ShapeError, ["layers[2] (max-pool)", "empty"]),
    ("network-shapes", _NET | {"layers": [{"type": "dense", "units": 3}]}, ParamError, ["layers[0].type", "linear"]),
    ("network-shapes", _NET | {"layers": []}, ParamError, ["layers", "non-empty"]),
    ("network-shapes", {"input_shape": [8, 8], "layers": [{"type": "relu"}]}, ShapeError, ["input_shape", "[C, H, W]"]),
    ("param-count", {"layer": "batch-norm"}, ParamError, ["num_features", "missing"]),
    ("param-count", {"layer": "linear", "in_features": 2, "out_features": 3, "affine": False}, ParamError,
     ["affine", "batch-norm"]),
]


@pytest.mark.parametrize("topic,params,error,words", EXAM_TOPICS, ids=[f"{c[0]}-{i}" for i, c in enumerate(EXAM_TOPICS)])
def test_the_exam_topics_bad_params_raise_one_clear_line(topic, params, error, words):
    with pytest.raises(error) as err:
        solve.solve(topic, params)
    msg = str(err.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"

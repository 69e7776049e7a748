"""Solve topics of the Transformer/counting generators: multi-head shapes and cost, cross-attention,
the causal mask, teacher forcing, RoPE scores, relative positions, LoRA memory and training time.

Parameter names follow the contract's style (PyTorch's names where PyTorch has the thing);
defaults are PyTorch's unless the lecture notes give the formula.
"""
from __future__ import annotations

from typing import Any

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve import REQUIRED, Param, Step, Topic, topic


def _mh_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    b = r"B \cdot " if p["batch"] != 1 else ""
    return [
        Step("Head size: the model width is split across the heads", r"d_k = d_v = d_{\text{model}} / h", {"d_k": t.d_k}),
        Step("Per-head projections (rows are tokens)",
             r"Q_i = X W_i^Q\ (n \times d_k),\ K_i = Z W_i^K,\ V_i = Z W_i^V\ (m \times d_k)",
             {"query_shape": t.query_shape, "key_shape": t.key_shape, "value_shape": t.value_shape}),
        Step("Scores of one head: one row per query, one column per key", r"Q_i K_i^\top\ (n \times m)",
             {"scores_shape": t.scores_shape}),
        Step("Head output, concatenation of the h heads, output projection",
             r"\alpha_i V_i\ (n \times d_v),\ "
             r"\text{concat}(\text{head}_1, \text{…}, \text{head}_h)\, W^O\ (n \times d_{\text{model}})",
             {"head_output_shape": t.head_output_shape, "concat_shape": t.concat_shape, "output_shape": t.output_shape}),
        Step("Multiply-adds of one head's scores (n·m dot products of length d_k)", r"n \cdot m \cdot d_k",
             {"score_macs_per_head": t.score_macs_per_head}),
        Step("All heads" + (" and sequences" if p["batch"] != 1 else "") + ": quadratic in the sequence length",
             rf"{b}h \cdot n \cdot m \cdot d_k = {b}n \cdot m \cdot d_{{\text{{model}}}}",
             {"score_macs": t.score_macs, "weighted_sum_macs": t.weighted_sum_macs}),
        Step("Projections W_Q, W_K, W_V, W_O: linear in the sequence length",
             rf"{b}(2n + 2m)\, d_{{\text{{model}}}}^2", {"projection_macs": t.projection_macs}),
        Step("Memory of the attention matrices",
             rf"{b}h \cdot n \cdot m \text{{ values}} \times \text{{bytes per value}},"
             r"\ 1\ \text{MiB} = 2^{20}\ \text{bytes}",
             {"score_entries": t.score_entries, "score_bytes": t.score_bytes, "score_mib": t.score_mib}),
    ]


topic(Topic(
    "multi-head-shapes", "Shapes and cost of a multi-head attention layer",
    (Param("n", "int (queries: sequence length, or the decoder length in cross-attention)"),
     Param("d_model", "int"), Param("num_heads", "int (divides d_model)"),
     Param("m", "int (keys and values; = n for self-attention)", None),
     Param("batch", "int (sequences)", 1), Param("bytes_per_value", "int (4 for float32)", 4)),
    ("d_k", "query_shape", "key_shape", "value_shape", "scores_shape", "head_output_shape", "output_shape",
     "score_macs_per_head", "score_macs", "weighted_sum_macs", "projection_macs", "score_entries", "score_bytes",
     "score_mib"),
    lambda p: engine.multi_head_shapes(p["n"], p["d_model"], p["num_heads"], m=p["m"], batch=p["batch"],
                                       bytes_per_value=p["bytes_per_value"]),
    _mh_steps,
    lambda p: {"d_k": "d_model / num_heads, and d_v = d_k (Vaswani et al. 2017; torch.nn.MultiheadAttention)",
               "shapes": "(rows, columns) with one row per token, per sequence",
               "cost": "multiply-adds (1 multiply-add = 2 FLOPs)"},
))


def _cross_steps(p: dict[str, Any], t: Trace) -> list[Step]:
    w = (lambda n: rf"{n}") if p["layout"] == "x-w" else (lambda n: rf"{n}^\top")
    steps = [
        Step("Queries from the decoder", rf"Q = X_{{\text{{dec}}}} {w('W_Q')}", {"query": t.query}),
        Step("Keys from the encoder output", rf"K = Z {w('W_K')}", {"key": t.key}),
        Step("Values from the encoder output", rf"V = Z {w('W_V')}", {"value": t.value}),
        Step("Scores: one row per decoder position, one column per encoder position", r"s_{ij} = q_i \cdot k_j",
             {"scores": t.scores}),
        Step("Scale", r"s_{ij} / \sqrt{d_k}" if p["scale"] is None else r"c \cdot s_{ij}",
             {"scale": t.scale, "scaled_scores": t.scaled_scores}),
    ]
    if p["mask"] is not None:
        steps.append(Step("Mask: −∞ where a query may not attend (padding)", r"s_{ij} = -\infty \text{ where } M_{ij} = 0",
                          {"allowed": t.allowed, "masked_scores": t.masked_scores}))
    steps += [Step("Softmax over the encoder positions (each row)", r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}",
                   {"weights": t.weights}),
              Step("Weighted sum of the encoder values", r"o_i = \sum_j \alpha_{ij} v_j", {"output": t.output})]
    return steps


topic(Topic(
    "cross-attention", "Cross-attention: queries from the decoder, keys and values from the encoder",
    (Param("decoder_states", "matrix (n×d_dec)"), Param("encoder_output", "matrix (m×d_enc)"),
     Param("w_query", "matrix (d_dec×d_k; d_k×d_dec with layout linear)"),
     Param("w_key", "matrix (d_enc×d_k; d_k×d_enc with layout linear)"),
     Param("w_value", "matrix (d_enc×d_v; d_v×d_enc with layout linear)"),
     Param("mask", "n×m of 0/1, 1 = may attend (optional)", None),
     Param("scale", "number (1/√d_k)", None),
     Param("layout", '"x-w": Q = X W_Q (Vaswani et al.); or "linear": Q = X W_Qᵀ (torch.nn.Linear)', "x-w")),
    ("query", "key", "value", "scores", "weights", "output"),
    lambda p: engine.cross_attention(p["decoder_states"], p["encoder_output"], p["w_query"], p["w_key"], p["w_value"],
                                     mask=p["mask"], scale=p["scale"], layout=p["layout"]),
    _cross_steps,
    lambda p: {"roles": "queries from the decoder, keys and values from the encoder output",
               "layout": {"x-w": "Q = X W_Q, W_Q is d_model×d_k (Vaswani et al. 2017)",
                          "linear": "Q = X W_Qᵀ, W_Q is d_k×d_model (torch.nn.Linear)"}.get(p["layout"], ""),
               "scale": "1/√d_k" if p["scale"] is None else str(p["scale"]),
               "mask": "1 = may attend; masked weights are 0" if p["mask"] is not None else "none"},
))

_ALIGN = {"top-left": r"j \le i", "bottom-right": r"j \le i + (m - n)"}

topic(Topic(
    "causal-mask", "Causal mask: masked scores and weights of a decoder's self-attention",
    (Param("scores", "matrix (n×m): rows queries, columns keys"),
     Param("alignment", '"top-left": j ≤ i (torch is_causal); or "bottom-right": j ≤ i + m − n (KV cache)', "top-left"),
     Param("scale", "number applied before the mask", 1.0)),
    ("allowed", "masked_scores", "weights", "masked_count"),
    lambda p: engine.causal_softmax(p["scores"], alignment=p["alignment"], scale=p["scale"]),
    lambda p, t: [
        Step("Causal mask: query i may attend key j only if " + ("j ≤ i" if p["alignment"] == "top-left" else "j ≤ i + m − n"),
             rf"M_{{ij}} = 1 \text{{ if }} {_ALIGN.get(p['alignment'], '')} \text{{ else }} 0",
             {"allowed": t.allowed, "masked_count": t.masked_count}),
        Step("Masked scores: −∞ where the mask is 0", r"s_{ij} = -\infty \text{ where } M_{ij} = 0",
             {"masked_scores": t.masked_scores}),
        Step("Softmax of each row: e^(−∞) = 0, so masked weights are 0 and each row sums to 1",
             r"\alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j' : M_{ij'} = 1} e^{s_{ij'}}}", {"weights": t.weights}),
    ],
    lambda p: {"alignment": {"top-left": "top-left: j ≤ i (torch's is_causal)",
                             "bottom-right": "bottom-right: j ≤ i + m − n (causal_lower_right; decoding with a cache)"}
               .get(p["alignment"], ""),
               "mask": "−∞ before the softmax; masked weights are 0"},
))

topic(Topic(
    "teacher-forcing", "Teacher forcing: the right-shifted decoder input and the labels",
    (Param("tokens", "list of target tokens (strings or ids)"), Param("bos", "start token", "<go>"),
     Param("eos", "end token appended to the labels (optional)", None)),
    ("decoder_input", "labels"),
    lambda p: engine.teacher_forcing(p["tokens"], bos=p["bos"], eos=p["eos"]),
    lambda p, t: [
        Step("Shift the target right by one and start with the start token",
             r"\text{input} = [\text{bos}, y_1, \text{…}, y_{T-1}]" if p["eos"] is None
             else r"\text{input} = [\text{bos}, y_1, \text{…}, y_T]", {"decoder_input": t.decoder_input}),
        Step("Position t is trained to predict the next target token",
             r"\text{labels} = [y_1, \text{…}, y_T]" if p["eos"] is None else r"\text{labels} = [y_1, \text{…}, y_T, \text{eos}]",
             {"labels": t.labels}),
    ],
    lambda p: {"shift": "right by one position (Vaswani et al. 2017, §3.1)",
               "eos": "none" if p["eos"] is None else f"{p['eos']} appended to the labels"},
))

topic(Topic(
    "rope-score", "Attention score after rotary position embedding",
    (Param("query", "vector (even length)"), Param("key", "vector (same length)"),
     Param("position_query", "int"), Param("position_key", "int"),
     Param("base", "number", 10000), Param("style", '"interleaved" or "rotate-half"', "interleaved")),
    ("query_rotated", "key_rotated", "score"),
    lambda p: engine.rope_score(p["query"], p["key"], p["position_query"], p["position_key"], base=p["base"],
                                style=p["style"]),
    lambda p, t: [
        Step("Rotate the query by its position", r"q' = R_{m}\, q,\ \text{pair } j \text{ by } m\theta_j",
             {"angles_query": t.angles_query, "query_rotated": t.query_rotated}),
        Step("Rotate the key by its position", r"k' = R_{n}\, k", {"angles_key": t.angles_key, "key_rotated": t.key_rotated}),
        Step("Score: depends on the positions only through m − n", r"q' \cdot k' = q^\top R_{n - m}\, k",
             {"offset": t.offset, "score": t.score}),
    ],
    lambda p: {"style": {"interleaved": "pairs (x0,x1),(x2,x3),… (RoFormer)",
                         "rotate-half": "pairs (x_j, x_{j+d/2}) (GPT-NeoX, Llama)"}.get(p["style"], ""),
               "frequencies": f"θ_j = {p['base']}^(−2j/d)"},
))

topic(Topic(
    "positional-encoding-relative", "Sinusoidal encodings at p and p + k: the dot product depends on k only",
    (Param("position", "int p"), Param("offset", "int k"), Param("d_model", "int (even)"), Param("base", "number", 10000)),
    ("encoding", "shifted", "dot", "wavelengths"),
    lambda p: engine.positional_encoding_relative(p["position"], p["offset"], p["d_model"], base=p["base"]),
    lambda p, t: [
        Step("Frequencies and wavelengths of the (sin, cos) pairs",
             r"\omega_i = \text{base}^{-2i/d_{\text{model}}},\ λ_i = 2π / \omega_i",
             {"frequencies": t.frequencies, "wavelengths": t.wavelengths}),
        Step("Encodings at p and p + k", r"PE_{(p, 2i)} = \sin(p\,\omega_i),\ PE_{(p, 2i+1)} = \cos(p\,\omega_i)",
             {"encoding": t.encoding, "shifted": t.shifted}),
        Step("Dot product: sin a sin b + cos a cos b = cos(a − b) for each pair",
             r"PE(p) \cdot PE(p + k) = \sum_i \cos(k\,\omega_i)", {"pair_terms": t.pair_terms, "dot": t.dot}),
    ],
    lambda p: {"layout": "sin at even indices 2i, cos at odd 2i+1 (Vaswani et al. 2017)"},
))

topic(Topic(
    "lora-memory", "Training memory LoRA saves on gradients and optimizer states",
    (Param("d", "int (out features)"), Param("k", "int (in features)"), Param("r", "int (rank)"),
     Param("num_matrices", "int", 1), Param("bytes_per_value", "int (4 for float32, 2 for bf16)", 4),
     Param("optimizer", '"adam" (2 states), "sgd-momentum" (1) or "sgd" (0)', "adam")),
    ("trainable_params", "full_params", "fraction", "bytes_per_param", "full_training_bytes", "lora_training_bytes",
     "saved_bytes", "saved_mib"),
    lambda p: engine.lora_memory(p["d"], p["k"], p["r"], num_matrices=p["num_matrices"],
                                 bytes_per_value=p["bytes_per_value"], optimizer=p["optimizer"]),
    lambda p, t: [
        Step("Trained parameters: LoRA's B (d×r) and A (r×k) against the full matrices",
             r"\text{num\_matrices} \cdot r(d + k)\ \text{vs}\ \text{num\_matrices} \cdot d k",
             {"trainable_params": t.trainable_params, "full_params": t.full_params, "fraction": t.fraction}),
        Step("Values kept per trained parameter: its gradient and the optimizer's states",
             r"1 + \text{states},\ \text{bytes} = (1 + \text{states}) \cdot \text{bytes per value}",
             {"values_per_param": t.values_per_param, "bytes_per_param": t.bytes_per_param}),
        Step("Training memory of each", r"\text{params} \times \text{bytes per parameter}",
             {"full_training_bytes": t.full_training_bytes, "lora_training_bytes": t.lora_training_bytes}),
        Step("Saved",
             r"(d k - r(d + k)) \cdot \text{num\_matrices} \cdot \text{bytes per parameter},"
             r"\ 1\ \text{MiB} = 2^{20}\ \text{bytes}",
             {"saved_bytes": t.saved_bytes, "saved_mib": t.saved_mib}),
    ],
    lambda p: {"counted": "gradients and optimizer states of the trained values; frozen weights and activations "
                          "are the same for both and not counted",
               "optimizer": f"{p['optimizer']}", "bytes_per_value": str(p["bytes_per_value"])},
))

topic(Topic(
    "training-time", "Training time from a compute budget",
    (Param("peak_flops", "FLOP/s of one accelerator", REQUIRED), Param("compute", "C (FLOPs)", None),
     Param("params", "N (parameters; with tokens, C = 6ND)", None), Param("tokens", "D (training tokens)", None),
     Param("num_gpus", "int", 1), Param("utilization", "fraction of peak achieved (MFU), in (0, 1]", 1.0)),
    ("compute", "throughput", "seconds", "days"),
    lambda p: engine.training_time(compute=p["compute"], params=p["params"], tokens=p["tokens"], num_gpus=p["num_gpus"],
                                   peak_flops=p["peak_flops"], utilization=p["utilization"]),
    lambda p, t: ([] if p["compute"] is not None else
                  [Step("Training compute", r"C = 6 N D", {"compute": t.compute})])
    + [Step("Sustained throughput of the cluster", r"\text{GPUs} \times \text{peak} \times \text{utilisation}",
            {"throughput": t.throughput}),
       Step("Time", r"t = C / \text{throughput},\ 1\ \text{day} = 86400\ \text{s}",
            {"seconds": t.seconds, "hours": t.hours, "days": t.days})],
    lambda p: {"compute": "C = 6·N·D FLOPs (Kaplan et al. 2020)", "utilization": str(p["utilization"])},
))

"""`examprep solve`: the engine behind a contract of topics, named parameters and answers.

``contract.py`` holds the types (Param, Step, Topic, Mistake, Ecf) and the API; each subject area's
topics, named step builders, known mistakes and ECF rules are in ``solve/<area>.py``, beside its
engine module ``engine/<area>.py``; ``batch.py`` answers `solve --batch`. The registry below lists
every topic once: the contract's first topics, then the topics later generators added, then the
topics real exams ask — the order `solve --list` shows and docs/topics.md (``reference.py``, written
from these tables) documents.
"""
from examprep.solve import (
    activations, attention, bptt, conv, counts, decoder, dense, dropout, groupnorm, minimize, network, norm, optim,
    pool, positions, regression, residual, rnn, schedule, softmax,
)
from examprep.solve.batch import run_batch
from examprep.solve.contract import (
    REQUIRED, TOPICS, Ecf, Refusal,
    answers_json, Mistake, Mistakes, Param, Ref, Solution, Step, Topic, answer_only, compute, ecf, full_params,
    get_topic, jsonable, mistakes, read_params, register, resolve_params, solution_dict, solve, steps_of, to_json,
    topics_json,
)

register(
    softmax.SOFTMAX, activations.ACTIVATION, softmax.CROSS_ENTROPY, dense.DENSE, dense.MLP_BACKPROP,
    regression.LINEAR_REGRESSION, conv.CONV_OUTPUT_SIZE, conv.RECEPTIVE_FIELD, conv.CONV2D, pool.MAX_POOL,
    rnn.RNN_CELL, rnn.LSTM_CELL, rnn.GRU_CELL, counts.PARAM_COUNT, norm.LAYER_NORM, positions.POSITIONAL_ENCODING,
    positions.ROPE, attention.ATTENTION, counts.LORA, counts.SCALING_LAW,
    residual.RESIDUAL, residual.RESIDUAL_STACK, rnn.RNN_UNROLL, rnn.VANISHING_GRADIENT,
    attention.MULTI_HEAD_SHAPES, decoder.CROSS_ATTENTION, decoder.CAUSAL_MASK, decoder.TEACHER_FORCING,
    positions.ROPE_SCORE, positions.POSITIONAL_ENCODING_RELATIVE, counts.LORA_MEMORY, counts.TRAINING_TIME,
    # the topics real exams ask (the contract's second table)
    pool.AVG_POOL, network.NETWORK_SHAPES, norm.BATCH_NORM, dropout.DROPOUT, dense.MLP_REGRESSION,
    regression.LOGISTIC_REGRESSION, bptt.RNN_BPTT, attention.SELF_ATTENTION, optim.OPTIMIZER_STEP,
    # the second sweep of real exams (issue 38)
    groupnorm.GROUP_NORM, groupnorm.INSTANCE_NORM, schedule.LR_SCHEDULE, minimize.MINIMIZE, bptt.RNN_BPTT_OUTPUT,
)

__all__ = [
    "REQUIRED", "TOPICS", "Ecf", "Refusal",
    "answers_json", "Mistake", "Mistakes", "Param", "Ref", "Solution", "Step", "Topic", "answer_only",
    "compute", "ecf", "full_params", "get_topic", "jsonable", "mistakes", "read_params", "resolve_params", "run_batch",
    "solution_dict", "solve", "steps_of", "to_json", "topics_json",
]

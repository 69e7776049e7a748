"""Problem generators: one module per problem, each registered by name (`examprep topics` lists them).

The framework (Stream, Draft, the @generator decorator, the checks build() applies) is in
``framework.py``; each generator module draws its parameters, calls the engine once per answer,
builds its statement and its worked solution from solve's named steps, takes its misconceptions
from solve's per-answer tables (adding problem-specific ones through the engine) and draws its own
figures.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
from typing import Any

import numpy as np

from examprep.errors import ParamError, UnknownTopicError
from examprep.generators.framework import (
    REGISTRY, Degenerate, Draft, Generator, Stream, _check, generator, nice, steps_from,
)
from examprep import solve
from examprep.problem import Problem
from examprep.solve.contract import TOPICS, consulted_topics, jsonable

__all__ = ["ALIASES", "REGISTRY", "Degenerate", "Draft", "Generator", "PinError", "Stream", "all_generators", "build",
           "canonical", "catalogue_json", "figures", "generator", "get", "get_drawable", "load_all", "mark_shapes", "nice",
           "steps_from"]


def all_generators() -> dict[str, Generator]:
    """Every registered generator, those that need options (a checkpoint) included (each module, imported at
    the end of this one, registers itself)."""
    return REGISTRY


def load_all() -> dict[str, Generator]:
    """The self-contained generators (each module registers itself on import)."""
    return {n: g for n, g in all_generators().items() if not g.requires}


def get_drawable(name: str, where: str) -> Generator:
    """``get(name)`` for commands that draw problems with no options to give (the quiz, the
    sheets): a generator that requires some (attention-from-model needs a trained model's
    --checkpoint) is a ParamError saying how to use it instead. ``where``: the command, for the message."""
    gen = get(name)
    if gen.requires:
        raise ParamError(f"{gen.name} needs a trained model (--{gen.requires[0]}), which {where} cannot take; "
                         f"use `examprep generate {gen.name} --{gen.requires[0]} DIR` instead")
    return gen


def solve_topics_of(name: str) -> list[str]:
    """The solve topics whose answers the generator ``name``'s problems ask (found by building one,
    level 1, seed 0); [] for a generator that needs a trained model. UnknownTopicError for a name
    that is not a generator."""
    gen = get(name)
    if gen.requires:
        return []
    with consulted_topics() as used:
        build(gen.name, 0, gen.levels[0], False)
    return list(used)


def topic_for_answers(name: str) -> Any:
    """The solve topic whose answers `examprep topics --answers NAME` lists: NAME itself, or, for a
    generator that `examprep topics` lists, the one solve topic its parts come from. UnknownTopicError
    (saying that --answers takes a solve topic, and which one a generator uses) otherwise."""
    try:
        return solve.get_topic(name)
    except UnknownTopicError as err:
        name = next((g for g in all_generators() if g.lower() == name.strip().lower()), "")
        if not name:
            raise
        used = solve_topics_of(name)
        if len(used) == 1:
            return solve.get_topic(used[0])
        uses = f"its parts come from {', '.join(used)}" if used else "it computes its answers from a trained model"
        raise UnknownTopicError(f"--answers takes a solve topic (`examprep solve --list` names them); {name} is a "
                                f"generator and {uses}") from err


# Other names of an exercise: its solve topic's name (`generate gru-cell` is gru-step's problem) and
# a name for what the problem asks where the generator's own name says less (receptive-field asks
# output sizes and "same" padding too). A generator is never renamed: its name keys the random
# stream, the golden files, keys, recipes and review histories, and an alias resolves to the
# generator itself, so every one of them keeps the one name. The solve side: solve.contract.ALIASES.
ALIASES = {"gru-cell": "gru-step", "lstm-cell": "lstm-step", "rnn-cell": "rnn-step",
           "multi-head-shapes": "multi-head", "cnn-sizes": "receptive-field"}


def canonical(name: str) -> str:
    """The generator's own name for ``name`` (an alias's generator; any other name as it is)."""
    return ALIASES.get(name, name)


def get(name: str) -> Generator:
    gens = all_generators()
    if canonical(name) in gens:
        return gens[canonical(name)]
    close = ([canonical(g) for g in (*gens, *ALIASES) if g.lower() == name.strip().lower()]    # RNN-STEP: rnn-step
             or difflib.get_close_matches(name.strip().lower(), list(gens), n=3, cutoff=0.4))
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `examprep topics`"
    raise UnknownTopicError(f"unknown topic {name!r}{hint}")


PIN_TRIES = 1000       # draws searched for one whose parameters match a recipe's pins


def build(name: str, seed: int, difficulty: int = 1, calculator_free: bool = False,
          options: dict[str, Any] | None = None, pins: dict[str, Any] | None = None) -> Problem:
    """The Problem of generator ``name`` for (seed, difficulty, calculator_free), deterministically.

    ``pins`` (a recipe's ``params = {...}``): keys of the Problem's params and the values they must
    have; the generator draws the rest, and its draws are searched in order (the same order for the
    same seed, so a pinned problem rebuilds bit for bit) for the first that keeps every pin. The
    pins are stored in the Problem.

    Raises UnknownTopicError for an unknown name, ParamError for a level the generator lacks, a
    calculator-free request it cannot meet, or pins no draw keeps (PinError).
    """
    gen = get(name)
    if difficulty not in gen.levels:
        raise ParamError(f"--difficulty: {name} has levels {', '.join(map(str, gen.levels))}, got {difficulty}")
    if calculator_free and not gen.calculator_free:
        raise ParamError(f"--calculator-free: {name} has no calculator-free variant")
    missing = [r for r in gen.requires if not (options or {}).get(r)]
    if missing:
        raise ParamError(f"--{missing[0]}: {name} needs one; {gen.requires_hint}")
    extra = {"options": options} if gen.requires else {}
    for attempt in range(PIN_TRIES if pins else 200):
        rng = Stream(gen.name, gen.version, seed, difficulty, int(calculator_free), attempt)
        try:
            draft = gen.fn(rng, difficulty, calculator_free, **extra)
            if pins:
                unknown = [k for k in pins if k not in draft.params]
                if unknown:
                    raise PinError(f"params: {name} has no parameter {unknown[0]!r} at level {difficulty} "
                                   f"(its parameters: {', '.join(draft.params)})")
                if not all(_same(draft.params[k], v) for k, v in pins.items()):
                    continue
            draft = _check(draft)
        except Degenerate:
            continue
        return Problem(generator=gen.name, version=gen.version, seed=seed, difficulty=difficulty,
                       title=draft.title, params=draft.params, statement=draft.statement, parts=draft.parts,
                       solution=draft.solution, conventions=draft.conventions, calculator_free=calculator_free,
                       variant=draft.variant, pins=dict(pins or {}))
    if pins:
        shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in pins.items())
        raise PinError(f"params: no draw of {name} at level {difficulty} has {shown} in {PIN_TRIES} tries; pin "
                       f"what the generator chooses among (`examprep generate {name} --json` shows its params), or "
                       "write a question file with fixed values")
    raise RuntimeError(f"{name}: no non-degenerate instance in 200 draws (seed {seed})")  # a generator bug


class PinError(ParamError):
    """A recipe's pinned parameters that the generator does not have or never draws."""


def _same(got: Any, want: Any) -> bool:
    """A drawn parameter equals a pin (numbers to 1e-9, lists entry by entry)."""
    got = jsonable(got)
    if isinstance(want, (list, int, float)) and not isinstance(want, bool) and not isinstance(got, (str, bool)):
        try:
            a, b = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
        except (TypeError, ValueError):
            return got == want
        return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-9 * (1 + np.abs(b))))
    return got == want


def catalogue_json(gens: dict[str, Generator]) -> str:
    """The generators as `examprep topics --json` prints them."""
    return json.dumps([{"topic": g.name, "title": g.title, "syllabus": g.syllabus, "levels": list(g.levels),
                        "version": g.version, "calculator_free": g.calculator_free, "requires": list(g.requires)}
                       for g in gens.values()], ensure_ascii=False)


def figures(problem: Problem) -> list:
    """The figures a problem's worked solution draws beside its numbers, from its own generator
    (none for a generator without any, or one this version does not know)."""
    gen = all_generators().get(problem.generator)
    return list(gen.figures(problem)) if gen is not None and gen.figures is not None else []


def answer_links(problem: Problem) -> dict[str, tuple[str, str]]:
    """The solve topic answer each part of ``problem`` asks, where known: part id → (topic, answer),
    from the part's recipe (``solve:<topic>`` and its ``output``) or, for a part without one, from
    its generator's declaration (``@generator(answers=...)``). Never guessed from a part's name."""
    gen = all_generators().get(problem.generator)
    declared = gen.answers(problem) if gen is not None and gen.answers is not None else {}
    links: dict[str, tuple[str, str]] = {}
    for part in problem.parts:
        rule = part.ecf_rule
        if rule is not None and rule.op.startswith("solve:") and rule.output:
            links[part.id] = (rule.op.removeprefix("solve:"), rule.output)
        elif part.id in declared:
            links[part.id] = declared[part.id]
    return links


def mark_shapes(problem: Problem) -> Problem:
    """``problem`` with its tensor-shape parts marked (Part.tensor_shape), as the solve tables declare
    them (Topic.shapes; an entry of a Topic.shape_lists answer, one layer's shape): a vector part
    whose answer is a shape reads 10×26×26 and says so in templates. Built-in Problems do not store
    the mark (their JSON never changes for it): a fresh one and one read from a key, old or new, are
    marked here alike. The same Problem when nothing changes."""
    links = answer_links(problem)
    marked = []
    for part in problem.parts:
        topic, answer = links.get(part.id, ("", ""))
        t = TOPICS.get(topic)
        shape = t is not None and (answer in t.shapes or answer in t.shape_lists)
        marked.append(dataclasses.replace(part, tensor_shape=True)
                      if shape and part.kind == "vector" and not part.tensor_shape else part)
    if all(a is b for a, b in zip(marked, problem.parts)):
        return problem
    return dataclasses.replace(problem, parts=marked)


# The generator modules, last: each imports this package's names above and registers itself on import.
from examprep.generators import (  # noqa: E402, F401  (imported to register: each module registers itself)
    activation, additive_attention_from_model, attention, attention_from_model, attention_scores, avg_pool,
    batch_norm, causal_mask, conv2d, conv2d_channels, cross_attention, dense_backward, dropout, gru_from_model,
    group_norm, gru_step, layer_norm, linear_regression,
    logistic_regression, lora, lstm_step, max_pool, mlp_backprop, mlp_regression, multi_head, network_shapes,
    optimizer_step, param_count, positional_encoding, receptive_field, residual, rnn_bptt, rnn_step, rope,
    scaling_law, self_attention, softmax_cross_entropy, vanishing_gradient,
    lr_schedule, minimize, network_graph, optimizer_state, rnn_bptt_output,        # issue 38
)

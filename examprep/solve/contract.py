"""The `examprep solve` contract: topics with named parameters, their answers and worked steps, and for
each answer the known mistakes and the rule that carries a student's earlier answers forward.

``docs/topics.md`` is the reference of topic names, parameter names, defaults, answer names, known
mistakes and refusals; it is generated from these tables (``solve/reference.py``: `examprep solve
--reference`), and a test holds the page to them. A topic checks its parameters, calls one engine
function and builds its worked steps from the trace with a named step builder
(``gru_steps(p, t) -> GRUSteps(reset, update, candidate, blend)``).
Known mistakes (:class:`Mistake`: the engine convention that computes a wrong answer and the
explanation a student reads) and ECF rules (:class:`Ecf`) are declared once per answer, beside the
steps in ``solve/<area>.py``; generators and authored questions read the same tables.

The registry :data:`TOPICS` is filled once, in contract order, by ``examprep/solve/__init__.py``.
"""
from __future__ import annotations

import difflib
import json
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from examprep.engine._core import Trace, all_finite
from examprep.errors import ExamprepError, ParamError, UnknownTopicError
from examprep.fileio import read_user_text

from examprep.problem import EcfRule as Recipe, Misconception


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One parameter of a topic: its JSON name, what it holds, and its default (or REQUIRED)."""

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""


@dataclass(frozen=True)
class Step:
    """One step of a worked solution: a title, a LaTeX formula and the values it produces."""

    title: str
    formula: str
    values: dict[str, Any] = field(default_factory=dict)


def steps_of(named: Iterable[Any]) -> list[Step]:
    """The steps of a named step tuple in order: a field may hold a Step, a list of Steps (one per
    time step, say) or None (a step this instance does not have)."""
    out: list[Step] = []
    for s in named:
        if isinstance(s, Step):
            out.append(s)
        elif s is not None:
            out.extend(s)
    return out


class Mistake:
    """A known wrong way to an answer and the explanation a student reads.

    Most are the topic's own engine call with some parameters changed, declared as keywords:
    ``Mistake("swapped-blend", convention="pytorch", why="…")``; a convention may be a function of
    the problem's (complete) parameters, e.g. the scale 1/d_k of a student who divides by d_k. A
    mistake whose conventions are the problem's own is no mistake there and is skipped (the
    "pytorch" blend is right in a PyTorch-convention problem). Others apply another engine function
    to the right trace: ``Mistake("tanh-gate", why="…", compute=lambda p, t: activation("tanh", t.pre_r).output)``.
    ``when(p)`` (optional) limits a mistake to the problems it makes sense for (a sigmoid where the
    cell squashes with tanh).
    """

    __slots__ = ("id", "why", "conventions", "compute", "when")

    def __init__(self, id: str, *, why: str, compute: Callable[[dict[str, Any], Trace], Any] | None = None,
                 when: Callable[[dict[str, Any]], bool] | None = None, **conventions: Any):
        if (compute is None) == (not conventions):
            raise ValueError(f"mistake {id!r}: give its conventions or a compute function (one of the two)")
        self.id, self.why, self.conventions, self.compute, self.when = id, why, conventions, compute, when

    def applies(self, p: Mapping[str, Any]) -> bool:
        return self.when is None or bool(self.when(p))

    def changes(self, p: Mapping[str, Any]) -> dict[str, Any] | None:
        """The parameters this mistake changes in problem parameters ``p`` (name → mistaken value),
        or None where they are ``p``'s own."""
        changed = {k: (v(p) if callable(v) else v) for k, v in self.conventions.items()}
        if all(k in p and p[k] == v for k, v in changed.items()):
            return None
        return changed

    def params(self, p: Mapping[str, Any]) -> dict[str, Any] | None:
        """The mistaken parameters for problem parameters ``p``, or None where they are ``p``."""
        changed = self.changes(p)
        return None if changed is None else {**p, **changed}

    def __repr__(self) -> str:
        how = ", ".join(f"{k}={v!r}" for k, v in self.conventions.items()) if self.conventions else "compute=…"
        return f"Mistake({self.id!r}, {how})"


@dataclass(frozen=True)
class Ref:
    """In an ECF rule's arguments: the student's own answer to the part that asks ``answer``."""

    answer: str


@dataclass(frozen=True)
class Ecf:
    """An answer recomputed from a student's earlier answers (error carried forward): ``op`` (an
    examprep.ecf operation, or ``solve:<topic>``) with ``args(p, t)`` built from the problem's
    parameters and trace, where a :class:`Ref` stands for an earlier part's answer; ``output`` picks
    one answer of a solve topic; ``when(p)`` (optional) limits the rule to the problems it holds for
    (δ · dy/dx is ∂L/∂x for one feature only; an output computed from W_O only where there is one)."""

    op: str
    args: Callable[[dict[str, Any], Trace], dict[str, Any]]
    output: str | None = None
    when: Callable[[dict[str, Any]], bool] | None = None

    def recipe(self, p: dict[str, Any], t: Trace, parts: Mapping[str, str],
               fmt: Callable[[Any], Any] | None = None) -> Recipe | None:
        """The Recipe with each Ref(answer) replaced by ``{"$ref": parts[answer]}`` (None when a
        referenced answer is not asked: no part in ``parts``). An array in the arguments is a value
        in the form of the answers (a vector, or a number where a problem shows one-unit vectors as
        numbers) and is written through ``fmt`` (default: as JSON lists). None too where ``when``
        says the rule does not hold for ``p``."""
        if self.when is not None and not self.when(p):
            return None
        missing: list[str] = []
        fmt = fmt or jsonable

        def sub(v: Any) -> Any:
            if isinstance(v, np.ndarray):
                return fmt(v)
            if isinstance(v, Ref):
                if v.answer not in parts:
                    missing.append(v.answer)
                    return None
                return {"$ref": parts[v.answer]}
            if isinstance(v, dict):
                return {k: sub(x) for k, x in v.items()}
            if isinstance(v, list):
                return [sub(x) for x in v]
            return v

        args = sub(self.args(p, t))
        return None if missing else Recipe(self.op, args, self.output)


@dataclass(frozen=True)
class Refusal:
    """An input the contract refuses with one error line (as PyTorch refuses it), and parameters that
    show it: docs/topics.md prints both with the error they give, and a test checks each example is
    refused."""

    what: str
    example: Mapping[str, Any]


@dataclass
class Solution:
    topic: str
    params: dict[str, Any]
    answer: dict[str, Any]
    steps: list[Step]
    conventions: dict[str, str]


@dataclass(frozen=True)
class Topic:
    """A solve topic: parameters, the engine call, the answer names, the named worked steps, and per
    answer its known mistakes and ECF rules.

    ``compute`` calls the engine with complete parameters; ``check`` (optional) refuses values the
    engine accepts but the contract does not (a mistaken convention, say) before ``compute`` runs for
    a user; mistakes call ``compute`` directly.
    ``refuses`` lists the inputs it refuses that a careful reader could take another way (docs/topics.md).
    ``shapes`` names the answers that are one tensor shape (written 10×26×26 as well as [10, 26, 26]);
    ``shape_lists`` those that are a list of shapes, one per layer (a part asking one of them asks a
    shape; one asking the whole list is written 3×28×28; 6×24×24; 864). Graders and templates read
    them here, for new and old keys alike (examprep.generators.mark_shapes).
    """

    name: str
    title: str
    params: tuple[Param, ...]
    answers: tuple[str, ...]
    compute: Callable[[dict[str, Any]], Trace]
    steps: Callable[[dict[str, Any], Trace], Iterable[Any]]
    conventions: Callable[[dict[str, Any]], dict[str, str]] = lambda p: {}
    answer_names: Callable[[dict[str, Any], Trace], Iterable[str]] | None = None
    check: Callable[[dict[str, Any]], None] | None = None
    mistakes: Mapping[str, tuple[Mistake, ...]] = field(default_factory=dict)
    ecf: Mapping[str, tuple[Ecf, ...]] = field(default_factory=dict)
    shapes: tuple[str, ...] = ()
    shape_lists: tuple[str, ...] = ()
    refuses: tuple[Refusal, ...] = ()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def listed_answers(self) -> tuple[str, ...]:
        """The answers, then the worked-step values that are no answer of the topic but have mistakes
        or ECF rules in its tables (rnn-cell's pre_activation, a part of the rnn-step problems)."""
        extra = [k for k in (*self.mistakes, *self.ecf) if k not in self.answers]
        return tuple(self.answers) + tuple(dict.fromkeys(extra))


TOPICS: dict[str, Topic] = {}


def register(*topics: Topic) -> dict[str, Topic]:
    """Add topics to the registry (once each, in the order given)."""
    for t in topics:
        if t.name in TOPICS:
            raise ValueError(f"solve topic {t.name!r} registered twice")
        TOPICS[t.name] = t
    return TOPICS


# ------------------------------------------------------------------------------------ the API

_RECORDERS: list[list[str]] = []       # open consulted_topics() blocks


@contextmanager
def consulted_topics() -> Iterator[list[str]]:
    """The names of the topics get_topic returns within the block, in order, once each: which
    solve topics a generator's problem takes its answers from."""
    seen: list[str] = []
    _RECORDERS.append(seen)
    try:
        yield seen
    finally:
        _RECORDERS.remove(seen)


# Other names of a topic: the generator's name of the same exercise (`solve gru-step` is gru-cell).
# An alias resolves to the topic itself (its name in a solution, a question file's problem and the
# consulted topics). The generator side: generators.ALIASES. Not aliased: receptive-field, which
# names both a solve topic (the receptive field of a stack) and a generator asking more (output
# sizes, the receptive field, "same" padding: its alias cnn-sizes), each computing its own thing.
ALIASES = {"gru-step": "gru-cell", "lstm-step": "lstm-cell", "rnn-step": "rnn-cell", "multi-head": "multi-head-shapes"}


def get_topic(name: Any) -> Topic:
    if not isinstance(name, str):
        raise UnknownTopicError(f"topic: expected a topic name, got {name!r}")
    name = ALIASES.get(name, name)
    if name in TOPICS:
        for seen in _RECORDERS:
            if name not in seen:
                seen.append(name)
        return TOPICS[name]
    close = ([ALIASES.get(t, t) for t in (*TOPICS, *ALIASES) if t.lower() == name.strip().lower()]
             or difflib.get_close_matches(name.strip().lower(), list(TOPICS), n=3, cutoff=0.5))
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `examprep solve --list`"
    raise UnknownTopicError(f"unknown topic {name!r}{hint}")


def resolve_params(t: Topic, params: Any) -> dict[str, Any]:
    """The given params with defaults filled in; unknown or missing names raise ParamError."""
    if not isinstance(params, dict):
        raise ParamError(f"params: expected a JSON object of parameters, got {type(params).__name__}")
    names = [p.name for p in t.params]
    for name in params:
        if name not in names:
            close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (topic {t.name!r} takes {', '.join(names)})"
            raise ParamError(f"{name}: unknown parameter{hint}")
    out: dict[str, Any] = {}
    for p in t.params:
        if p.name in params:
            out[p.name] = params[p.name]
        elif p.default is REQUIRED:
            raise ParamError(f"{p.name}: missing; topic {t.name!r} needs it ({p.kind})")
        else:
            out[p.name] = p.default
    return out


def full_params(topic_name: str, params: Any) -> dict[str, Any]:
    """``params`` of a topic with its defaults filled in (what step builders and mistakes read)."""
    return resolve_params(get_topic(topic_name), params)


def stated_params(topic_name: str, params: Mapping[str, Any], drop: Iterable[str] = ()) -> dict[str, Any]:
    """Complete parameters as a problem states them: each one not at the topic's default (nor named in
    ``drop``), so that an ECF recipe reads as its problem was given."""
    defaults = {q.name: q.default for q in get_topic(topic_name).params}
    drop = set(drop)
    return {k: v for k, v in params.items()
            if k not in drop and not (isinstance(v, (str, int, float, bool, type(None))) and v == defaults.get(k, REQUIRED))}


def compute(topic_name: str, params: Any) -> tuple[Topic, dict[str, Any], Trace]:
    t = get_topic(topic_name)
    full = resolve_params(t, params)
    if t.check:
        t.check(full)
    return t, full, t.compute(full)


def _answer(t: Topic, full: dict[str, Any], trace: Trace) -> dict[str, Any]:
    names = t.answer_names(full, trace) if t.answer_names else t.answers
    return {n: trace[n] for n in names}


def solve(topic_name: str, params: Any) -> Solution:
    """Solve one topic: the answer, the worked steps and the conventions used.

    Raises ParamError (or a subclass) for bad input; the message names the parameter.
    """
    t, full, trace = compute(topic_name, params)
    return Solution(t.name, params, _answer(t, full, trace), steps_of(t.steps(full, trace)), t.conventions(full))


def answer_only(topic_name: str, params: Any) -> dict[str, Any]:
    """The answer alone (no steps): what --batch needs."""
    t, full, trace = compute(topic_name, params)
    return _answer(t, full, trace)


# ------------------------------------------------------------------------- mistakes and ECF rules

class Mistakes:
    """The known mistakes of one topic's answers for one problem, each computed once through the engine.

    ``mistakes("gru-cell", params, trace)``: ``of("h_new", fmt)`` gives the Misconceptions the table
    declares for h_new, ``get("h_new", "no-reset", fmt)`` one of them, ``trace(**conventions)`` the
    engine's trace with some parameters changed (cached, so an answer that is another part's mistake
    is computed once), ``call(params)`` the trace of other parameters of the topic, ``at(**conventions)``
    the same table for a variant of the problem.
    """

    def __init__(self, topic: Topic, params: dict[str, Any], trace: Trace | None = None,
                 cache: dict[Any, Trace] | None = None, reprs: dict[int, tuple[Any, str]] | None = None):
        self.topic, self.params = topic, params
        self._cache = {} if cache is None else cache
        self._reprs = {} if reprs is None else reprs
        self._own_key: tuple | None = None
        self._own_map: dict[str, str] | None = None
        self._values: dict[tuple[int, str], tuple[Mistake, Any, BaseException | None]] = {}
        if trace is not None:
            self._cache.setdefault(self._key(params), trace)

    def _key(self, p: Mapping[str, Any]) -> tuple:
        """The cache key of parameters ``p``: each (name, repr(value)) in name order. A value object
        met before (the problem's own arrays, in every mistake's parameters) is not written again: a
        problem's parameters are built anew, never changed in place once given to its table."""
        return tuple([(k, self._repr(p[k])) for k in sorted(p)])

    def _repr(self, v: Any) -> str:
        seen = self._reprs.get(id(v))
        if seen is None or seen[0] is not v:
            seen = self._reprs[id(v)] = (v, repr(v))     # the value kept: its id is not reused meanwhile
        return seen[1]

    def _changed(self, changed: Mapping[str, Any]) -> Trace:
        """The trace of this problem's parameters with ``changed`` ones: keyed as _key({**params,
        **changed}) keys it (the same key, so the cache is shared with every other way in) from the
        problem's own key, without building the parameters unless the engine is called."""
        if self._own_key is None:
            self._own_key = self._key(self.params)
        if self._own_map is None:
            self._own_map = dict(self._own_key)
        k = tuple(sorted({**self._own_map, **{n: self._repr(v) for n, v in changed.items()}}.items()))
        if k not in self._cache:
            self._cache[k] = self.topic.compute({**self.params, **changed})
        return self._cache[k]

    def _trace_for(self, p: dict[str, Any]) -> Trace:
        if p is self.params:                 # the problem's own trace, asked for by most mistakes: key once
            if self._own_key is None:
                self._own_key = self._key(p)
            k = self._own_key
        else:
            k = self._key(p)
        if k not in self._cache:
            self._cache[k] = self.topic.compute(dict(p) if p is self.params else p)
        return self._cache[k]

    def trace(self, **conventions: Any) -> Trace:
        """The engine's trace for this problem with ``conventions`` changed."""
        return self._changed(conventions) if conventions else self._trace_for(self.params)

    def call(self, params: Mapping[str, Any]) -> Trace:
        """The engine's trace for other parameters of the same topic (defaults filled in; cached too)."""
        return self._trace_for(resolve_params(self.topic, dict(params)))

    def at(self, **conventions: Any) -> "Mistakes":
        """The table for the problem with ``conventions`` changed (sharing computed traces)."""
        return Mistakes(self.topic, {**self.params, **conventions}, cache=self._cache, reprs=self._reprs)

    def declared(self, answer: str) -> tuple[Mistake, ...]:
        return self.topic.mistakes.get(answer, ())

    def value(self, mistake: Mistake, answer: str) -> Any:
        """The value ``mistake`` gives for ``answer`` (read from trace field ``answer``), or None where
        it is this problem's own convention or does not apply. Worked out once per table (its ``when``,
        its changed parameters, its engine call or compute function), as is an engine refusal (raised
        again): a generator that reads one value in pieces (network-shapes, once per layer) asks again."""
        seen = self._values.get((id(mistake), answer))
        if seen is None or seen[0] is not mistake:
            try:
                seen = (mistake, self._value(mistake, answer), None)
            except ExamprepError as err:
                seen = (mistake, None, err)
            self._values[(id(mistake), answer)] = seen
        if seen[2] is not None:
            raise seen[2].with_traceback(None)
        return seen[1]

    def _value(self, mistake: Mistake, answer: str) -> Any:
        if not mistake.applies(self.params):
            return None
        if mistake.compute is not None:
            return mistake.compute(self.params, self._trace_for(self.params))
        changed = mistake.changes(self.params)
        return None if changed is None else self._changed(changed)[answer]

    def get(self, answer: str, mistake_id: str, fmt: Callable[[Any], Any] = lambda v: v,
            field: str | None = None) -> Misconception:
        """One declared mistake of ``answer`` as a Misconception (value read from trace ``field``,
        default the answer itself, and shown through ``fmt``)."""
        m = next((m for m in self.declared(answer) if m.id == mistake_id), None)
        if m is None:
            raise KeyError(f"{self.topic.name}: no mistake {mistake_id!r} declared for {answer!r}")
        value = self.value(m, field or answer)
        if value is None:
            raise KeyError(f"{self.topic.name}: {mistake_id!r} is this problem's own convention")
        return Misconception(m.id, fmt(value), m.why)

    def of(self, answer: str, fmt: Callable[[Any], Any] = lambda v: v, field: str | None = None,
           skip: Iterable[str] = ()) -> tuple[Misconception, ...]:
        """Every declared mistake of ``answer`` that is a mistake here, in declaration order. One whose
        wrong computation the engine refuses (padding forgotten before a residual add makes the two
        inputs' shapes differ) is no value a student could write here: left out."""
        skip = set(skip)
        out = []
        for m in self.declared(answer):
            if m.id not in skip:
                try:
                    value = self.value(m, field or answer)
                except ParamError:
                    continue
                if value is not None:
                    out.append(Misconception(m.id, fmt(value), m.why))
        return tuple(out)


def mistakes(topic_name: str, params: dict[str, Any], trace: Trace | None = None) -> Mistakes:
    """The mistakes table of a topic for one problem (its parameters completed with the topic's
    defaults: ``.params``), computing the problem's own trace once (``.trace()``; or give it)."""
    t = get_topic(topic_name)
    return Mistakes(t, resolve_params(t, params), trace)


def ecf(topic_name: str, answer: str, params: dict[str, Any], trace: Trace,
        parts: Mapping[str, str] | Iterable[str], fmt: Callable[[Any], Any] | None = None) -> Recipe | None:
    """The ECF recipe of ``answer``: the first rule the topic declares whose referenced answers are
    all asked. ``parts`` maps an answer to the id of the part that asks it (or lists the answers
    asked, under their own names); ``fmt`` writes array arguments in the answers' form."""
    asked = dict(parts) if isinstance(parts, Mapping) else {a: a for a in parts}
    for rule in get_topic(topic_name).ecf.get(answer, ()):
        recipe = rule.recipe(params, trace, asked, fmt)
        if recipe is not None:
            return recipe
    return None


# ------------------------------------------------------------------------------------ JSON forms

def jsonable(value: Any) -> Any:
    """Numpy values to JSON values; NaN and ±∞ become None (JSON has no such numbers)."""
    kind = type(value)
    if kind is float:                       # plain values first: most calls are on them
        return value if math.isfinite(value) else None
    if kind is int or kind is str or value is None:
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iub":
            return value.astype(int).tolist()
        if value.dtype.kind == "f" and all_finite(value):
            return value.tolist()          # already Python floats in nested lists: nothing to convert
        return jsonable(value.tolist())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if all(type(v) is int or type(v) is float and math.isfinite(v) for v in value):
            return list(value)              # plain finite numbers (no bool, no numpy scalar): as they are
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def solution_dict(s: Solution) -> dict[str, Any]:
    return {"topic": s.topic, "params": jsonable(s.params), "answer": jsonable(s.answer),
            "steps": [{"title": st.title, "formula": st.formula, "values": jsonable(st.values)} for st in s.steps],
            "conventions": s.conventions}


def to_json(s: Solution) -> str:
    return json.dumps(solution_dict(s), allow_nan=False, ensure_ascii=False)


def read_params(text: str | None) -> Any:
    """Parse --params: a JSON object, or @FILE holding one. Missing means {}."""
    if text is None:
        return {}
    source = "--params"
    if text.startswith("@"):
        path = text[1:]
        text = read_user_text(path, f"--params {path}", error=ParamError)     # a pipe refused, never waited on
        source = path
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParamError(f"{source}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    if not isinstance(value, dict):
        raise ParamError(f"{source}: expected a JSON object like {{\"x\": [1, 2]}}, got {type(value).__name__}")
    return value


def topics_json() -> str:
    """Every topic (`examprep solve --list --json`): ``answer`` lists its answers' names; ``mistakes``
    maps each answer to its known mistakes ({id, why}) and ``ecf`` to its ECF rules ({op, output}),
    an empty list where its table declares none (and a worked-step value with a table of its own too:
    Topic.listed_answers)."""
    return json.dumps([{"topic": t.name, "title": t.title,
                        "params": [{"name": p.name, "kind": p.kind,
                                    "default": "required" if p.default is REQUIRED else jsonable(p.default)}
                                   for p in t.params],
                        "answer": list(t.answers),
                        "mistakes": {a: [{"id": m.id, "why": m.why} for m in t.mistakes.get(a, ())]
                                     for a in t.listed_answers()},
                        "ecf": {a: [{"op": e.op, "output": e.output} for e in t.ecf.get(a, ())] for a in t.listed_answers()}}
                       for t in TOPICS.values()], ensure_ascii=False)


def answers_json(t: Topic) -> str:
    """One topic's answers for an author: each answer with its known mistakes (id, explanation) and
    the operations of its ECF rules (`examprep solve --list TOPIC --json`)."""
    return json.dumps({"topic": t.name, "title": t.title,
                       "params": [{"name": p.name, "kind": p.kind,
                                   "default": "required" if p.default is REQUIRED else jsonable(p.default)}
                                  for p in t.params],
                       "answers": [{"name": a, "mistakes": [{"id": m.id, "why": m.why} for m in t.mistakes.get(a, ())],
                                    "ecf": [e.op for e in t.ecf.get(a, ())]} for a in t.answers]},
                      ensure_ascii=False)

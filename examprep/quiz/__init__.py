"""The interactive practice: quiz, timed exam, spaced review, and progress.

    plan.py       what a session draws: weak topics first, unattempted variants, adapted levels; exams
    prompt.py     where a session reads and writes (the prompt, the exam's alarm, the commands)
    session.py    the session: practice and exam, every answer checked by the grader and recorded
    hints.py      the hints a prompt gives, never the answer
    outcomes.py   what a session records, per part, per problem and in all
    views.py      how it looks (rich): panels, verdicts, the exam sheet and the summary
    stats.py      progress and what is due (`examprep stats`, `examprep review --due`)
    run.py        the entry points the commands call: run_quiz, run_review, run_due, run_stats,
                  run_optimize

The public names are re-exported here, with the concept bank's (examprep.sources.concepts: concept
questions from the lectures, validated, as one-part Problems, which sheets and Anki decks use too).
"""
from __future__ import annotations

from examprep.sources.concepts import (CHECKLIST, CONCEPT_PREFIX, CONCEPT_TOPICS, Concept, ConceptBank, ConceptBankError,
                                concept_problem, is_concept, item_of, load_concepts, packaged_bank, stats_topic_of)
from examprep.quiz.hints import formula_hint, hint_text
from examprep.quiz.outcomes import PartOutcome, ProblemOutcome, Summary
from examprep.quiz.plan import (DEFAULT_COUNT, DEFAULT_RECIPE, QuizOptions, adaptive_level, drawable_topics,
                                exam_from_recipe, fresh_seed, pick_topics, plan_concepts, plan_exam, plan_problems,
                                plan_review, validate, variant_seed, weakness)
from examprep.quiz.prompt import COMMANDS, Quit, Terminal, TimeUp
from examprep.quiz.run import open_history, run_due, run_optimize, run_quiz, run_review, run_stats
from examprep.quiz.session import Session, check, wrong_shape
from examprep.quiz.stats import print_due, print_stats, stats_data
from examprep.quiz.views import (answer_sheet, bar, fmt_clock, fmt_duration, part_feedback, print_summary,
                                 problem_panel, sparkline)

__all__ = ["CHECKLIST", "COMMANDS", "CONCEPT_PREFIX", "CONCEPT_TOPICS", "Concept", "ConceptBank", "ConceptBankError",
           "DEFAULT_COUNT", "DEFAULT_RECIPE", "PartOutcome", "ProblemOutcome", "QuizOptions", "Quit", "Session",
           "Summary", "Terminal", "TimeUp", "adaptive_level", "answer_sheet", "bar", "check", "concept_problem",
           "drawable_topics", "exam_from_recipe", "fmt_clock", "fmt_duration", "formula_hint", "fresh_seed",
           "hint_text", "is_concept", "item_of", "load_concepts", "open_history", "packaged_bank",
           "part_feedback", "pick_topics", "plan_concepts", "plan_exam", "plan_problems", "plan_review", "print_due",
           "print_stats", "print_summary", "problem_panel", "run_due", "run_optimize", "run_quiz", "run_review", "run_stats",
           "sparkline", "stats_data", "stats_topic_of", "validate", "variant_seed", "weakness", "wrong_shape"]

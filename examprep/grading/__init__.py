"""Grading: one submission, a class, and the reports of a run.

    grade.py      one student's answers against their problems (error carried forward); the class summary
    batch.py      a class: every readable submission graded, every unreadable one listed with its reason
    selftest.py   checks of a key: its carried-forward rules, and the instructor's self-test
    reports.py    `examprep grade`: settings from the options, outputs planned and written, what is shown

The public names are re-exported here.
"""
from __future__ import annotations

from examprep.grading.batch import BatchResult, grade_batch, problems_for
from examprep.grading.grade import (MAX_SUGGESTIONS, META_FIELDS, ProblemResult, QuestionSummary, Settings,
                                    SubmissionResult, address, flatten_answers, grade_submission, summarise,
                                    unknown_warnings)
from examprep.grading.reports import Outputs, run_grade, settings_from
from examprep.grading.selftest import Drift, ecf_drift, self_test

__all__ = ["BatchResult", "Drift", "MAX_SUGGESTIONS", "META_FIELDS", "Outputs", "ProblemResult", "QuestionSummary", "Settings",
           "SubmissionResult", "address", "ecf_drift", "flatten_answers", "grade_batch", "grade_submission",
           "problems_for", "run_grade", "self_test", "settings_from", "summarise", "unknown_warnings"]

"""Practice sheets: recipes → problems → printable PDFs, Markdown, answer keys, answer templates
and LMS quizzes (the formats: examprep.render.exports.EXPORTS); per-student variants keyed by a secret.

    variants.py   the roster, the secret and the HMAC that gives each student a variant
    build.py      the sheet's copies, their problems (examprep.sources), figures and instructions
    write.py      the outputs, rendered in memory and written all or nothing; make_sheet

A sheet's plan, its recipe, is read by examprep.sources.recipes (the quiz's exams read the same
recipes); its names are re-exported here with this package's own: ``examprep.sheets.make_sheet``
is the `examprep sheet` command's one function.
"""
from __future__ import annotations

from examprep.render.exports import EXPORTS
from examprep.sheets.build import (Copy, Progress, Sheet, build_sheet, font_plan, instructions,
                                   printed_texts, solution_extras)
from examprep.sources import build_problems, recipe_from_topics
from examprep.sources.recipes import (MAX_PROBLEMS, Item, SheetError, SheetRecipe, bundled_recipes, load_recipe,
                                     parse_recipe, with_difficulty)
from examprep.sheets.variants import (LEGACY_WARNING, MAX_STUDENTS, SECRET_KDF, Student, check_pairing, check_secret,
                                      derivation, new_secret, read_roster, read_secret, stretch_secret, variant_digest,
                                      variant_seed, write_secret)
from examprep.sheets.write import (DEFAULT_FORMATS, PDF_CHUNK, SAMPLE_RECIPES, SAMPLE_SEED, Result,
                                   check_output_dir, make_key, make_sheet, parse_formats, planned_paths, render_outputs,
                                   sample_outputs, write_outputs)

__all__ = ["Copy", "DEFAULT_FORMATS", "EXPORTS", "Item", "LEGACY_WARNING", "MAX_PROBLEMS", "MAX_STUDENTS", "PDF_CHUNK",
           "Progress", "Result", "SAMPLE_RECIPES", "SAMPLE_SEED", "SECRET_KDF", "Sheet", "SheetError", "SheetRecipe",
           "Student", "build_problems", "build_sheet", "bundled_recipes", "check_output_dir", "check_pairing",
           "check_secret", "derivation", "font_plan", "instructions", "load_recipe", "make_key", "make_sheet",
           "new_secret", "parse_formats", "parse_recipe", "planned_paths", "printed_texts", "read_roster",
           "read_secret", "recipe_from_topics", "render_outputs", "sample_outputs", "solution_extras",
           "stretch_secret", "variant_digest", "variant_seed", "with_difficulty", "write_outputs", "write_secret"]

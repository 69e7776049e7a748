"""Shared helpers for the sheet tests: PDF text, every formula our topics produce."""
from __future__ import annotations

import io
import re
from functools import lru_cache

from examprep import generators
from examprep.document import Math, Matrix, Text

SEEDS = (0, 1)


def pdf_text(pdf: bytes) -> tuple[str, int]:
    """(all text, page count) of a PDF, extracted by pypdf (an independent reader)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    return "\n".join(page.extract_text() or "" for page in reader.pages), len(reader.pages)


@lru_cache(maxsize=1)
def corpus() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(display formulas, paragraphs with $…$ math, value names) of every generator, level,
    calculator-free variant and a few seeds: statements, prompts and worked solutions."""
    formulas, texts, names = set(), set(), set()
    for name, g in sorted(generators.load_all().items()):
        for level in g.levels:
            for cf in ((False, True) if g.calculator_free else (False,)):
                for seed in SEEDS:
                    p = generators.build(name, seed, level, cf)
                    blocks = list(p.statement) + [b for st in p.solution for b in st.blocks]
                    for b in blocks:
                        if isinstance(b, Math):
                            formulas.add(b.latex)
                        elif isinstance(b, Text):
                            texts.add(b.text)
                        elif isinstance(b, Matrix):
                            names.add(b.name)
                    texts.update(part.prompt for part in p.parts)
    return tuple(sorted(formulas)), tuple(sorted(texts)), tuple(sorted(names))


def inline_math(text: str) -> list[str]:
    return re.findall(r"\$([^$]+)\$", text)

"""Typst rendering: ``latex`` (our LaTeX subset as Typst math, text as string literals), ``blocks``
(the document model as Typst markup) and ``sheet`` (a practice sheet's source). Compiling a source
into PDF bytes is examprep.render.pdf."""

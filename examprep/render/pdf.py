"""PDF bytes from Typst sources: compile, join and split, and the worker processes that compile
in parallel.

The PDF is compiled by the ``typst`` Python package (it bundles the compiler and its fonts: no TeX,
no network, no system fonts); a class's chunks are joined, and a student's copy cut out, by pypdf,
which copies pages as they are. Everything is deterministic: built-in fonts only, no creation date,
file identifiers from the content, so the same source gives byte-identical PDFs on any machine.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import io
import json
import multiprocessing
import os
import re
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examprep.errors import ExamprepError
from examprep.fileio import atomic_write_bytes
from examprep.render.typst.blocks import figure_source


class TypstCompileError(ExamprepError):
    """The Typst compiler rejected a document; the message is Typst's own."""

    exit_code = 1



def compile_pdf(source: str, font_folder: str | None = None) -> bytes:
    """PDF bytes of a Typst source: built-in fonts only (plus the fonts in ``font_folder``, for
    names they cannot show: see examprep.render.fonts), no timestamp, no packages.

    Raises TypstCompileError with Typst's message (and the offending source line) when the
    compiler rejects the document.
    """
    import typst

    try:
        if font_folder:
            return typst.compile(source.encode("utf-8"), ignore_system_fonts=True, pdf_tags=False,
                                 font_paths=[font_folder])
        return typst.compile(source.encode("utf-8"), ignore_system_fonts=True, pdf_tags=False)
    except typst.TypstError as err:
        where = _error_line(source, getattr(err, "diagnostic", "") or "")
        raise TypstCompileError(f"typst could not typeset the document: {err.message}{where}") from None


COPY_PAGES = "copy-pages"     # the label of the metadata that ends each copy of a sheet: its page count


def compile_copies(source: str, font_folder: str | None = None, *, split: bool = False,
                   titles: list[str] | None = None, author: str = "") -> tuple[bytes, list[int], list[bytes]]:
    """A sheet's PDF (examprep.render.typst.sheet.sheet_source) with each copy's page count, read
    back from the laid-out document (the ``<copy-pages>`` metadata that ends each copy) at no extra
    layout cost; with ``split``, one PDF more per copy, holding only that copy's pages, titled
    from ``titles`` (one per copy) and ``author``.

    Copies start on odd pages, so copy k starts on page 1 + the sum of the earlier counts, each
    rounded up to an even number. Raises TypstCompileError as compile_pdf does.
    """
    import typst

    with tempfile.TemporaryDirectory(prefix="examprep-sheet-") as tmp:
        main = Path(tmp) / "main.typ"
        main.write_text(source, encoding="utf-8")
        fonts = {"font_paths": [font_folder]} if font_folder else {}
        try:
            compiler = typst.Compiler(str(main), root=tmp, ignore_system_fonts=True, **fonts)
            pdf = compiler.compile(pdf_tags=False)
            pages = [int(n) for n in json.loads(compiler.query(f"<{COPY_PAGES}>", field="value"))]
        except typst.TypstError as err:
            where = _error_line(source, getattr(err, "diagnostic", "") or "")
            raise TypstCompileError(f"typst could not typeset the document: {err.message}{where}") from None
    if not split:
        return pdf, pages, []
    pieces, first = [], 0
    for k, n in enumerate(pages):
        pieces.append((range(first, first + n), titles[k] if titles and k < len(titles) else ""))
        first += n + n % 2
    return pdf, pages, split_pdf(pdf, pieces, author=author)


def _pdf_id(*pieces: bytes) -> Any:
    """A PDF file identifier (its /ID pair) made from the content, as Typst makes its own: the same
    bytes in, the same identifier out, on any machine (pypdf would draw a random one)."""
    from pypdf.generic import ArrayObject, ByteStringObject

    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(len(piece).to_bytes(8, "big"))
        digest.update(piece)
    value = ByteStringObject(digest.digest()[:16])
    return ArrayObject([value, value])


def _write(writer: Any, file_id: Any) -> bytes:
    writer._ID = file_id          # pypdf has no public setter; tests/render/test_join.py checks the /ID written
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def split_pdf(pdf: bytes, pieces: list[tuple[range, str]], *, author: str) -> list[bytes]:
    """One PDF per (pages, title) of ``pieces``: those pages (0-based) of ``pdf``, copied as they
    are (pypdf: the same content streams, fonts and images, nothing typeset again), with that title,
    ``author`` as author, the source's language and PDF version. Deterministic: the same bytes for
    the same inputs."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject

    reader = PdfReader(io.BytesIO(pdf))
    root = reader.trailer["/Root"]
    creator = (reader.metadata or {}).get("/Creator", "")
    out = []
    for pages, title in pieces:
        writer = PdfWriter()
        writer.pdf_header = reader.pdf_header
        for i in pages:
            writer.add_page(reader.pages[i])
        if "/Lang" in root:
            writer.root_object[NameObject("/Lang")] = root["/Lang"].clone(writer)
        writer.add_metadata({"/Title": title, "/Author": author, "/Creator": creator})
        out.append(_write(writer, _pdf_id(title.encode("utf-8"), author.encode("utf-8"), pdf,
                                          f"{pages.start}:{pages.stop}".encode())))
    return out


class PdfJoin:
    """One PDF of the pages of several Typst PDFs of one document (the chunks of a class's copies),
    in the order they are added, each padded to an even page count so that each starts on a
    recto when printed double-sided.

    The pages are copied as they are (pypdf), not imported and typeset again: the same pages, the
    fonts embedded once per part. The title, author, language and XMP metadata are the first
    part's (every chunk of a sheet carries the same); the file identifier is the first part's
    document identifier and a digest of all parts. ``add``'s bookmarks make the document's outline
    (shown when it opens). Deterministic: the same bytes for the same parts and bookmarks.
    """

    def __init__(self) -> None:
        self._writer = None
        self._parts: list[bytes] = []
        self._document_id = None      # the first part's: Typst derives it from the title and author
        self._bookmarks: list[tuple[str, int]] = []

    def add(self, pdf: bytes, bookmarks: list[tuple[str, int]] = ()) -> None:
        """Append the pages of ``pdf``; ``bookmarks``: (title, page index in ``pdf``) for the outline."""
        from pypdf import PdfReader, PdfWriter

        reader = PdfReader(io.BytesIO(pdf))
        first = len(self._writer.pages) if self._writer is not None else 0
        self._bookmarks += [(title, first + page) for title, page in bookmarks]
        if self._writer is None:
            self._writer = PdfWriter(clone_from=reader)
            self._writer.pdf_header = reader.pdf_header       # pypdf would write its own, %PDF-1.3
            ids = reader.trailer.get("/ID")
            self._document_id = ids[0] if ids else None
        else:
            for page in reader.pages:
                self._writer.add_page(page)
        if len(self._writer.pages) % 2:
            self._writer.add_blank_page()
        self._parts.append(pdf)

    def pdf(self) -> bytes:
        """The joined PDF (a single part is returned as it is, unless it needed padding)."""
        if not self._parts:
            raise ValueError("no PDF to join")
        if len(self._parts) == 1 and page_count(self._parts[0]) % 2 == 0 and not self._bookmarks:
            return self._parts[0]
        for title, page in self._bookmarks:
            self._writer.add_outline_item(title=title, page_number=page)
        if self._bookmarks:
            self._writer.page_mode = "/UseOutlines"
        file_id = _pdf_id(*self._parts, *(f"{title}\0{page}".encode("utf-8") for title, page in self._bookmarks))
        if self._document_id is not None:
            file_id[0] = self._document_id.clone(self._writer)
        return _write(self._writer, file_id)


def compile_png(source: str, ppi: int = 144) -> bytes:
    """The first page of a Typst source as PNG bytes (built-in fonts only)."""
    import typst

    try:
        data = typst.compile(source.encode("utf-8"), format="png", ppi=ppi, ignore_system_fonts=True)
    except typst.TypstError as err:
        where = _error_line(source, getattr(err, "diagnostic", "") or "")
        raise TypstCompileError(f"typst could not typeset the document: {err.message}{where}") from None
    return data[0] if isinstance(data, list) else data


def write_figure(path: str | os.PathLike, title: str, blocks: list, footer: str | None = None) -> Path:
    """A figure of document blocks written atomically, as a PDF or (by the file's suffix) a PNG."""
    source = figure_source(title, blocks, footer)
    path = Path(path)
    return atomic_write_bytes(path, compile_png(source) if path.suffix.lower() == ".png" else compile_pdf(source))


def page_count(pdf: bytes) -> int:
    """Pages of a PDF written by Typst (the /Count of its page tree's root)."""
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", pdf)]
    counts += [int(n) for n in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", pdf)]
    if not counts:
        raise RuntimeError("cannot find the page count of a Typst PDF")     # a Typst output change
    return max(counts)


def merge_pdfs(parts: list[bytes]) -> bytes:
    """One PDF of the pages of ``parts`` in order, each padded to an even page count (PdfJoin)."""
    join = PdfJoin()
    for pdf in parts:
        join.add(pdf)
    return join.pdf()


_MAIN_UNSET = object()


class PdfWorkers:
    """Worker processes for Typst compiles, each replaced after two compiles; ``submit`` returns
    an object whose ``result()`` gives the value or raises the worker's exception.

    Typst memoises layout in a process-wide cache that typst-py never evicts (about 40 MB per
    copy of a midterm's solutions stays behind after each compile), so long runs compile in
    short-lived processes; they also let the problems and solutions compile in parallel with the
    Python work. multiprocessing.Pool (not ProcessPoolExecutor, whose max_tasks_per_child can
    deadlock on Python 3.11) with the forkserver start method, so no thread state is forked.
    Falls back to threads (Typst releases the GIL) where processes cannot start.

    ``tasks``: how many compiles the pool will be given. Where they outnumber the workers, each
    worker is busy with a compile of its own for most of the run, and Typst, which lays out with a
    thread per CPU, would only set its threads against the other workers' for the same cores: then
    each worker's Typst uses one thread (RAYON_NUM_THREADS=1; a value the user set is kept). 40
    midterm variants on 2 cores: 16.8 s against 18.3 s (mean of 4 alternating pairs). A single
    sheet's two compiles keep Typst's threads, which take over the core the shorter one leaves.
    """

    TASK_TIMEOUT = 1800      # seconds: a worker killed by the system must not hang the command
    STARTUP_TIMEOUT = 120    # seconds for the first worker to answer (well under one on an idle machine)

    def __init__(self, workers: int | None = None, *, tasks: int = 0):
        if workers is None:      # one per CPU this process may use, at most 8 (memory: ~0.6 GB each)
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
            workers = max(2, min(cpus, 8))
        typst_threads = 1 if tasks > workers and "RAYON_NUM_THREADS" not in os.environ else None

        self._threads = None
        self._pool = None
        self._main_spec = _MAIN_UNSET
        try:
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(["examprep.render.pdf", "typst"])
            self._skip_main_in_workers()
            # Ctrl-C reaches the whole process group: the workers ignore it and the parent, which
            # got it too, stops them (__exit__); they printed KeyboardInterrupt tracebacks before.
            self._pool = ctx.Pool(workers, maxtasksperchild=2, initializer=_start_worker,
                                  initargs=(typst_threads,))
            try:     # workers that cannot start are replaced forever, silently: check that one answers
                self._pool.apply_async(os.getpid).get(timeout=self.STARTUP_TIMEOUT)
            except Exception:
                self._stop()
                raise OSError("the PDF worker processes did not start") from None
        except (OSError, ValueError, NotImplementedError, ImportError):     # no processes here: threads

            self._restore_main()
            self._pool = None
            self._threads = ThreadPoolExecutor(max_workers=workers)
        except BaseException:            # Ctrl-C while the pool starts: leave no process behind
            self._stop()
            self._restore_main()
            raise

    def _skip_main_in_workers(self) -> None:
        """A new worker re-runs the parent's main script unless __main__ names a module ending in
        ".__main__" (multiprocessing.spawn). For the `examprep` console script that re-run imports
        examprep again, from the current directory first: a folder named "examprep" there made
        every worker fail at start. The workers need nothing from __main__, so for the pool's life
        __main__ names examprep's own entry module, which multiprocessing then skips."""
        main = sys.modules.get("__main__")
        if main is not None and getattr(main, "__spec__", None) is None:
            self._main_spec = None
            main.__spec__ = importlib.machinery.ModuleSpec("examprep.__main__", None)

    def _restore_main(self) -> None:
        if self._main_spec is not _MAIN_UNSET and "__main__" in sys.modules:
            sys.modules["__main__"].__spec__ = self._main_spec
            self._main_spec = _MAIN_UNSET

    def submit(self, fn, *args, **kwargs):
        if self._pool is None:
            return self._threads.submit(fn, *args, **kwargs)
        return _Pending(self._pool.apply_async(fn, args, kwargs))

    def __enter__(self) -> "PdfWorkers":
        return self

    def _stop(self) -> None:
        """Stop the workers at once (an error or Ctrl-C in the parent). terminate() signals them
        itself; killing them first deadlocks it when one dies holding the task queue's lock (an
        idle worker waits for a task holding it), and so could a worker dying of Ctrl-C: which is
        why they ignore SIGINT."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()

    def __exit__(self, kind, err, tb) -> None:
        try:
            if self._pool is None and self._threads is not None:
                self._threads.shutdown(wait=kind is None, cancel_futures=kind is not None)
            elif kind is None:
                self._pool.close()
                self._pool.join()
            else:
                self._stop()
        finally:
            self._restore_main()


def _start_worker(typst_threads: int | None = None) -> None:
    """A PDF worker's initializer: Ctrl-C is the parent's to handle; ``typst_threads``: the threads
    Typst lays out with (read when its first compile starts its thread pool; default: one per CPU)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if typst_threads:
        os.environ["RAYON_NUM_THREADS"] = str(typst_threads)


@dataclass
class _Pending:
    async_result: Any

    def result(self) -> Any:
        try:
            return self.async_result.get(timeout=PdfWorkers.TASK_TIMEOUT)
        except multiprocessing.TimeoutError:
            raise TypstCompileError("a PDF worker gave no result (killed for lack of memory?)") from None


def _error_line(source: str, diagnostic: str) -> str:
    m = re.search(r":(\d+):(\d+)", diagnostic)
    if not m:
        return ""
    lines = source.splitlines()
    n = int(m.group(1))
    if 1 <= n <= len(lines):
        snippet = lines[n - 1].strip()
        return f" (source line {n}: {snippet[:120]})"
    return ""


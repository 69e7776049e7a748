"""A bank's bytes, read as untrusted input: size limits, packages (zip or folder), and XML parsed
with entities off.

The limits are the grading input's (examprep/answers/limits.py): a bank file, and a package's
content all together, at most MAX_CLASS_FILE_BYTES (16 MB: a bank of a thousand questions takes
about 2 MB); a package at most MAX_PACKAGE_FILES files. XML goes through defusedxml, which refuses
a document type with entities (billion laughs, external entities) instead of expanding them.
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from xml.etree.ElementTree import Element

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import ParseError, fromstring

from examprep.answers.limits import MAX_CLASS_FILE_BYTES
from examprep.errors import ExamprepError
from examprep.fileio import read_user_bytes, size_text

MAX_BANK_BYTES = MAX_CLASS_FILE_BYTES
MAX_PACKAGE_FILES = 10_000


class BankError(ExamprepError):
    """A bank that cannot be read at all (nothing is written): one line naming the file and why."""

    exit_code = 2


@dataclass
class Package:
    """The files of a package by their path inside it ('items/q1.xml'), or one file (its name alone)."""

    name: str
    files: dict[str, bytes]


def read_source(path: str) -> Package:
    """A bank file, a zip package or a folder holding imsmanifest.xml, within the limits."""
    p = Path(path)
    if p.is_dir():
        return _folder(p)
    data = read_user_bytes(path, error=BankError, kind="bank file", limit=MAX_BANK_BYTES,
                           limit_what="a question bank")
    if data[:4] == b"PK\x03\x04":
        return _zip(path, data)
    return Package(path, {p.name: data})


def _folder(folder: Path) -> Package:
    if not (folder / "imsmanifest.xml").is_file():
        raise BankError(f"{folder}: a folder without imsmanifest.xml; give a Moodle XML file, a QTI package "
                        "(zip or folder) or a Canvas export")
    files: dict[str, bytes] = {}
    total = 0
    for f in sorted(folder.rglob("*")):
        if f.is_symlink() or not f.is_file() or f.suffix.lower() != ".xml":
            continue
        if len(files) >= MAX_PACKAGE_FILES:
            raise BankError(f"{folder}: more than {MAX_PACKAGE_FILES} XML files; a package holds fewer")
        data = read_user_bytes(f, error=BankError, limit=MAX_BANK_BYTES, limit_what="a question bank")
        total += len(data)
        if total > MAX_BANK_BYTES:
            raise BankError(f"{folder}: its XML files are over the {size_text(MAX_BANK_BYTES)} limit for a "
                            "question bank")
        files[f.relative_to(folder).as_posix()] = data
    return Package(str(folder), files)


def _zip(path: str, data: bytes) -> Package:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise BankError(f"{path}: not a readable zip package ({err})") from None
    if len(infos) > MAX_PACKAGE_FILES:
        raise BankError(f"{path}: {len(infos)} files; a package holds at most {MAX_PACKAGE_FILES}")
    files: dict[str, bytes] = {}
    total = 0
    for info in infos:
        name = PurePosixPath(info.filename.replace("\\", "/"))
        if info.is_dir() or name.suffix.lower() != ".xml":
            continue
        total += info.file_size               # as declared; the read below is capped too
        if total > MAX_BANK_BYTES:
            raise BankError(f"{path}: its XML files unpack to over the {size_text(MAX_BANK_BYTES)} limit for a "
                            "question bank")
        try:
            with archive.open(info) as fh:
                content = fh.read(MAX_BANK_BYTES + 1)
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as err:
            raise BankError(f"{path}: {info.filename}: cannot be unpacked ({err})") from None
        if len(content) > info.file_size:     # a size the archive understated
            raise BankError(f"{path}: {info.filename}: holds more than its stated size; a damaged package")
        files[str(name)] = content
    if "imsmanifest.xml" not in files:
        raise BankError(f"{path}: a zip without imsmanifest.xml at its top; give a QTI 2.1 package or a Canvas "
                        "export (or a Moodle XML file)")
    return Package(path, files)


def parse_xml(data: bytes, where: str) -> Element:
    """The document's root, parsed with entities and external references refused."""
    try:
        return fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as err:
        raise BankError(f"{where}: refused: the document declares entities or external references "
                        f"({type(err).__name__}); a question bank needs none") from None
    except ParseError as err:
        raise BankError(f"{where}: not well-formed XML ({err})") from None
    except (ValueError, RecursionError) as err:
        raise BankError(f"{where}: not readable XML ({err})") from None


def local(tag: Any) -> str:
    """An element's tag without its namespace."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def child(el: Element, name: str) -> Element | None:
    return next((c for c in el if local(c.tag) == name), None)


def children(el: Element, name: str) -> list[Element]:
    return [c for c in el if local(c.tag) == name]


def descendants(el: Element, name: str) -> list[Element]:
    return [c for c in el.iter() if local(c.tag) == name]

"""Raw input to text: size limit, binary sniffing, encoding (UTF-8, UTF-8/16/32 with a BOM).

Everything that can be said about a file before knowing its format is checked here, so each
format reader starts from clean, decoded text.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

from ..errors import InputError
from .options import LoadLimits

# Checked longest BOM first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\x1f\x8b", "a gzip archive (decompress it first)"),
    (b"\xfd7zXZ\x00", "an xz archive (decompress it first)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"PAR1", "a Parquet file (convert it to CSV or JSONL)"),
    (b"\x93NUMPY", "a NumPy array"),
    (b"\xd0\xcf\x11\xe0", "an old Office document"),
)


@dataclass
class SourceText:
    """Decoded input: ``name`` for messages, ``text`` to parse, ``suffix`` as a format hint."""

    name: str
    text: str
    suffix: str
    encoding: str

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset into ``text``."""
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1


def iter_lines(text: str) -> Iterator[str]:
    """Lines of ``text`` one at a time (no list of millions of lines for a huge file)."""
    start, n = 0, len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        yield text[start:end].rstrip("\r")
        start = end + 1


def read_path(path: str | Path, limits: LoadLimits) -> SourceText:
    """Read and decode a file, refusing what is missing, too large, binary or not text."""
    p = Path(path)
    name = str(path)
    try:
        if not p.exists():
            raise InputError("file not found", source=name)
        if p.is_dir():
            raise InputError("is a directory; expected a conversation file", source=name)
        size = p.stat().st_size
        if size > limits.max_file_bytes:
            raise InputError(_too_big(size, limits), source=name)
        with p.open("rb") as fh:
            # Read one byte past the limit: a file that grew since stat() is still caught.
            data = fh.read(limits.max_file_bytes + 1)
    except OSError as err:
        raise InputError(f"cannot be read ({err.strerror or err})", source=name) from None
    return decode(data, name, limits)


def decode(data: bytes, name: str, limits: LoadLimits, *, in_zip: bool = False) -> SourceText:
    """Check and decode raw bytes; ``name`` is only used in messages and for the extension hint."""
    if len(data) > limits.max_file_bytes:
        raise InputError(_too_big(len(data), limits), source=name)
    suffix = Path(name).suffix.lower()
    if data.startswith(b"PK\x03\x04"):
        if in_zip:
            raise InputError("is a ZIP archive inside a ZIP archive; expected conversations.json", source=name)
        return decode(*_from_zip(data, name, limits), limits, in_zip=True)
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise InputError(f"is {what}, not a conversation; expected JSON, JSONL, CSV or a text transcript",
                             source=name, where="byte 0")
    encoding = "utf-8"
    body = data
    for bom, codec in _BOMS:
        if data.startswith(bom):
            encoding, body = codec, data[len(bom):]
            break
    if encoding == "utf-8":
        nul = body.find(b"\x00")
        if nul >= 0:
            hint = " (looks like UTF-16 without a byte-order mark)" if _looks_utf16(body) else ""
            raise InputError(
                f"is binary: NUL byte at offset {nul + len(data) - len(body)}{hint}; expected a text file "
                "(UTF-8, or UTF-16 with a byte-order mark)",
                source=name, where=f"byte {nul + len(data) - len(body)}",
            )
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as err:
        offset = err.start + len(data) - len(body)
        line = body.count(b"\n", 0, err.start) + 1
        bad = body[err.start:err.start + 1].hex()
        raise InputError(
            f"is not valid {encoding.upper()}: byte 0x{bad} at offset {offset} cannot be decoded; "
            "expected UTF-8 (or UTF-16 with a byte-order mark): re-save the file as UTF-8",
            source=name, where=f"line {line}, byte {offset}",
        ) from None
    if encoding != "utf-8" and "\x00" in text:
        raise InputError(f"is binary: NUL character at character {text.index(chr(0))}; expected text", source=name)
    if not text.strip():
        raise InputError("is empty; expected a conversation (JSON, JSONL, CSV or a text transcript)", source=name)
    return SourceText(name=name, text=text, suffix=suffix, encoding=encoding)


def _from_zip(data: bytes, name: str, limits: LoadLimits) -> tuple[bytes, str]:
    """The ``conversations.json`` inside a ChatGPT export ZIP; other archives are refused."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = [m for m in zf.infolist() if PurePosixPath(m.filename).name == "conversations.json"]
            if not members:
                raise InputError("is a ZIP archive without conversations.json (not a ChatGPT export); expected JSON, "
                                 "JSONL, CSV or a text transcript: extract the file you want first", source=name)
            member = min(members, key=lambda m: len(m.filename))
            inner = f"{name}/{member.filename}"
            if member.file_size > limits.max_file_bytes:
                raise InputError(_too_big(member.file_size, limits), source=inner)
            with zf.open(member) as fh:
                # Read past the limit by one byte: a size header that lies (a zip bomb) is still caught.
                body = fh.read(limits.max_file_bytes + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError) as err:
        raise InputError(f"is a damaged or unsupported ZIP archive ({err}); expected a ChatGPT export ZIP",
                         source=name) from None
    return body, inner


def _looks_utf16(body: bytes) -> bool:
    sample = body[:2000]
    return len(sample) >= 4 and (sample[1::2].count(0) > len(sample) // 4 or sample[0::2].count(0) > len(sample) // 4)


def _too_big(size: int, limits: LoadLimits) -> str:
    return (
        f"is {size:,} bytes, over the limit of {limits.max_file_bytes:,} bytes "
        "(LoadLimits.max_file_bytes); raise the limit or split the file"
    )

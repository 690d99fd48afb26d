"""JSON and JSONL parsing that fails with a place and a reason instead of a traceback.

Nesting depth is measured by a vectorized bracket scan before ``json.loads`` runs, so hostile
input (``[[[[...``) is refused without ever nearing Python's recursion limit.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np

from ..errors import InputError
from .options import LoadLimits
from .source import SourceText, iter_lines

_MAX_INT_DIGITS = 100


def _bounded_int(text: str) -> int:
    # Python refuses > 4300-digit ints with a bare ValueError; no real field needs more than 100.
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _HugeNumber(text)
    return int(text)


class _HugeNumber(ValueError):
    def __init__(self, digits: str):
        super().__init__(digits)
        self.digits = digits


_CHUNK = 1 << 22


class _Scan:
    """Bracket depth and container count of JSON bytes, outside strings, chunk by chunk.

    Vectorized (numpy) per 4 MiB chunk, carrying the string and escape state across chunks, so that
    a 200 MB file costs a few hundred milliseconds and a few chunk-sized arrays of memory.
    """

    def __init__(self, max_depth: int):
        self.max_depth = max_depth
        self.depth = 0
        self.containers = 0
        self.in_string = False
        self.trailing_backslashes = 0  # run of backslashes that ended the previous chunk

    def feed(self, arr: np.ndarray, offset: int) -> int | None:
        """Offset of the first too-deep bracket in this chunk, or None."""
        quotes = np.flatnonzero(arr == 0x22)
        backslashes = np.flatnonzero(arr == 0x5C)
        if len(quotes):
            run = np.zeros(len(quotes), dtype=np.int64)
            if len(backslashes):
                breaks = np.flatnonzero(np.diff(backslashes) != 1)
                run_start = backslashes[np.r_[0, breaks + 1]]
                run_end = backslashes[np.r_[breaks, len(backslashes) - 1]]
                k = np.minimum(np.searchsorted(run_end, quotes - 1), len(run_end) - 1)
                hit = run_end[k] == quotes - 1
                run = np.where(hit, run_end[k] - run_start[k] + 1, 0)
                run += np.where(hit & (run_start[k] == 0), self.trailing_backslashes, 0)
            if self.trailing_backslashes:
                run[quotes == 0] = self.trailing_backslashes
            quotes = quotes[run % 2 == 0]
        self._carry_backslashes(arr, backslashes)
        # Outside strings JSON has no quotes and inside them every quote is escaped: delimiters pair up.
        bounds = np.r_[-1, quotes] if self.in_string else quotes
        starts, ends = bounds[0::2], bounds[1::2]
        if len(starts) > len(ends):
            ends = np.r_[ends, len(arr)]
        self.in_string = len(bounds) % 2 == 1
        brackets = np.flatnonzero((arr == 0x5B) | (arr == 0x7B) | (arr == 0x5D) | (arr == 0x7D))
        if len(starts) and len(brackets):
            i = np.searchsorted(starts, brackets, side="right") - 1
            inside = (i >= 0) & (brackets < ends[np.maximum(i, 0)])
            brackets = brackets[~inside]
        if not len(brackets):
            return None
        opening = (arr[brackets] == 0x5B) | (arr[brackets] == 0x7B)
        depth = self.depth + np.cumsum(np.where(opening, 1, -1), dtype=np.int64)
        over = np.flatnonzero(depth > self.max_depth)
        if len(over):
            return offset + int(brackets[over[0]])
        self.depth = int(depth[-1])
        self.containers += int(opening.sum())
        return None

    def _carry_backslashes(self, arr: np.ndarray, backslashes: np.ndarray) -> None:
        n = len(arr)
        if not len(backslashes) or backslashes[-1] != n - 1:
            self.trailing_backslashes = 0
            return
        gaps = np.flatnonzero(np.diff(backslashes) != 1)
        first = backslashes[gaps[-1] + 1] if len(gaps) else backslashes[0]
        run = n - int(first)
        self.trailing_backslashes = run + (self.trailing_backslashes if first == 0 else 0)


def scan_json(data: bytes, max_depth: int) -> tuple[int | None, int]:
    """(Byte offset of the first bracket nested deeper than ``max_depth`` or None, number of objects and lists)."""
    scan = _Scan(max_depth)
    arr = np.frombuffer(data, dtype=np.uint8)
    for offset in range(0, len(arr), _CHUNK):
        deep = scan.feed(arr[offset:offset + _CHUNK], offset)
        if deep is not None:
            return deep, scan.containers
    return None, scan.containers


def too_deep_offset(data: bytes, max_depth: int) -> int | None:
    return scan_json(data, max_depth)[0]


def parse_json(src: SourceText, limits: LoadLimits, text: str | None = None, *, line: int | None = None) -> Any:
    """Parse ``text`` (default: the whole file); errors name the line and column, or the JSONL line."""
    whole = text is None
    text = src.text if whole else text
    # Counting opening brackets is a C-speed pass; only suspicious text pays for the full scan.
    deep, containers = None, 0
    if text.count("[") + text.count("{") > limits.max_depth:
        data = text.encode("utf-8", "surrogatepass")
        deep, containers = scan_json(data, limits.max_depth)
    if deep is not None:
        char = len(data[:deep].decode("utf-8", "replace"))
        where = _where(src, text, char, line)
        raise InputError(
            f"JSON nested deeper than {limits.max_depth} levels (LoadLimits.max_depth); expected a conversation, "
            "whose structure is a few levels deep",
            source=src.name, where=where,
        )
    if containers > max_containers(limits):
        # Millions of tiny objects would take json.loads minutes and gigabytes: refuse up front.
        raise InputError(
            f"JSON holds {containers:,} objects and lists, more than a conversation of at most "
            f"{limits.max_utterances:,} utterances needs (LoadLimits.max_utterances); raise the limit or split "
            "the file",
            source=src.name, where=f"line {line}" if line else None,
        )
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as err:
        truncated = not text[err.pos:].strip() or err.msg.startswith("Unterminated string")
        reason = f"invalid JSON: {err.msg}" + (" (the text ends too early: truncated?)" if truncated else "")
        what = "expected one JSON value per line (JSONL)" if line else "expected well-formed JSON"
        raise InputError(f"{reason}; {what}", source=src.name, where=_where(src, text, err.pos, line)) from None
    except _HugeNumber as err:
        pos = text.find(err.digits)
        raise InputError(
            f"number with {len(err.digits)} digits; expected numbers of at most {_MAX_INT_DIGITS} digits",
            source=src.name, where=_where(src, text, max(pos, 0), line),
        ) from None
    except RecursionError:  # belt and braces: the depth scan should make this unreachable
        raise InputError("JSON nested too deeply", source=src.name, where=f"line {line}" if line else None) from None


def max_containers(limits: LoadLimits) -> int:
    """Objects and lists a JSON file may hold: a generous 10 per allowed utterance."""
    return 10 * limits.max_utterances + 10_000


def _where(src: SourceText, text: str, pos: int, line: int | None) -> str:
    if line is not None:
        return f"line {line}, column {pos + 1}"
    ln, col = src.line_col(pos)
    return f"line {ln}, column {col}"


def parse_jsonl(src: SourceText, limits: LoadLimits) -> list[tuple[int, Any]]:
    """Each non-blank line as JSON, with its 1-based line number."""
    out = []
    for n, raw in enumerate(iter_lines(src.text), start=1):
        if raw.strip():
            if len(out) >= limits.max_utterances:
                raise InputError(f"more than {limits.max_utterances:,} lines (LoadLimits.max_utterances); raise the "
                                 "limit or split the file", source=src.name, where=f"line {n}")
            out.append((n, parse_json(src, limits, raw, line=n)))
    if not out:
        raise InputError("holds no JSON lines; expected one JSON object per line", source=src.name)
    return out


def looks_like_jsonl(src: SourceText, limits: LoadLimits) -> bool:
    """True when the first non-blank line is a JSON object or array on its own and more lines follow."""
    lines = list(itertools.islice((ln for ln in iter_lines(src.text) if ln.strip()), 2))
    if len(lines) < 2 or not lines[0].lstrip().startswith(("{", "[")):
        return False
    try:
        value = parse_json(src, limits, lines[0], line=1)
    except InputError:
        return False
    return isinstance(value, (dict, list))

"""Format detection (content first, file extension second) and the public load functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ..conversation import Conversation
from ..errors import InputError
from .builder import EmptyConversation, FileContext, short
from .chatgpt import is_chatgpt, read_chatgpt
from .jsontext import looks_like_jsonl, parse_json, parse_jsonl
from .locomo import is_locomo, read_locomo
from .longmemeval import is_longmemeval, read_longmemeval
from .options import ColumnMap, LoadLimits
from .records import csv_rows, json_rows, read_objects, read_rows, utterance_list_key
from .source import SourceText, decode, iter_lines, read_path
from .transcript import is_date_line, looks_like_transcript, read_transcript

FORMATS = ("locomo", "longmemeval", "chatgpt", "json", "jsonl", "csv", "transcript")
_EXPECTED = (
    "expected LoCoMo or LongMemEval JSON, a ChatGPT export (conversations.json), JSON/JSONL utterance records "
    "with speaker and text fields, a CSV with a header naming speaker and text columns, or a transcript of "
    "'Name: text' lines"
)


def load_conversations(
    path: str | Path, *, conversation: str | None = None, fmt: str | None = None,
    limits: LoadLimits | None = None, columns: ColumnMap | None = None,
) -> list[Conversation]:
    """Every conversation in a file (or only ``conversation``); any problem is one InputError."""
    limits = limits or LoadLimits()
    return _load(read_path(path, limits), conversation, fmt, limits, columns or ColumnMap())


def load_bytes(
    data: bytes, filename: str, *, conversation: str | None = None, fmt: str | None = None,
    limits: LoadLimits | None = None, columns: ColumnMap | None = None,
) -> list[Conversation]:
    """Like ``load_conversations`` for an upload already in memory; ``filename`` names it in messages."""
    limits = limits or LoadLimits()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"expected the file's bytes, got {type(data).__name__}", source=filename)
    return _load(decode(bytes(data), filename, limits), conversation, fmt, limits, columns or ColumnMap())


def load_conversation(path: str | Path, *, conversation: str | None = None, **options: Any) -> Conversation:
    """Exactly one conversation: the one named, or the file's only one; otherwise an InputError listing ids."""
    convs = load_conversations(path, conversation=conversation, **options)
    if len(convs) == 1:
        return convs[0]
    raise InputError(
        f"holds {len(convs)} conversations; choose one with conversation= (--conversation): "
        f"{_list_ids(c.id for c in convs)}",
        source=str(path),
    )


def _list_ids(ids, n: int = 20) -> str:
    ids = list(ids)
    return ", ".join(ids[:n]) + (f", ... ({len(ids) - n} more)" if len(ids) > n else "")


def _load(
    src: SourceText, select: str | None, fmt: str | None, limits: LoadLimits, cols: ColumnMap
) -> list[Conversation]:
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}", source=src.name)
    ctx = FileContext(src.name, limits)
    try:
        convs = _collect(_entries(src, ctx, fmt, cols), ctx, select)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as err:
        # Last resort so that a user never sees a traceback; reaching it means a check is missing here.
        raise InputError(f"could not be read ({type(err).__name__}: {err}); this is a loader bug, please report it "
                         "with the file", source=src.name) from err
    except (RecursionError, MemoryError):
        raise InputError("is too large or too deeply nested to read; see LoadLimits", source=src.name) from None
    file_notes = ctx.warnings.messages()
    for c in convs:
        c.warnings[:0] = file_notes
    return convs


def _entries(src: SourceText, ctx: FileContext, fmt: str | None, cols: ColumnMap) -> Iterator:
    default_id = Path(src.name).stem or "conversation"
    kind = fmt or _sniff(src, ctx, cols)
    if kind == "csv":
        return read_rows(csv_rows(src, ctx, cols), ctx, cols, "csv", default_id)
    if kind == "transcript":
        return read_transcript(src, ctx, default_id)  # its reader names the first line that is not a turn
    if kind == "jsonl":
        items = [(f"line {n}: $", v) for n, v in parse_jsonl(src, ctx.limits)]
        return _json_entries(items, ctx, fmt, cols, "jsonl", default_id, "$ (the lines)")
    value = parse_json(src, ctx.limits)
    if isinstance(value, dict) and isinstance(value.get("conversations"), list) and not utterance_list_key(value):
        _check_count(len(value["conversations"]), ctx, "$.conversations")
        items = [(f"$.conversations[{i}]", v) for i, v in enumerate(value["conversations"])]
        return _json_entries(items, ctx, fmt, cols, "json", default_id, "$.conversations")
    if isinstance(value, list):
        _check_count(len(value), ctx, "$")
        items = [(f"$[{i}]", v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        items = [("$", value)]
    else:
        raise ctx.error(f"the JSON holds a single {type(value).__name__}; {_EXPECTED}", "$")
    return _json_entries(items, ctx, fmt, cols, "json", default_id, "$")


def _check_count(n: int, ctx: FileContext, where: str) -> None:
    # Every item is at least one utterance (or a conversation of them): refuse before building any.
    if n > ctx.limits.max_utterances:
        raise ctx.error(f"{n:,} items, more than {ctx.limits.max_utterances:,} utterances "
                        "(LoadLimits.max_utterances); raise the limit or split the file", where)


def _json_entries(items, ctx: FileContext, fmt: str | None, cols: ColumnMap, generic: str, default_id: str, where: str):
    if not items:
        raise ctx.error(f"holds an empty list; {_EXPECTED}", where)
    first = items[0][1]
    kind = fmt if fmt in ("locomo", "longmemeval", "chatgpt") else _json_kind(first, cols)
    if kind == "locomo":
        return read_locomo(items, ctx)
    if kind == "longmemeval":
        return read_longmemeval(items, ctx)
    if kind == "chatgpt":
        return read_chatgpt(items, ctx)
    if kind == "objects":
        return read_objects(items, ctx, cols, generic, default_id)
    if kind == "records":
        return read_rows(json_rows(items, ctx), ctx, cols, generic, default_id)
    found = (f"an object with keys {', '.join(map(str, list(first)[:10]))}" if isinstance(first, dict)
             else f"a {type(first).__name__}")
    raise ctx.error(f"unrecognized JSON layout: found {found}; {_EXPECTED}", items[0][0])


def _json_kind(item: Any, cols: ColumnMap) -> str | None:
    if is_locomo(item):
        return "locomo"
    if is_longmemeval(item):
        return "longmemeval"
    if is_chatgpt(item):
        return "chatgpt"
    if utterance_list_key(item):
        return "objects"
    if isinstance(item, dict) and cols.pick("speaker", item) and cols.pick("text", item):
        return "records"
    return None


def _sniff(src: SourceText, ctx: FileContext, cols: ColumnMap) -> str:
    """The format by content, then by extension; an InputError when neither tells."""
    text = src.text.lstrip()
    first = next(iter_lines(text), "").strip()
    if src.suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if text.startswith(("{", "[")) and not is_date_line(first):
        return "jsonl" if looks_like_jsonl(src, ctx.limits) else "json"
    if looks_like_transcript(src.text):
        return "transcript"
    if _csv_header(first, cols) or src.suffix in (".csv", ".tsv"):
        return "csv"
    by_suffix = {".json": "json", ".txt": "transcript", ".md": "transcript"}.get(src.suffix)
    if by_suffix:
        return by_suffix
    line = src.text.count("\n", 0, len(src.text) - len(text)) + 1
    raise ctx.error(f"unknown format (starts with {short(first, 40)!r}); {_EXPECTED}", f"line {line}")


def _csv_header(line: str, cols: ColumnMap) -> bool:
    for delimiter in (",", "\t", ";", "|"):
        names = [n.strip().strip('"') for n in line.split(delimiter)]
        if len(names) > 1 and cols.pick("speaker", names) and cols.pick("text", names):
            return True
    return False


def _collect(entries: Iterator, ctx: FileContext, select: str | None) -> list[Conversation]:
    """Build the selected conversations; empty ones are skipped with a warning when others exist."""
    ids: list[str] = []
    convs: list[Conversation] = []
    empties: list[EmptyConversation] = []
    for cid, aliases, build in entries:
        ids.append(cid)
        if select is not None and select != cid and select not in aliases:
            continue
        try:
            conv = build()
        except EmptyConversation as err:
            empties.append(err)
            continue
        convs.append(conv)
    if select is not None and not convs and not empties:
        raise ctx.error(f"no conversation {select!r}; available: {_list_ids(ids)}")
    if not convs:
        if empties:
            raise empties[0]
        raise ctx.error(f"holds no conversations; {_EXPECTED}")
    for err in empties:
        ctx.warnings.add("skipped-empty", f"skipped: {err.detail}")
    taken: set[str] = set()
    for conv in convs:
        if conv.id in taken:
            new = next(f"{conv.id}#{k}" for k in range(2, len(convs) + 2) if f"{conv.id}#{k}" not in taken)
            ctx.warnings.add("dup-conv", f"conversation id {conv.id!r} repeated; renamed {new!r}")
            conv.id = new
        taken.add(conv.id)
    return convs

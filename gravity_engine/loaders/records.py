"""Generic input: utterance records (JSON list, JSONL lines, CSV rows) and conversation objects.

A record is one utterance with speaker and text fields (names from a ``ColumnMap``), optionally
session, timestamp, id and conversation id. A conversation object holds its records under
``utterances``/``messages``/``turns``, or holds ``sessions``, each with its own records.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Callable, Iterator

from ..conversation import Conversation
from .builder import ConversationBuilder, FileContext, jpath
from .options import ColumnMap
from .source import SourceText, iter_lines

# (place of the record, place of one of its fields, the record)
Row = tuple[str, Callable[[str], str], dict]
_LIST_KEYS = ("utterances", "messages", "turns")
_CONV_ID_KEYS = ("id", "conversation_id", "title", "name")


def utterance_list_key(obj: Any) -> str | None:
    if isinstance(obj, dict):
        for key in (*_LIST_KEYS, "sessions"):
            if isinstance(obj.get(key), list):
                return key
    return None


def json_rows(items: list[tuple[str, Any]], ctx: FileContext) -> list[Row]:
    rows = []
    for where, rec in items:
        ctx.expect(rec, dict, where, "an utterance object with speaker and text fields")
        rows.append((where, (lambda k, w=where: jpath(w, k)), rec))
    return rows


def csv_rows(src: SourceText, ctx: FileContext, cols: ColumnMap) -> list[Row]:
    """Rows of a CSV/TSV file with a header line; the delimiter is read from the header."""
    text = src.text
    first = next((ln for ln in iter_lines(text) if ln.strip()), "")
    delimiter = "\t" if src.suffix == ".tsv" else max(",\t;|", key=first.count)
    # The csv module's own field limit (128 KiB) would fail before our clearer utterance limit does.
    csv.field_size_limit(max(131072, min(2**31 - 1, ctx.limits.max_file_bytes)))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[Row] = []
    header: list[str] | None = None
    header_line = 0
    last = 0
    try:
        for fields in reader:
            start, last = last + 1, reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if header is None:
                header, header_line = [f.strip() for f in fields], start
                _check_header(header, header_line, ctx, cols)
                continue
            if len(fields) != len(header):
                raise ctx.error(f"{len(fields)} fields; expected {len(header)} as in the header on line {header_line}",
                                f"line {start}")
            where = f"line {start}"
            if len(rows) >= ctx.limits.max_utterances:
                raise ctx.error(f"more than {ctx.limits.max_utterances:,} rows (LoadLimits.max_utterances); raise "
                                "the limit or split the file", where)
            rows.append((where, (lambda k, w=where: f"{w}, column {k!r}"), dict(zip(header, fields))))
    except csv.Error as err:
        if "unexpected end of data" in str(err):
            raise ctx.error("malformed CSV: a quoted field starting on this line is never closed; expected "
                            "balanced quotes", f"line {last + 1}") from None
        raise ctx.error(f"malformed CSV ({err}); expected delimited fields with balanced quotes",
                        f"line {reader.line_num}") from None
    if not rows:
        raise ctx.error("has a header but no rows; expected one utterance per row", f"line {header_line or 1}")
    return rows


def _check_header(header: list[str], line: int, ctx: FileContext, cols: ColumnMap) -> None:
    if len(set(h.lower() for h in header)) != len(header):
        raise ctx.error(f"repeated column names in the header {header!r}; expected unique names", f"line {line}")
    for need in ("speaker", "text"):
        if cols.pick(need, header) is None:
            raise _missing_field(need, header, f"line {line} (header)", ctx, cols)


def _missing_field(field: str, keys, where: str, ctx: FileContext, cols: ColumnMap):
    names = ", ".join(getattr(cols, field))
    found = ", ".join(map(str, list(keys)[:12])) or "none"
    return ctx.error(f"no {field} field; expected one of: {names} (set ColumnMap.{field}); found: {found}", where)


class _Fields:
    """Which key of a record plays which part, resolved once per distinct key set."""

    def __init__(self, cols: ColumnMap):
        self.cols = cols
        self._cache: dict[tuple, dict[str, Any]] = {}

    def of(self, rec: dict) -> dict[str, Any]:
        keys = tuple(rec)
        found = self._cache.get(keys)
        if found is None:
            found, used = {}, set()  # field -> key, plus "used": the keys not kept as metadata
            for field in ("speaker", "text", "conversation", "session", "timestamp", "id"):
                key = self.cols.pick(field, [k for k in keys if k not in used])
                found[field] = key
                if key is not None:
                    used.add(key)
            found["used"] = used
            self._cache[keys] = found
        return found


def _value(rec: dict, key: str | None) -> Any:
    """A field's value with empty CSV cells and nulls read as absent."""
    if key is None:
        return None
    value = rec.get(key)
    return None if isinstance(value, str) and not value.strip() else value


def fill(b: ConversationBuilder, rows: list[Row], cols: ColumnMap, fields: _Fields, fixed_session=None) -> None:
    """Add records to ``b``: grouped into sessions by their session field, in order of first appearance."""
    ctx = b.ctx
    sessions: dict[str, Any] = {}
    for where, fw, rec in rows:
        f = fields.of(rec)
        for need in ("speaker", "text"):
            if f[need] is None:
                raise _missing_field(need, rec.keys(), where, ctx, cols)
        if fixed_session is not None:
            session = fixed_session
        else:
            raw = _value(rec, f["session"])
            sid = ctx.id_field(raw, lambda: fw(f["session"]), "the session") if raw is not None else "session_1"
            session = sessions.get(sid)
            if session is None:
                session = sessions[sid] = b.new_session(sid, where=where)
        ts = (ctx.read_time(_value(rec, f["timestamp"]), lambda: fw(f["timestamp"]), b.log)
              if f["timestamp"] else (None, None))
        raw_id = _value(rec, f["id"])
        uid = ctx.id_field(raw_id, lambda: fw(f["id"]), "the utterance id") if raw_id is not None else None
        meta = {k: v for k, v in rec.items() if k not in f["used"] and v is not None and v != ""}
        b.add(session, speaker=rec[f["speaker"]], text=rec[f["text"]], where=where,
              speaker_where=lambda: fw(f["speaker"]), text_where=lambda: fw(f["text"]), uid=uid, timestamp=ts,
              metadata=meta)


def read_rows(rows: list[Row], ctx: FileContext, cols: ColumnMap, fmt: str, default_id: str) -> Iterator:
    """Records, split into conversations by their conversation-id field when they have one."""
    fields = _Fields(cols)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        key = fields.of(row[2])["conversation"]
        raw = _value(row[2], key)
        cid = ctx.id_field(raw, lambda: row[1](key), "the conversation id") if raw is not None else default_id
        groups.setdefault(cid, []).append(row)
    for cid, group in groups.items():
        yield cid, (), (lambda cid=cid, group=group: _from_rows(cid, group, ctx, cols, fields, fmt))


def _from_rows(cid: str, rows: list[Row], ctx: FileContext, cols: ColumnMap, fields: _Fields, fmt: str) -> Conversation:
    b = ConversationBuilder(ctx, cid, fmt)
    fill(b, rows, cols, fields)
    return b.finish()


def read_objects(
    items: list[tuple[str, Any]], ctx: FileContext, cols: ColumnMap, fmt: str, default_id: str
) -> Iterator:
    """Conversation objects: ``{id?, speakers?, utterances|messages|turns: [...]}`` or ``{id?, sessions: [...]}``."""
    fields = _Fields(cols)
    for k, (base, obj) in enumerate(items):
        ctx.expect(obj, dict, base, "a conversation object with utterances, messages, turns or sessions")
        key = next((c for c in _CONV_ID_KEYS if obj.get(c) is not None), None)
        if key:
            cid = ctx.id_field(obj[key], jpath(base, key), "the conversation id")
        else:
            cid = default_id if len(items) == 1 else f"{default_id}-{k + 1}"
        yield cid, (), (lambda base=base, obj=obj, cid=cid: _from_object(base, obj, cid, ctx, cols, fields, fmt))


def _from_object(base: str, obj: dict, cid: str, ctx: FileContext, cols: ColumnMap, fields: _Fields, fmt: str):
    b = ConversationBuilder(ctx, cid, fmt, where=base)
    key = utterance_list_key(obj)
    if key is None:
        raise ctx.error("expected a list under utterances, messages, turns or sessions", base)
    speakers = obj.get("speakers") or []
    ctx.expect(speakers, list, jpath(base, "speakers"), "a list of speaker names")
    speakers = [ctx.text_field(s, jpath(jpath(base, "speakers"), i), "a speaker name") for i, s in enumerate(speakers)]
    if key != "sessions":
        fill(b, json_rows(_items(jpath(base, key), obj[key]), ctx), cols, fields)
    for i, sess in enumerate(obj[key] if key == "sessions" else []):
        spath = jpath(jpath(base, "sessions"), i)
        if isinstance(sess, list):
            sess = {"utterances": sess}
        ctx.expect(sess, dict, spath, "a session object with utterances, or a list of utterances")
        sid_key = next((c for c in ("id", "session_id", "session") if sess.get(c) is not None), None)
        sid = ctx.id_field(sess[sid_key], jpath(spath, sid_key), "the session id") if sid_key else f"session_{i + 1}"
        ts_key = cols.pick("timestamp", sess.keys())
        when = ctx.read_time(sess.get(ts_key), jpath(spath, ts_key or "timestamp"), b.log)
        ukey = next((c for c in _LIST_KEYS if c in sess), None)
        if ukey is None:
            raise ctx.error("expected a list under utterances, messages or turns", spath)
        session = b.new_session(sid, when=when, where=spath)
        utterances = ctx.expect(sess[ukey], list, jpath(spath, ukey), "a list of utterances")
        fill(b, json_rows(_items(jpath(spath, ukey), utterances), ctx), cols, fields, fixed_session=session)
    meta = {k: v for k, v in obj.items() if k not in (key, "speakers") and isinstance(v, (str, int, float, bool))}
    return b.finish(speakers=speakers, metadata=meta)


def _items(path: str, values: list) -> list[tuple[str, Any]]:
    return [(jpath(path, i), v) for i, v in enumerate(values)]

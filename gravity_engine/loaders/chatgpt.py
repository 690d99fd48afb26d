"""ChatGPT data export (``conversations.json``): message trees under ``mapping``.

The conversation shown to the user is the branch from ``current_node`` back to the root; edited
or regenerated branches are left out. Only user and assistant text is kept (system prompts, tool
calls and their outputs, hidden messages are skipped and counted).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

from ..conversation import Conversation
from .builder import MISSING, ConversationBuilder, FileContext, jpath

_TEXT_TYPES = (None, "text", "multimodal_text")


def is_chatgpt(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("mapping"), dict)


def read_chatgpt(items: list[tuple[str, Any]], ctx: FileContext) -> Iterator[tuple[str, tuple, Any]]:
    for k, (base, conv) in enumerate(items):
        ctx.expect(conv, dict, base, "an exported conversation object with a 'mapping'")
        title = conv.get("title") if isinstance(conv.get("title"), str) else None
        raw_id = conv.get("id") or conv.get("conversation_id")
        cid = (ctx.id_field(raw_id, jpath(base, "id"), "the conversation id") if raw_id is not None
               else (title or "").strip() or f"conversation_{k + 1}")
        aliases = (title,) if title else ()
        yield cid, aliases, (lambda base=base, conv=conv, cid=cid: _conversation(base, conv, cid, ctx))


def _branch(base: str, mapping: dict, current: Any, ctx: FileContext, b: ConversationBuilder) -> list[tuple[str, dict]]:
    mpath = jpath(base, "mapping")
    if current is None:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            raise ctx.error("no current_node and no leaf message; expected a message tree", mpath)
        current = leaves[-1]
        b.log.add("no-current", f"{base} has no current_node; followed the last leaf {current!r}")
    elif not isinstance(current, str) or current not in mapping:
        raise ctx.error(f"points to {current!r}, which is not a node of mapping; expected a node id",
                        jpath(base, "current_node"))
    chain, seen, node_id, came_from = [], set(), current, jpath(base, "current_node")
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping:
            raise ctx.error(f"parent {node_id!r} is not a node of mapping; expected a node id or null", came_from)
        if node_id in seen:
            raise ctx.error(f"the parent links loop back to {node_id!r}; expected a tree", came_from)
        seen.add(node_id)
        npath = jpath(mpath, node_id)
        node = ctx.expect(mapping[node_id], dict, npath, "a node object with message, parent and children")
        chain.append((node_id, node))
        node_id, came_from = node.get("parent"), jpath(npath, "parent")
    chain.reverse()
    return chain


def _text(content: dict, cpath: str, ctx: FileContext) -> tuple[str, int]:
    """The message text from ``parts`` and the number of non-text parts (images, files) left out."""
    parts = content.get("parts")
    if parts is None and isinstance(content.get("text"), str):
        return content["text"], 0
    parts = ctx.expect(parts if parts is not None else MISSING, list, jpath(cpath, "parts"), "a list of text parts")
    texts, other = [], 0
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])  # e.g. audio transcriptions in multimodal messages
        else:
            other += 1
    return "\n".join(t for t in texts if t.strip()), other


def _conversation(base: str, conv: dict, cid: str, ctx: FileContext) -> Conversation:
    b = ConversationBuilder(ctx, cid, "chatgpt", where=base)
    mapping = ctx.expect(conv.get("mapping", MISSING), dict, jpath(base, "mapping"),
                         "a 'mapping' object of message nodes")
    chain = _branch(base, mapping, conv.get("current_node"), ctx, b)
    session = b.new_session("s1", when=ctx.read_time(conv.get("create_time"), jpath(base, "create_time"), b.log))
    skipped: Counter[str] = Counter()
    for node_id, node in chain:
        msg = node.get("message")
        if msg is None:
            continue
        mpath = jpath(jpath(jpath(base, "mapping"), node_id), "message")
        ctx.expect(msg, dict, mpath, "a message object")
        author = ctx.expect(msg.get("author", MISSING), dict, jpath(mpath, "author"), "an author object with a role")
        role = ctx.text_field(author.get("role", MISSING), jpath(jpath(mpath, "author"), "role"), "the author role")
        meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
        if role not in ("user", "assistant") or meta.get("is_visually_hidden_from_conversation"):
            skipped[f"{role} messages" if role not in ("user", "assistant") else "hidden messages"] += 1
            continue
        cpath = jpath(mpath, "content")
        content = ctx.expect(msg.get("content", MISSING), dict, cpath, "a content object with parts")
        if content.get("content_type") not in _TEXT_TYPES:
            skipped[f"{content.get('content_type')} content"] += 1
            continue
        text, attachments = _text(content, cpath, ctx)
        if not text.strip():
            skipped["empty messages"] += 1
            continue
        extra = {"message_id": msg.get("id", node_id)}
        if attachments:
            extra["attachments"] = attachments
        b.add(session, speaker=role, text=text, where=mpath, text_where=jpath(cpath, "parts"),
              timestamp=ctx.read_time(msg.get("create_time"), jpath(mpath, "create_time"), b.log), metadata=extra)
    if skipped:
        b.log.add("skipped", f"{base}: skipped " + ", ".join(f"{n} {what}" for what, n in sorted(skipped.items())))
    title = conv.get("title") if isinstance(conv.get("title"), str) else None
    return b.finish(metadata={"title": title} if title else {})

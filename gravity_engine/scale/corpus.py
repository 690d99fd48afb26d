"""A corpus: every conversation of a dataset file, or of every conversation file in a folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..conversation import Conversation
from ..errors import InputError
from ..loaders import load_conversations

# What a folder's conversation files end with (the loaders detect the format from the content).
CONVERSATION_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".txt", ".md", ".zip")


@dataclass
class Corpus:
    conversations: list[Conversation] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file, the loader's one-line error)


def load_corpus(path: str | Path, conversations: Iterable[str] | None = None, limit: int | None = None) -> Corpus:
    """Conversations of a file or a folder (not recursive), optionally only the ids named, the first ``limit``.

    In a folder, a file that cannot be read is listed in ``unreadable`` and the others go on; a single
    file that cannot be read raises its ``InputError``.
    """
    path = Path(path)
    wanted = list(dict.fromkeys(conversations or []))
    corpus = Corpus()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in CONVERSATION_SUFFIXES
                       and not p.name.startswith("."))
        if not files:
            raise InputError(f"no conversation files ({', '.join(CONVERSATION_SUFFIXES)}) in this folder",
                             source=str(path))
        for file in files:
            try:
                corpus.conversations.extend(load_conversations(file))
            except InputError as err:
                corpus.unreadable.append((str(file), str(err)))
    elif path.is_file():
        corpus.conversations = load_conversations(path)
    else:
        raise InputError("no such file or folder", source=str(path))
    if wanted:
        by_id = {c.id: c for c in corpus.conversations}
        missing = [w for w in wanted if w not in by_id]
        if missing:
            known = ", ".join(list(by_id)[:12]) + (" ..." if len(by_id) > 12 else "")
            raise InputError(f"no conversation {', '.join(map(repr, missing))} (found: {known})", source=str(path))
        corpus.conversations = [by_id[w] for w in wanted]
    if limit is not None:
        corpus.conversations = corpus.conversations[:limit]
    return corpus

"""Stores for the conversations a command measures or evaluates: built here, before the measuring starts, so
that evaluation only ever reads them (``store.load_conversation_store``)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..anchors import ANCHORS_FILE
from ..conversation import Conversation
from ..embed import Embedder
from ..store import AnchorStore, check_store_backend, load_conversation_store
from .pipeline import build_store


def ensure_store(conversation: Conversation, stores_dir: str | Path, embedder: Embedder | None = None,
                 backend: str | None = None) -> tuple[AnchorStore, bool]:
    """The store under ``stores_dir/<conversation id>``, built with ``backend`` (classic unless given) when it is
    missing, and whether it was built; a store another backend built is refused (``StoreError``)."""
    out = Path(stores_dir) / conversation.id
    if (out / ANCHORS_FILE).is_file():
        return load_conversation_store(conversation, stores_dir, backend), False
    return build_store(conversation, out, backend=backend or "classic", embedder=embedder), True


def ensure_stores(conversations: Iterable[Conversation], stores_dir: str | Path, embedder: Embedder | None = None,
                  backend: str | None = None, status: Callable[[str], None] | None = None) -> list[str]:
    """Build, in this process, the stores missing among ``conversations``'; the ids built. Existing stores are only
    checked against ``backend``."""
    built = []
    for conv in conversations:
        folder = Path(stores_dir) / conv.id
        if (folder / ANCHORS_FILE).is_file():
            check_store_backend(folder, backend)
            continue
        if status is not None:
            status(f"building anchors for {conv.id} ({backend or 'classic'} backend) in {folder} ...")
        ensure_store(conv, stores_dir, embedder, backend)
        built.append(conv.id)
    return built

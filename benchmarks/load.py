"""Several people on one shared app: N simulated users (N = 1, 4, 8, 16 by default) on one `streamlit run app.py`
in password mode, each with an account and a workspace of their own, driving Streamlit's websocket protocol
directly (what the browser sends: a rerun with the page and the widget values; a time ends when the server says
the run is over). No browser renders anything, so the times are the server's share of what a person waits for.

    .venv/bin/python benchmarks/load.py [--users 1 4 8 16] [--questions 3] [--seed 0]

Each user: opens the app (the sign-in page), signs in, opens Entity graph, Event timeline, Topic arcs and the
Query playground, and asks the playground a few of the sample's benchmark questions, with 0.5-1.5 s of
"thinking" between actions. Meanwhile user 1 builds the sample conversation book_club.txt (classic backend; the
time is from the click to the finished store) and user 2 (user 1 when alone) runs the Evaluation page's default
slice on the sample store. Every N starts a fresh server on an empty GRAVITY_HOME, warmed by one session that
opens the playground (the embedding model loaded), so each row measures sessions and not start-up.

Memory: the server process's RSS after the warm-up (base) and once all N users are done and still connected;
per session = (that - base) / N. Errors: exceptions drawn by a page, runs that never finished (60 s; 300 s for
the build and evaluation) and dropped connections.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app_services import auth  # noqa: E402
from gravity_engine.testing.app_server import AppServer  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

PAGES = ("graph", "timeline", "topics", "playground")
QUESTIONS = [q["question"] for q in json.loads((ROOT / "sample_data/medllm_project.questions.json").read_text())]
RUN_TIMEOUT = 60.0
JOB_TIMEOUT = 300.0


class RunError(Exception):
    """A run that failed: an exception on the page, no end within the timeout, or a dropped connection."""


@dataclass
class Run:
    seconds: float
    widgets: dict[str, tuple[str, str]]  # user key (or label) -> (widget id, element type)
    texts: list[str]
    exceptions: list[str]


class Session:
    """One browser tab, as the server sees it: a websocket to /_stcore/stream and the reruns it asks for."""

    def __init__(self, url: str):
        self.base = url
        ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.ws = connect(ws_url, subprotocols=["streamlit"], origin=url, open_timeout=30, max_size=None)
        self.ws.__enter__()  # websockets wants its connection entered; close() leaves it
        self.pages: dict[str, str] = {}  # url path -> page script hash
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, str]] = {}

    def close(self) -> None:
        self.ws.close()

    def run(self, page: str | None = None, values: dict[str, object] | None = None, trigger: str | None = None,
            query: str = "", timeout: float = RUN_TIMEOUT) -> Run:
        """Rerun the script (on ``page``, by its URL path) with widget ``values`` and ``trigger`` (a button) set,
        by user key; returns when the server says the run is over."""
        if page is not None:
            self.page_hash = self.pages.get(page, "")
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = query
        state.page_script_hash = self.page_hash
        for key, value in (values or {}).items():
            wid, _ = self.widgets[key]
            ws = WidgetState(id=wid)
            if isinstance(value, bool):
                ws.bool_value = value
            elif isinstance(value, int):
                ws.int_value = value
            else:
                ws.string_value = str(value)
            state.widget_states.widgets.append(ws)
        if trigger:
            state.widget_states.widgets.append(WidgetState(id=self.widgets[trigger][0], trigger_value=True))
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        widgets: dict[str, tuple[str, str]] = {}
        texts: list[str] = []
        exceptions: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RunError(f"no end of the run within {timeout:.0f} s")
            try:
                raw = self.ws.recv(timeout=left)
            except TimeoutError as err:
                raise RunError(f"no end of the run within {timeout:.0f} s") from err
            except Exception as err:  # the server closed the connection
                raise RunError(f"connection lost: {err}") from err
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind in ("new_session", "navigation"):
                for p in getattr(fm, kind).app_pages:
                    self.pages[p.url_pathname] = p.page_script_hash
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                etype = el.WhichOneof("type")
                sub = getattr(el, etype) if etype else None
                if etype == "exception":
                    exceptions.append(f"{sub.type}: {sub.message}")
                elif etype in ("markdown", "alert", "heading"):
                    texts.append(sub.body)
                wid = getattr(sub, "id", "") if sub is not None else ""
                if wid:
                    key = wid.rsplit("-", 1)[-1] if wid.startswith("$$ID-") else ""
                    label = getattr(sub, "label", "")
                    for name in {key, label} - {""}:
                        widgets[name] = (wid, etype)
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue  # the script asked for a rerun (st.rerun): the server starts it at once
                if status != "FINISHED_SUCCESSFULLY":
                    raise RunError(status)
                break
        self.widgets = widgets
        run = Run(time.perf_counter() - t0, widgets, texts, exceptions)
        if exceptions:
            raise RunError("; ".join(exceptions))
        return run


@dataclass
class Tally:
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, action: str, seconds: float | None, error: str | None = None) -> None:
        with self.lock:
            if error is None:
                self.times.setdefault(action, []).append(seconds)
            else:
                self.errors.setdefault(action, []).append(error)
            self.times.setdefault(action, [])


def timed(tally: Tally, action: str, fn, *args, **kwargs):
    t0 = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
    except RunError as err:
        tally.add(action, None, str(err))
        return None
    tally.add(action, time.perf_counter() - t0)
    return out


def wait_for(s: Session, page: str, done, timeout: float = JOB_TIMEOUT, every: float = 2.0) -> None:
    """Rerun ``page`` every ``every`` seconds (as the page's own polling would) until ``done(run)``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(every)
        if done(s.run(page)):
            return
    raise RunError(f"not finished within {timeout:.0f} s")


def user(i: int, url: str, password: str, tally: Tally, questions: int, jobs: list[str], rng: random.Random,
         sessions: list[Session]) -> None:
    think = lambda: time.sleep(rng.uniform(0.5, 1.5))  # noqa: E731
    try:
        s = Session(url)
    except Exception as err:
        tally.add("open app", None, f"cannot connect: {err}")
        return
    sessions.append(s)
    if timed(tally, "open app", s.run) is None:
        return
    think()
    if timed(tally, "sign in", sign_in_second_step, s, f"user{i}", password) is None:
        return
    for job in jobs:  # started first: they run in the background while this user goes on (and polls at the end)
        page, key = ("build", "build_start") if job == "build" else ("evaluation", "evaluation_run")
        timed(tally, f"open {page}", s.run, page)
        t0 = time.perf_counter()
        if timed(tally, f"start {job}", s.run, page, trigger=key) is None:
            continue
        jobs_started[(i, job)] = t0
    for page in PAGES:
        think()
        timed(tally, "open page", s.run, page)
    for q in range(questions):
        think()
        question = QUESTIONS[(i * questions + q) % len(QUESTIONS)]
        if "playground_query" not in s.widgets:
            tally.add("playground question", None, "no question box on the playground")
            break
        timed(tally, "playground question", ask, s, question)
    for job in jobs:
        t0 = jobs_started.get((i, job))
        if t0 is None:
            continue
        page = "build" if job == "build" else "evaluation"
        done = ((lambda r: "build_open" in r.widgets) if job == "build"
                else (lambda r: any(k.startswith("Download all rows") for k in r.widgets)))
        try:
            wait_for(s, page, done)
            tally.add(job, time.perf_counter() - t0)
        except RunError as err:
            tally.add(job, None, str(err))


jobs_started: dict[tuple[int, str], float] = {}


def ask(s: Session, question: str) -> Run:
    """A question typed into the playground and Ask clicked; the run ends with the answer drawn."""
    run = s.run("playground", values={"playground_query": question}, trigger="playground_ask")
    if not any(t.startswith("What Gravity changed") for t in run.texts):
        raise RunError("the playground drew no answer: " + " | ".join(t[:60] for t in run.texts[:4]))
    return run


def sign_in_second_step(s: Session, name: str, password: str) -> Run:
    """The form's submit, after the sign-in page has been drawn (``open app``)."""
    run = s.run(values={"signin_name": name, "signin_password": password}, trigger=_submit_key(s))
    if "account_sign_out" not in run.widgets:
        raise RunError("sign-in refused: " + " | ".join(run.texts[:3]))
    return run


def _submit_key(s: Session) -> str:
    return next(k for k, (wid, etype) in s.widgets.items() if etype == "button" and "Sign in" in k)


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def measure(n: int, questions: int, seed: int, password: str = "load-test-password", jobs: bool = True) -> dict:
    home = Path(tempfile.mkdtemp(prefix=f"gravity-load-{n}-"))
    for i in range(max(n, 1)):
        auth.set_password(f"user{i}", password, home / "users.json")
    auth.set_password("warmup", password, home / "users.json")
    jobs_started.clear()
    with AppServer(home, env={"GRAVITY_AUTH": "password"}) as server:
        warm = Session(server.url)
        warm.run()
        sign_in_second_step(warm, "warmup", password)
        warm.run("playground")
        ask(warm, QUESTIONS[0])
        warm.close()
        time.sleep(2)
        base = rss_mb(server.pid)
        tally = Tally()
        sessions: list[Session] = []
        job_plan = {1: ["build"], 2: ["evaluation"]} if n > 2 else {0: ["build", "evaluation"]} if n == 1 else \
            {0: ["build"], 1: ["evaluation"]}
        if not jobs:
            job_plan = {}
        threads = [threading.Thread(target=user, args=(i, server.url, password, tally, questions, job_plan.get(i, []),
                                                       random.Random(seed * 1000 + i), sessions), daemon=True)
                   for i in range(n)]
        peak = base
        t0 = time.perf_counter()
        for t in threads:
            t.start()
            time.sleep(0.2)  # people arrive over a few seconds, not in one instant
        while any(t.is_alive() for t in threads):
            peak = max(peak, rss_mb(server.pid))
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        end = rss_mb(server.pid)
        for s in sessions:
            s.close()
        log = server.log()
    return {"n": n, "tally": tally, "base": base, "end": end, "peak": peak, "wall": wall,
            "tracebacks": log.count("Traceback")}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--questions", type=int, default=3, help="playground questions per user")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-jobs", action="store_true", help="no build and no evaluation alongside")
    args = parser.parse_args(argv)
    rows = []
    for n in args.users:
        print(f"N={n}: running…", file=sys.stderr, flush=True)
        rows.append(measure(n, args.questions, args.seed, jobs=not args.no_jobs))
    print("| users | action | count | p50 s | p95 s | max s | errors |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        t = r["tally"]
        for action in sorted(t.times):
            v = t.times[action]
            errs = t.errors.get(action, [])
            print(f"| {r['n']} | {action} | {len(v)} | {pct(v, 50):.2f} | {pct(v, 95):.2f} | "
                  f"{max(v) if v else float('nan'):.2f} | {len(errs)} |")
    print()
    # Per session from base counts the build's and the evaluation's one-off loads (spaCy, hosts) against few
    # sessions; the marginal column (from the previous N's row) is what one more person costs.
    print("| users | server RSS base MB | peak MB | end MB | per session MB | marginal MB per added session "
          "| wall s | errors | tracebacks in log |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    prev = None
    for r in rows:
        errors = sum(len(e) for e in r["tally"].errors.values())
        marginal = (f"{(r['end'] - prev['end']) / (r['n'] - prev['n']):.1f}"
                    if prev and r["n"] > prev["n"] else "")
        print(f"| {r['n']} | {r['base']:.0f} | {r['peak']:.0f} | {r['end']:.0f} | "
              f"{(r['end'] - r['base']) / r['n']:.1f} | {marginal} | {r['wall']:.0f} | {errors} | {r['tracebacks']} |")
        prev = r
    for r in rows:
        for action, errs in r["tally"].errors.items():
            for e in sorted(set(errs))[:3]:
                print(f"N={r['n']} {action}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""App timings against issue 12's targets: cold first page, page switch, first playground question on a new
store, later questions; plus the script runs and library calls behind them.

    .venv/bin/python benchmarks/app.py [--repeat 3] [--new-store DIR] [--old-store DIR] [--no-browser]

Browser rows: each repetition starts `streamlit run app.py` on an empty GRAVITY_HOME (no caches; a fresh
server, as after `make app`) and drives Debian's chromium with Playwright. A time ends when the page's content
is drawn and Streamlit's run is over. Beside each wall time: the CPU seconds the server process spent on the
step and the CPU seconds of every chromium process (both from /proc, all threads), so a reading taken on a
busy machine still shows where the work is and how much of it there is.

The "new store" is built by today's code (`python -m gravity_engine build ../shared/data/locomo10.json
--conversation conv-26`, 419 turns) unless --new-store names one; no host has ever indexed it on that
GRAVITY_HOME. --old-store (default: runs/classic/conv-30, if present) is a store from an earlier build, to show
how stores built before a change behave.
Issue 30 rows: the playground's first screen at 1400x1000 on conv-26 (where the verdicts and the changes
table's third row end, the page's height with the details folded), a question asked with an endpoint that
refuses connections, and what the evaluation headline says for 1 and 50 questions.
AppTest rows run the script as the server runs it (after a warm-up run); the graph row is the library call
the page makes on the sample store.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
SAMPLE = ROOT / "sample_data" / "stores" / "medllm_project"
TARGETS = {"cold": 3.0, "switch": 1.0, "first": 5.0, "later": 1.0}  # the graph (<= 2 s): benchmarks/explore.py
LOCOMO_QUESTIONS = ["When did Caroline go to the LGBTQ support group?", "What is Caroline's identity?",
                    "When did Melanie paint a sunrise?",
                    "What fields would Caroline be likely to pursue in her education?",
                    "When did Melanie run a charity race?", "What do Melanie's kids like?"]
SWITCHES = (("timeline", "Event timeline"), ("topics", "Topic arcs"), ("data", "Export & import"),
            ("evaluation", "Evaluation"), ("playground", "Query playground"), ("", "Gravity Studio"))


class Row:
    """One measure: wall seconds per repetition, with the server's and the browser's CPU seconds beside them."""

    def __init__(self, name: str, target: float | None = None):
        self.name, self.target = name, target
        self.wall: list[float] = []
        self.server: list[float] = []
        self.browser: list[float] = []

    def add(self, wall: float, server: float | None = None, browser: float | None = None) -> None:
        self.wall.append(wall)
        if server is not None:
            self.server.append(server)
        if browser is not None:
            self.browser.append(browser)


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f}" if xs else ""


def print_table(rows: list[Row]) -> None:
    print("| measure | target | n | median s | max s | server CPU s | browser CPU s | |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        p50 = statistics.median(r.wall)
        verdict = "" if r.target is None else "ok" if p50 <= r.target else "OVER"
        target = f"<= {r.target:g} s" if r.target is not None else ""
        print(f"| {r.name} | {target} | {len(r.wall)} | {p50:.2f} | {max(r.wall):.2f} | {_median(r.server)} "
              f"| {_median(r.browser)} | {verdict} |")


def timed(fn, repeat: int = 5) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def library_rows(sample: str) -> list[Row]:
    from streamlit.testing.v1 import AppTest

    from app_services import studio
    from gravity_engine.embed import embedder_for
    from gravity_engine.hosts import get_host
    from gravity_engine.query.pipeline import GravityQuery, ask
    from gravity_engine.store import AnchorStore
    from gravity_engine.viz import graph as gviz

    def home() -> None:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["store_path"] = sample
        at.run()

    home()  # warm-up: imports, the store into the cache
    rows = [Row("AppTest: home page script run (warm)")]
    rows[0].wall = timed(home, 5)
    store = AnchorStore.load(sample)
    sessions = studio.session_by_utterance(store)

    def graph() -> None:
        _, nodes, edges = gviz.explore_data(store.anchors, sessions)
        json.dumps(gviz.graph_view(nodes, edges))

    rows.append(Row(f"library: entity graph view data, sample ({len(store.anchors.entities)} entities)"))
    rows[-1].wall = timed(graph, 5)
    emb = embedder_for(store.anchors.built_with.embedding_model, store.anchors.built_with.embedding_dim)
    gq = GravityQuery(store, emb)
    host = get_host("dense", embedder=emb)
    host.ingest(store.conversation)
    question = "When did MedLLM invent a drug dosage?"
    ask(store, host, question, gravity=gq)
    rows.append(Row("library: playground answer path, dense host, no LLM"))
    rows[-1].wall = timed(lambda: ask(store, host, question, gravity=gq), 10)
    return rows


def _stat(pid: int | str) -> list[str]:
    # /proc/<pid>/stat after the command name: state, ppid, ... utime (12th), stime (13th)
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) the process has used so far."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_cpu() -> float:
    """CPU seconds used so far by every chromium process this benchmark started (renderers, GPU, network)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int(_stat(d.name)[1])
                names[int(d.name)] = (d / "comm").read_text().strip()
            except (OSError, IndexError, ValueError):
                continue
    mine, total = {os.getpid()}, 0.0
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    for pid in mine:
        if names.get(pid, "").startswith("chrom"):
            try:
                total += server_cpu(pid)
            except OSError:
                pass
    return total


class Tab:
    """A browser tab in its own context."""

    def __init__(self, browser, server_pid: int):
        self.page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        self.pid = server_pid

    def drawn(self, heading: str, timeout: float = 300_000) -> None:
        self.page.get_by_role("heading", name=heading).first.wait_for(timeout=timeout)
        self.page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
                                    "!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout)

    def measure(self, row: Row, action) -> None:
        s0, b0, t0 = server_cpu(self.pid), browser_cpu(), time.perf_counter()
        action()
        row.add(time.perf_counter() - t0, server_cpu(self.pid) - s0, browser_cpu() - b0)

    def close(self) -> None:
        self.page.context.close()


def ask_questions(tab: Tab, first: Row, later: Row, questions: list[str]) -> None:
    for i, q in enumerate(questions):
        box = tab.page.get_by_label("Question", exact=True)
        box.fill(q)
        box.press("Enter")
        tab.page.wait_for_timeout(300)

        def answer() -> None:
            tab.page.get_by_role("button", name="Ask").click()
            tab.page.get_by_text(q, exact=False).first.wait_for(timeout=300_000)
            tab.drawn("What Gravity changed")
            tab.page.wait_for_function(f"() => document.body.innerText.includes({q!r}.slice(0, 20))")

        tab.measure(first if i == 0 else later, answer)
        tab.page.wait_for_timeout(500)


def browser_rows(new_store: Path, old_store: Path | None, repeat: int) -> list[Row]:
    from playwright.sync_api import sync_playwright

    from gravity_engine.store import AnchorStore
    from gravity_engine.testing.app_server import AppServer, launch_chromium

    n_new = AnchorStore.load(new_store).conversation.n_utterances()
    start = Row("server start to healthy (streamlit run)")
    cold = Row("cold first page (fresh server, first visit)", TARGETS["cold"])
    switch = Row(f"page switch ({len(SWITCHES)} pages twice per repetition, sample store)", TARGETS["switch"])
    first = Row(f"first question, new store built by today's code, never indexed ({n_new} turns)", TARGETS["first"])
    later = Row("later questions (same store, another question)", TARGETS["later"])
    old_first = Row(f"first question, a store from an earlier build ({old_store.name if old_store else '-'}), "
                    "never indexed", TARGETS["first"])
    with sync_playwright() as p:
        browser = launch_chromium(p)
        for _ in range(repeat):
            home = Path(tempfile.mkdtemp(prefix="gravity-bench-"))
            try:
                shutil.copytree(new_store, home / "workspace" / "new-store")
                if old_store:
                    shutil.copytree(old_store, home / "workspace" / "old-store")
                with AppServer(home) as server:
                    start.add(server.startup_s)
                    tab = Tab(browser, server.pid)

                    def first_page() -> None:
                        tab.page.goto(f"{server.url}/?store=sample/{SAMPLE.name}")
                        tab.drawn("Gravity Studio")

                    tab.measure(cold, first_page)
                    for _ in range(2):
                        for link, heading in SWITCHES:
                            el = tab.page.locator(f"[data-testid=stSidebar] a[href$='/{link}']").first

                            def go() -> None:
                                el.click()
                                try:
                                    tab.drawn(heading, timeout=60_000)
                                except Exception:  # a click lost while the previous run finished: clicked again
                                    el.click()
                                    tab.drawn(heading)

                            tab.measure(switch, go)
                    tab.close()
                    for name, row, qs in (("new-store", first, LOCOMO_QUESTIONS[:3]),
                                          ("old-store", old_first, LOCOMO_QUESTIONS[3:4])):
                        if name == "old-store" and not old_store:
                            continue
                        tab = Tab(browser, server.pid)
                        tab.page.goto(f"{server.url}/playground?store=workspace/{name}")
                        tab.drawn("Query playground")
                        ask_questions(tab, row, later, qs)
                        tab.close()
                    log = server.log()
                    if "Traceback" in log:
                        print(log[-3000:], file=sys.stderr)
            finally:
                shutil.rmtree(home, ignore_errors=True)
        browser.close()
    return [start, cold, switch, first, later] + ([old_first] if old_store else [])


def playground_rows(new_store: Path) -> tuple[list[Row], list[tuple[str, str]]]:
    """Issue 30's playground: the first screen at 1400x1000 for a benchmark question on conv-26 (where the verdicts
    and the changes table's third row end, the page's height with the details folded), and the wait for a question
    when the model endpoint refuses connections (set on the Settings page, as a user would)."""
    import socket

    from playwright.sync_api import sync_playwright

    from gravity_engine.testing.app_server import AppServer, launch_chromium
    from gravity_engine.testing.page_checks import playground_first_screen

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    home = Path(tempfile.mkdtemp(prefix="gravity_bench_pg_"))
    shutil.copytree(new_store, home / "workspace" / "conv-26")
    ask_row, failing = Row("browser: playground, Ask -> results drawn (conv-26, dense host indexed)"), \
        Row("browser: playground, Ask with an endpoint that refuses connections -> results and the error")
    sizes: list[tuple[str, str]] = []
    try:
        with AppServer(home) as server, sync_playwright() as p:
            browser = launch_chromium(p)
            tab = Tab(browser, server.pid)
            tab.page.set_viewport_size({"width": 1400, "height": 1000})
            tab.page.goto(f"{server.url}/playground?store=workspace/conv-26")
            tab.drawn("Query playground")
            for attempt in range(2):  # the first builds the dense host's index; the second is a user's next question
                box = tab.page.get_by_label("Question", exact=True)
                box.fill(LOCOMO_QUESTIONS[0] if attempt else LOCOMO_QUESTIONS[1])
                box.press("Enter")
                tab.page.wait_for_timeout(500)

                def answer() -> None:
                    tab.page.get_by_role("button", name="Ask").click()
                    tab.page.wait_for_timeout(300)
                    tab.drawn("What Gravity changed")

                tab.measure(ask_row, answer) if attempt else answer()
            tab.page.wait_for_timeout(1000)
            screen = playground_first_screen(tab.page)
            sizes += [("playground viewport", f"{screen['viewport']} px"),
                      ("playground: bottom of the two verdicts", f"{screen['verdicts_bottom']:.0f} px"),
                      ("playground: bottom of the changes table's third row", f"{screen['third_row_bottom']:.0f} px"),
                      ("playground: page height per question, details folded", f"{screen['page_height']:.0f} px")]
            tab.page.goto(f"{server.url}/settings?store=workspace/conv-26")
            tab.drawn("Settings")
            tab.page.get_by_label("Base URL").fill(f"http://127.0.0.1:{dead}/v1")
            tab.page.get_by_label("Base URL").press("Enter")
            tab.page.wait_for_timeout(1000)
            tab.page.locator("[data-testid=stSidebar] a[href*='/playground']").first.click()
            tab.drawn("Query playground")
            box = tab.page.get_by_label("Question", exact=True)
            box.fill(LOCOMO_QUESTIONS[0])
            box.press("Enter")
            tab.page.wait_for_timeout(500)

            def fail() -> None:
                tab.page.get_by_role("button", name="Ask").click()
                tab.page.get_by_text("The model endpoint failed", exact=False).wait_for(timeout=300_000)
                tab.drawn("What Gravity changed")

            tab.measure(failing, fail)
            tab.close()
            browser.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return [ask_row, failing], sizes


def evaluation_sizes(new_store: Path) -> list[tuple[str, str]]:
    """What the evaluation headline says for 1 and 50 LoCoMo questions (library: the page draws these strings)."""
    from gravity_engine.conversation import Question
    from gravity_engine.eval.statistics import sample_slice
    from gravity_engine.store import AnchorStore
    from gravity_engine.viz import evaluation as eviz

    store = AnchorStore.load(new_store)
    qs = [Question.model_validate({**q.model_dump(), "category": str(q.category)}) for q in store.conversation.questions]
    out = []
    for n in (1, 50):
        cats = [q.category for q in sample_slice(qs, n, "stratified", 0)]
        head = eviz.headline([{"n": len(cats) - eviz.excluded_count(cats, "locomo")}], cats, "locomo")
        out.append((f"evaluation, {n} question(s): button / beside the number / gain shown",
                    f"{eviz.run_label(cats, 'locomo')} / {head['counts']} / {head['show_gain']}"))
    return out


def build_new_store(out: Path) -> Path:
    """conv-26 built by today's code (classic backend, offline), as a user's new store."""
    if not LOCOMO.is_file():
        sys.exit(f"{LOCOMO} is missing: pass --new-store DIR (a store built by today's code)")
    print(f"building conv-26 with today's code into {out} ...", file=sys.stderr)
    done = subprocess.run([sys.executable, "-m", "gravity_engine", "build", str(LOCOMO), "--conversation", "conv-26",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "GRAVITY_HOME": str(out.parent / "home"), "HF_HUB_OFFLINE": "1",
                               "TRANSFORMERS_OFFLINE": "1"})
    if done.returncode != 0:
        sys.exit(f"building conv-26 failed:\n{done.stderr[-3000:]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fresh servers (browser rows); medians over them")
    ap.add_argument("--new-store", default=None, help="a store built by today's code (default: build conv-26)")
    ap.add_argument("--old-store", default=str(ROOT / "runs" / "classic" / "conv-30"),
                    help="a store from an earlier build ('' for none)")
    ap.add_argument("--no-browser", action="store_true", help="skip the real-server, real-browser rows")
    args = ap.parse_args()
    rows = library_rows(str(SAMPLE))
    if not args.no_browser:
        scratch = Path(tempfile.mkdtemp(prefix="gravity-bench-store-"))
        try:
            new = Path(args.new_store) if args.new_store else build_new_store(scratch / "conv-26")
            old = Path(args.old_store) if args.old_store and (Path(args.old_store) / "anchors.json").is_file() \
                else None
            rows += browser_rows(new, old, args.repeat)
            pg_rows, sizes = playground_rows(new)
            rows += pg_rows
            sizes += evaluation_sizes(new)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print_table(rows)
    if not args.no_browser:
        print("\n| issue 30 | size |\n|---|---|")
        for label, value in sizes:
            print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()

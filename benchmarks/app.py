"""App timings: home page interactive, entity graph of a whole conversation, playground answer path (no LLM),
and in a real browser: cold first page, page switches, first playground question on a new store, later questions.

    .venv/bin/python benchmarks/app.py [--store DIR] [--locomo-store DIR] [--no-browser]

Home and playground run through Streamlit's AppTest (the script as the server runs it, after a warm-up
run); the graph is the library call the page makes (networkx layout + altair chart spec) on the largest store given.
The browser rows start `streamlit run app.py` with an empty GRAVITY_HOME (no caches) and drive Debian's chromium
with Playwright; a time ends when the page's content is drawn and Streamlit's run is over.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(fn, repeat: int = 5) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "sample_data" / "stores" / "medllm_project"))
    ap.add_argument("--locomo-store", default=None, help="a store built from one LoCoMo conversation")
    ap.add_argument("--no-browser", action="store_true", help="skip the real-server, real-browser rows")
    args = ap.parse_args()
    locomo = [args.locomo_store] if args.locomo_store else sorted(
        str(p) for p in (ROOT / "runs" / "classic").glob("conv-*") if (p / "anchors.json").is_file())[:2]

    from streamlit.testing.v1 import AppTest

    from gravity_engine import studio
    from gravity_engine.store import AnchorStore
    from gravity_engine.viz import graph as gviz

    rows = []

    def app(page: str | None, **state):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["store_path"] = args.store
        for k, v in state.items():
            at.session_state[k] = v
        at.run()
        if page:
            at.switch_page(page)
            at.run()
        return at

    app(None)  # warm-up: imports, store load into the cache
    home = timed(lambda: app(None), 5)
    rows.append(("home page script run (warm)", home, 3.0))

    for label, path in (("sample", args.store), ("LoCoMo", args.locomo_store)):
        if not path:
            continue
        store = AnchorStore.load(path)
        sessions = studio.session_by_utterance(store)

        def render():  # what the graph page computes once per store, then draws (benchmarks/explore.py: details)
            _, nodes, edges = gviz.explore_data(store.anchors, sessions)
            gviz.graph_chart(nodes, edges).to_dict()

        rows.append((f"entity graph chart, {label} ({len(store.anchors.entities)} entities)", timed(render, 5), 3.0))

    from gravity_engine.hosts import get_host
    from gravity_engine.query.pipeline import GravityQuery, ask

    store = AnchorStore.load(args.store)
    emb = studio.embedder_for(store.anchors.built_with.embedding_model, store.anchors.built_with.embedding_dim)
    gq = GravityQuery(store, emb)
    host = get_host("dense", embedder=emb)
    host.ingest(store.conversation)
    question = "When did MedLLM invent a drug dosage?"
    ask(store, host, question, gravity=gq)
    rows.append(("playground answer path, dense host, no LLM", timed(lambda: ask(store, host, question, gravity=gq), 10),
                 1.0))

    if not args.no_browser and Path("/usr/bin/chromium").exists():
        rows += browser_rows(args.store, locomo)

    print(f"{'measure':74} {'p50 s':>8} {'max s':>8} {'target':>8}")
    for name, times, target in rows:
        p50 = statistics.median(times)
        ok = "" if target is None else "ok" if p50 <= target else "OVER"
        print(f"{name:74} {p50:8.3f} {max(times):8.3f} {'' if target is None else f'{target:7.1f}s'} {ok}")


LOCOMO_QUESTIONS = ["When did Caroline go to the LGBTQ support group?", "What is Caroline's identity?",
                    "When did Melanie paint a sunrise?", "What fields would Caroline be likely to pursue in her education?",
                    "When did Melanie run a charity race?", "What do Melanie's kids like?"]


def browser_rows(sample: str, locomo: list[str]) -> list:
    """A real server on an empty GRAVITY_HOME and a real browser (see the module docstring)."""
    import os
    import shutil
    import signal
    import subprocess
    import tempfile
    import urllib.request

    from playwright.sync_api import sync_playwright

    from gravity_engine.store import AnchorStore

    home = Path(tempfile.mkdtemp(prefix="gravity-bench-"))
    stores = [Path(p) for p in locomo] or [Path(sample)]
    names = []
    for p in stores:  # new stores: in the workspace, never indexed by any host on this GRAVITY_HOME
        shutil.copytree(p, home / "workspace" / f"new-{p.name}")
        names.append(f"new-{p.name}")
    env = {**os.environ, "GRAVITY_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if len(names) > 1:  # the second store as the app leaves it after a build: its dense index prepared
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from gravity_engine import studio; "
                "from gravity_engine.store import AnchorStore; s = AnchorStore.load(sys.argv[2]); "
                "studio.index_for_dense_host(s, studio.embedder_for(s.anchors.built_with.embedding_model))",
                str(ROOT), str(home / "workspace" / names[1])], env=env, check=True, capture_output=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    rows = []
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        rows.append(("server start to healthy (streamlit run)", [time.perf_counter() - t0], None))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"])
            page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()

            def drawn(heading: str, timeout: float = 300_000) -> None:
                page.get_by_role("heading", name=heading).first.wait_for(timeout=timeout)
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
                                       "!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout)

            t = time.perf_counter()
            page.goto(f"{url}/?store=sample/{Path(sample).name}")
            drawn("Gravity Studio")
            rows.append(("cold first page (fresh server, first visit)", [time.perf_counter() - t], 3.0))
            switches = []
            for _ in range(2):
                for link, heading in (("timeline", "Event timeline"), ("topics", "Topic arcs"), ("data", "Export & import"),
                                      ("evaluation", "Evaluation"), ("playground", "Query playground"),
                                      ("", "Gravity Studio")):
                    t = time.perf_counter()
                    link_el = page.locator(f"[data-testid=stSidebar] a[href$='/{link}']").first
                    link_el.click()
                    try:
                        drawn(heading, timeout=60_000)
                    except Exception:  # a click lost while the previous run finished: counted, then clicked again
                        link_el.click()
                        drawn(heading)
                    switches.append(time.perf_counter() - t)
            rows.append((f"page switch ({len(switches)} switches over 6 pages, sample store)", switches, 1.0))

            def first_question(name: str, questions: list[str]) -> tuple[float, list[float]]:
                pg = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
                nonlocal page
                page = pg  # drawn() watches this tab now
                pg.goto(f"{url}/playground?store=workspace/{name}")
                drawn("Query playground")
                times = []
                for q in questions:
                    box = pg.get_by_label("Question", exact=True)
                    box.fill(q)
                    box.press("Enter")
                    pg.wait_for_timeout(300)
                    t = time.perf_counter()
                    pg.get_by_role("button", name="Ask").click()
                    pg.get_by_text(q, exact=False).first.wait_for(timeout=300_000)
                    drawn("What Gravity changed in the prompt")
                    pg.wait_for_function(f"() => document.body.innerText.includes({q!r}.slice(0, 20))")
                    times.append(time.perf_counter() - t)
                return times[0], times[1:]

            qs = LOCOMO_QUESTIONS if locomo else ["When did MedLLM invent a drug dosage?",
                                                  "Who is Priya's manager at Northwind Health?",
                                                  "When did Priya arrive in Seattle?"]
            first, later = first_question(names[0], qs[:3])
            n = AnchorStore.load(home / "workspace" / names[0]).conversation.n_utterances()
            rows.append((f"first question, new store never indexed ({names[0]}, {n} turns; fresh server: "
                         "embedding model load + dense ingest)", [first], 5.0))
            if len(names) > 1:
                first2, later2 = first_question(names[1], qs[3:])
                rows.append((f"first question, new store built in the app ({names[1]}: dense index prepared "
                             "by its build)", [first2], 5.0))
                later += later2
            rows.append(("later questions (same store, another question)", later, 1.0))
            browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)
    return rows


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()

"""App timings: home page interactive, entity graph of a whole conversation, playground answer path (no LLM).

    .venv/bin/python benchmarks/app.py [--store DIR] [--locomo-store DIR]

Home and playground run through Streamlit's AppTest (the script as the server runs it, after a warm-up
run); the graph is the library call the page makes (networkx layout + altair chart spec) on the largest store given.
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
    args = ap.parse_args()

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

    print(f"{'measure':58} {'p50 s':>8} {'max s':>8} {'target':>8}")
    for name, times, target in rows:
        p50 = statistics.median(times)
        ok = "ok" if p50 <= target else "OVER"
        print(f"{name:58} {p50:8.3f} {max(times):8.3f} {target:7.1f}s {ok}")


if __name__ == "__main__":
    main()

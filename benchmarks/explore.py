"""Explore pages: how long the entity graph, the timeline and the topic titles take on a whole conversation.

    .venv/bin/python benchmarks/explore.py [--store runs/classic/conv-47] [--no-browser]

Library rows time the calls the pages make (median of 5; chart specs as the pages send them, unvalidated;
the graph's layout is computed once per store and cached by the page, the chart spec on every rerun).
Browser rows start `streamlit run app.py` on 127.0.0.1 with the store copied into a temporary workspace
and drive Debian's chromium with Playwright: a new tab on the graph page until its nodes are drawn (a tab of
the same browser, which keeps its HTTP cache, and a fresh browser profile, which does not; and on Settings,
a page without charts, as the baseline), the sidebar link from the timeline to the graph,
a click on a node until its profile's heading, a new tab on the timeline until its marks are drawn (and, as the
framework's floor, a new tab on a one-heading Streamlit app), and the
timeline's labels in Labels mode (counted and checked for overlaps by their boxes in the browser). A second table
prints the sizes issue 30 quotes: the timeline's height and its person lanes' share with every topic lane and
folded, the labels placed, suspicious dates, and the graph's typed, co-mention and unconnected counts. A synthetic graph of 300 entities checks that the
layout scales. Target (issue 12): the graph of a 689-turn conversation interactive <= 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
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


def synthetic(n: int = 300):
    """A store-sized graph: two thirds of the entities in random trees of one to a few dozen, the rest alone."""
    import random

    from gravity_engine.anchors import AnchorSet, Entity, Relation

    rng = random.Random(7)
    types = ["person", "organization", "place", "product", "pet"]
    preds = ["knows", "works_at", "sister_of", "lives_in", "likes"]
    entities = []
    for i in range(n):
        root = i - i % 25  # groups of 25: a component each
        rels = ([Relation(predicate=rng.choice(preds), target=f"Entity {t}", target_id=f"e{t}")
                 for t in {rng.randrange(root, i)}] if i < 2 * n // 3 and i > root else [])
        entities.append(Entity(id=f"e{i}", name=f"Entity {i}", type=types[i % 5], mentions=1 + rng.randrange(30),
                               source_ids=[f"D{i % 20}:{i}"], relations=rels))
    return AnchorSet(conversation_id="synthetic", entities=entities)


def library_rows(store_path: str) -> list[tuple[str, list[float], str]]:
    from app_services import studio
    from gravity_engine.store import AnchorStore
    import json

    from gravity_engine.viz import graph as gviz
    from gravity_engine.viz import timeline as tviz
    from gravity_engine.viz import vega_spec
    from gravity_engine.viz import topics as topviz

    store = AnchorStore.load(store_path)
    sessions = studio.session_by_utterance(store)
    a = store.anchors
    n_turns = sum(len(s.utterances) for s in store.conversation.sessions) if store.conversation else 0
    tag = f"{Path(store_path).name}: {n_turns} turns, {len(a.entities)} entities"
    g, nodes, edges = gviz.explore_data(a, sessions)
    rows = [(f"graph: build + merge + layout, once per store ({tag})",
             timed(lambda: gviz.explore_data(a, sessions)), "cached"),
            (f"graph: filter + component data, every rerun ({len(nodes)} nodes, {len(edges)} edges)",
             timed(lambda: json.dumps(gviz.graph_view(*gviz.select_frames(nodes, edges, gviz.filter_graph(g).nodes,
                                                                          hide_unconnected=True)))), "")]
    syn = synthetic()
    sg, sn, se = gviz.explore_data(syn)
    rows += [(f"graph: build + merge + layout, synthetic {len(syn.entities)} entities / {len(se)} edges",
              timed(lambda: gviz.explore_data(syn)), "cached"),
             ("graph: component data, synthetic (every node shown)",
              timed(lambda: json.dumps(gviz.graph_view(sn, se))), "")]
    speakers = store.conversation.speakers if store.conversation else []
    events = tviz.events_frame(a, speakers)
    span = tviz.conversation_span(events)
    folded = len(a.topics) > tviz.COLLAPSE_TOPICS_ABOVE
    rows += [(f"timeline: events, links with evidence ({len(events)} events)",
              timed(lambda: (tviz.events_frame(a, speakers), tviz.supported_links(a, store.conversation))), "cached"),
             (f"timeline: lanes + chart spec with labels, every rerun (topic lanes {'folded' if folded else 'each'})",
              timed(lambda: vega_spec(tviz.timeline_chart(tviz.lanes_frame(events, span),
                                                          tviz.topic_lanes_frame(a, None, span, collapsed=folded),
                                                          domain=span, labels=True))), ""),
             (f"topics: titles ({len(a.topics)} topics, stored labels)", timed(lambda: topviz.topic_titles(a), 3),
              "cached")]
    from gravity_engine.comentions import co_mentions

    pairs = co_mentions(a, store.conversation)
    rows.append((f"graph: co-mentions ({len(pairs)} pairs cited together twice or more)",
                 timed(lambda: co_mentions(a, store.conversation), 3), "cached"))
    return rows


def layout_rows(store_path: str) -> list[tuple[str, str]]:
    """Sizes the issue quotes, from the library: the timeline's lanes and labels, the graph's edges and lists."""
    from gravity_engine.store import AnchorStore
    from gravity_engine.viz import graph as gviz
    from gravity_engine.viz import timeline as tviz
    from gravity_engine.viz import topics as topviz

    import pandas as pd

    store = AnchorStore.load(store_path)
    a, conv = store.anchors, store.conversation
    events = tviz.events_frame(a, conv.speakers if conv else [])
    span = tviz.conversation_span(events)
    marks = tviz.lanes_frame(events, span)
    out = [("timeline events (resolved)", f"{len(events)} ({int(events['resolved'].sum())})"),
           ("timeline person lanes", ", ".join(l for l in tviz.lane_order(marks)))]
    titles = topviz.topic_titles(a)
    for name, topic_marks in (("every topic lane", tviz.topic_lanes_frame(a, titles, span)),
                              ("topic lanes folded", tviz.topic_lanes_frame(a, titles, span, collapsed=True))):
        layout, height = tviz.lane_layout(tviz.lane_order(marks, topic_marks))
        people = sum(h for lane, (_, h) in layout.items() if not lane.startswith("Topic"))
        out.append((f"timeline height, {name}", f"{height:.0f} px, person lanes {people / height:.0%}"))
    layout, _ = tviz.lane_layout(tviz.lane_order(marks))
    gap = max((span[1] - span[0]) / 110, pd.Timedelta(days=1)) if span else pd.Timedelta(days=1)
    placed = tviz.place_labels(marks.assign(y=tviz._stack(marks, layout, gap)), span)
    top = marks.sort_values(["weight", "n", "date"], ascending=[False, False, True]).head(20)
    out.append(("timeline labels placed (of points; of the 20 most-cited)",
                f"{len(placed)} of {len(marks)}; {len(set(top['ids']) & set(placed['ids']))} of 20"))
    out.append(("timeline suspicious dates", str(int((events['suspicious'] != '').sum()))))
    g, nodes, edges = gviz.explore_data(a, co_mentions=True, conversation=conv)
    out.append(("graph: typed relations / co-mention edges / without an edge",
                f"{int((edges['kind'] == 'relation').sum())} / {int((edges['kind'] == 'co-mention').sum())} / "
                f"{len(gviz.unconnected(nodes))}"))
    return out


def browser_rows(store_path: str, repeat: int = 3) -> list[tuple[str, list[float], str]]:
    from playwright.sync_api import sync_playwright

    from gravity_engine.store import AnchorStore
    from gravity_engine.testing.app_server import AppServer, launch_chromium
    from gravity_engine.testing.page_checks import overlaps, timeline_labels

    home = Path(tempfile.mkdtemp(prefix="gravity_bench_"))
    name = Path(store_path).name
    shutil.copytree(store_path, home / "workspace" / name)
    biggest = max(AnchorStore.load(store_path).anchors.entities, key=lambda e: e.mentions).name
    nodes = "[data-testid=stBidiComponentIsolated] circle.eg-node"
    try:
        with AppServer(home) as server, sync_playwright() as p:
            url = server.url
            browser = launch_chromium(p)

            def settle(page) -> None:  # no script run in progress, then a moment for the charts
                page.wait_for_timeout(500)
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                                       timeout=120_000)
                page.wait_for_timeout(1000)

            # A user's new tab shares the browser's HTTP cache (Streamlit's scripts, the chart library); a
            # new browser context is a first visit from a fresh profile, which downloads them all again.
            tabs = browser.new_context(viewport={"width": 1440, "height": 1200})

            def open_graph(fresh_profile: bool = False) -> tuple[float, object]:
                page = (browser.new_page(viewport={"width": 1440, "height": 1200}) if fresh_profile
                        else tabs.new_page())
                t0 = time.perf_counter()
                page.goto(f"{url}/graph?store=workspace/{name}")
                page.locator(nodes).first.wait_for(timeout=120_000)
                return time.perf_counter() - t0, page

            warm = browser.new_page()
            warm.goto(url)  # a fresh server paints a blank first page
            warm.wait_for_timeout(3000)
            cold, page = open_graph()
            page.close()
            opens, fresh, switches, clicks = [], [], [], []
            for _ in range(repeat):
                dt, page = open_graph(fresh_profile=True)
                fresh.append(dt)
                page.close()
            for _ in range(repeat):
                dt, page = open_graph()
                opens.append(dt)
                settle(page)  # let the first run finish before clicking
                t0 = time.perf_counter()
                page.locator(nodes + f"[aria-label*='entity: {biggest};']").first.click()
                page.get_by_role("heading", name=biggest, exact=True).wait_for(timeout=60_000)
                clicks.append(time.perf_counter() - t0)
                # In the app: from another page to the graph by the sidebar, as a user moves around.
                settle(page)
                page.locator("[data-testid=stSidebar] a[href$='/timeline']").first.click()
                page.get_by_role("heading", name="Event timeline").wait_for(timeout=120_000)
                settle(page)
                t0 = time.perf_counter()
                page.locator("[data-testid=stSidebar] a[href*='/graph']").first.click()
                page.locator(nodes).first.wait_for(timeout=60_000)
                switches.append(time.perf_counter() - t0)
                page.close()
            timelines, label_rows = [], []
            for _ in range(repeat):  # a new tab on the timeline until its points (or density strips) are drawn
                page = tabs.new_page()
                t0 = time.perf_counter()
                page.goto(f"{url}/timeline?store=workspace/{name}")
                page.locator("[data-testid=stVegaLiteChart] g.role-mark path, "
                             "[data-testid=stVegaLiteChart] g.role-mark rect").first.wait_for(timeout=120_000)
                timelines.append(time.perf_counter() - t0)
                page.close()
            page = tabs.new_page()
            page.goto(f"{url}/timeline?store=workspace/{name}")
            page.get_by_role("heading", name="Event timeline").wait_for(timeout=120_000)
            settle(page)
            page.locator("[data-testid=stCheckbox]").filter(has_text="Labels").locator("label").click()
            settle(page)
            boxes = timeline_labels(page)
            label_rows.append(f"{len(boxes)} labels drawn, {len(overlaps(boxes))} overlapping pairs")
            page.close()
            baseline = []  # the same new tab on a page without charts: Streamlit's frontend and app.py alone
            for _ in range(repeat):
                page = tabs.new_page()
                t0 = time.perf_counter()
                page.goto(f"{url}/settings?store=workspace/{name}")
                page.get_by_role("heading", name="Settings").first.wait_for(timeout=120_000)
                baseline.append(time.perf_counter() - t0)
                page.close()
            browser.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return [(f"browser: open graph page -> nodes drawn, first visit ({name}: store load, layout)", [cold], ""),
            ("browser: new tab on the graph page -> nodes drawn (Streamlit's frontend boots, a new session)", opens,
             "<= 2 s"),
            ("browser: the same from a fresh browser profile (no HTTP cache: every script downloaded again)", fresh,
             ""),
            ("browser: new tab on the Settings page -> its heading (baseline, no chart)", baseline, ""),
            ("browser: sidebar link from the timeline -> graph nodes drawn", switches, "<= 2 s"),
            ("browser: new tab on the timeline -> its marks drawn", timelines, "<= 2 s"),
            (f"browser: timeline in Labels mode ({label_rows[0]})", [0.0], "bounding boxes"),
            (f"browser: click a node -> its profile heading ({biggest})", clicks, "<= 2 s")]


def floor_rows(repeat: int = 3) -> list[tuple[str, list[float], str]]:
    """The framework's own floor: a new tab on a one-heading Streamlit app, in the same browser, on this machine. What
    the app's pages take beyond it is theirs."""
    from playwright.sync_api import sync_playwright

    from gravity_engine.testing.app_server import AppServer, launch_chromium

    folder = Path(tempfile.mkdtemp(prefix="gravity_floor_"))
    (folder / "app.py").write_text('import streamlit as st\nst.set_page_config(layout="wide")\nst.title("Floor")\n')
    try:
        with AppServer(folder, script=folder / "app.py") as server, sync_playwright() as p:
            browser = launch_chromium(p)
            tabs = browser.new_context(viewport={"width": 1440, "height": 1200})
            warm = tabs.new_page()
            warm.goto(server.url)
            warm.get_by_role("heading", name="Floor").wait_for(timeout=60_000)
            warm.close()
            times = []
            for _ in range(repeat):
                page = tabs.new_page()
                t0 = time.perf_counter()
                page.goto(server.url)
                page.get_by_role("heading", name="Floor").wait_for(timeout=60_000)
                times.append(time.perf_counter() - t0)
                page.close()
            browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return [("browser: new tab on a one-heading Streamlit app -> its heading (the framework's floor here)", times, "")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "runs" / "classic" / "conv-47"),
                    help="a store built from one conversation (conv-47 has 689 turns)")
    ap.add_argument("--no-browser", action="store_true", help="library rows only")
    args = ap.parse_args()
    if not Path(args.store, "anchors.json").is_file():
        sys.exit(f"{args.store}: no anchors.json; build one first, e.g. python -m gravity_engine build "
                 "../shared/data/locomo10.json --conversation conv-47 --out runs/classic/conv-47")
    rows = library_rows(args.store)
    if not args.no_browser:
        rows += browser_rows(args.store) + floor_rows()
    print("| step | median s | min s | max s | n | note |\n|---|---|---|---|---|---|")
    for label, times, note in rows:
        print(f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} | {len(times)} "
              f"| {note} |")
    print(f"\n| {Path(args.store).name} | size |\n|---|---|")
    for label, value in layout_rows(args.store):
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()

"""Query-path benchmark: prints a table, asserts nothing.

Times the Gravity query path (query embedding, temporal detection, per-module retrieval and rerank,
temporal slots, line scoring and packing, expansion; host search and LLM excluded) per question, the
dense host's own search beside it (question embedding included), and the end-to-end query a user
waits for (host search + Gravity path + the expansion queries' searches, no LLM). ``path_shared_qvec``
is the same Gravity path given the question's embedding that a host on the same model computes for its
own search anyway (``run_question`` embeds the question once and hands the vector to both): what
Gravity adds to a dense host's query, the encoder paid once by the host. ``query_path`` embeds the
question itself (a host on another model, or Gravity alone):

1. on one LoCoMo conversation's classic anchors (``--store``, built into it when missing), over that
   conversation's questions;
2. on a synthetic store of ``--synthetic`` anchors (default 100,000: 30% entities, 50% events, 20%
   topics; random unit embeddings, since embedding 100k texts would time the encoder, not the
   query path), with a dense host searching as many random memory vectors.

Usage: python benchmarks/query.py [--store runs/conv-26] [--conversation conv-26] [--synthetic 100000]
                                  [--questions 150] [--threads 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.anchors import AnchorSet, Attribute, BuildInfo, Entity, Event, KeyFact, Relation, Topic  # noqa: E402
from gravity_engine.hosts.base import Memory  # noqa: E402
from gravity_engine.hosts.dense import DenseHost  # noqa: E402
from gravity_engine.query import GravityQuery  # noqa: E402
from gravity_engine.query.session import HostSession, run_question  # noqa: E402
from gravity_engine.store import AnchorStore  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
STEPS = ("embed", "temporal", "retrieve", "expand", "inject")


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def time_questions(gq: GravityQuery, host, questions: list[str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {s: [] for s in (*STEPS, "query_path", "path_no_embed", "path_shared_qvec",
                                                   "host_search", "end_to_end", "e2e_ratio")}
    session = HostSession(host, None, gq.embedder)
    for q in questions[:3]:  # warm caches and lazy imports
        gq.run(q)
        host.search(q, 10)
        run_question(gq, session, q)
    for q in questions:
        t0 = time.perf_counter()
        r = gq.run(q)
        out["query_path"].append((time.perf_counter() - t0) * 1000)
        for s in STEPS:
            out[s].append(r.timings_ms.get(s, 0.0))
        # The encoder's share swings most with machine load; the rest is the engine's own work.
        out["path_no_embed"].append(out["query_path"][-1] - r.timings_ms.get("embed", 0.0))
        qvec = gq.embedder.encode([q])[0]  # the host's share: a dense host on the same model embeds the question
        t0 = time.perf_counter()
        gq.run(q, qvec=qvec)
        out["path_shared_qvec"].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        host.search(q, 10)
        out["host_search"].append((time.perf_counter() - t0) * 1000)
        # What a user waits for: the host's search, Gravity's path and the expansion searches (ask's path:
        # the question embedded once, expansions searched with their stored vectors), no LLM.
        t0 = time.perf_counter()
        run_question(gq, session, q)
        out["end_to_end"].append((time.perf_counter() - t0) * 1000)
        out["e2e_ratio"].append(out["end_to_end"][-1] / out["host_search"][-1])
    return out


def print_table(title: str, timings: dict[str, list[float]], target: str) -> None:
    import os

    print(f"\n{title}  (target: {target}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"{'step':<14}{'p50 ms':>10}{'p95 ms':>10}")
    for name, values in timings.items():
        if name == "e2e_ratio":
            continue
        print(f"{name:<14}{pct(values, 50):>10.2f}{pct(values, 95):>10.2f}")
    ratio = pct(timings["end_to_end"], 50) / pct(timings["host_search"], 50)
    print(f"end to end p50 / host search p50 = {ratio:.2f}x (target <= 2x); per question p50 "
          f"{pct(timings['e2e_ratio'], 50):.2f}x")


def locomo_section(args, embedder) -> None:
    from gravity_engine.loaders import load_conversations

    store_dir = Path(args.store)
    if not (store_dir / "anchors.json").is_file():
        if not LOCOMO.is_file():
            print(f"skipped LoCoMo section: no store at {store_dir} and no {LOCOMO}")
            return
        from gravity_engine.build import build_store

        conv = load_conversations(LOCOMO, conversation=args.conversation)[0]
        print(f"building {conv.id} anchors (classic) into {store_dir} ...")
        build_store(conv, store_dir, backend="classic", embedder=embedder)
    store = AnchorStore.load(store_dir)
    questions = [q.question for q in store.conversation.questions][: args.questions]
    t0 = time.perf_counter()
    gq = GravityQuery(store, embedder)
    setup = (time.perf_counter() - t0) * 1000
    host = DenseHost(embedder=embedder)
    host.ingest(store.conversation)
    counts = store.anchors.counts()
    print(f"\n{store.conversation.id}: {sum(counts.values())} anchors {counts}, {len(host.memories)} host memories, "
          f"{len(questions)} questions; index built once in {setup:.0f} ms")
    print_table(f"LoCoMo {store.conversation.id}", time_questions(gq, host, questions), "query_path p50 <= 25 ms, p95 <= 50 ms; "
                "path_shared_qvec: the same path on the host's question vector")


_WORDS = ("project garden music painting camping adoption counseling school race museum guitar pottery travel "
          "book library coffee soccer hiking cooking photography volunteering concert workshop festival beach "
          "marathon startup research conference lecture family birthday wedding shelter puppy kitten").split()
_FIRST = ("Anna Ben Cara Dan Eve Finn Gina Hugo Ivy Jack Kira Leo Mia Nate Olga Paul Quinn Rosa Sam Tara Uma "
          "Vic Wes Xena Yuri Zoe").split()


def synthetic_store(n: int, dim: int, seed: int = 0) -> AnchorStore:
    rng = random.Random(seed)
    n_ent, n_evt = int(n * 0.3), int(n * 0.5)
    n_top = n - n_ent - n_evt
    names = [f"{rng.choice(_FIRST)} {rng.choice(_WORDS).title()}{i}" for i in range(n_ent)]
    entities = [Entity(id=f"e{i}", name=names[i], type="person",
                       attributes=[Attribute(key="likes", value=rng.choice(_WORDS))],
                       relations=[Relation(predicate="knows", target=rng.choice(names))]) for i in range(n_ent)]
    day0 = date(2020, 1, 1)
    events = []
    for i in range(n_evt):
        d = day0 + timedelta(days=rng.randrange(1500))
        events.append(Event(id=f"v{i}", what=f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.choice(_WORDS)}",
                            participants=[rng.choice(_FIRST)], when_text="last week", date_start=d.isoformat(),
                            date_end=(d + timedelta(days=rng.choice((0, 0, 6)))).isoformat(), granularity="day"))
    topics = [Topic(id=f"t{i}", label=f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}",
                    keywords=rng.sample(_WORDS, 4), participants=[rng.choice(_FIRST)],
                    key_facts=[KeyFact(text=f"{rng.choice(_FIRST)} likes {rng.choice(_WORDS)}")]) for i in range(n_top)]
    anchors = AnchorSet(conversation_id="synthetic", built_with=BuildInfo(embedding_model="all-MiniLM-L6-v2", embedding_dim=dim),
                        entities=entities, events=events, topics=topics)
    gen = np.random.default_rng(seed)

    def unit(k: int) -> np.ndarray:
        m = gen.standard_normal((k, dim)).astype(np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    from gravity_engine.lines import LineTable

    keys = LineTable.build(anchors).keys()  # every anchor line, with random stored embeddings like the anchors'
    return AnchorStore(anchors=anchors, embeddings={"entities": unit(n_ent), "events": unit(n_evt), "topics": unit(n_top),
                                                    "lines": unit(len(keys)), "lines_keys": np.array(keys, dtype=str)})


def synthetic_section(args, embedder) -> None:
    t0 = time.perf_counter()
    store = synthetic_store(args.synthetic, embedder.dim)
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    gq = GravityQuery(store, embedder)
    indexed = time.perf_counter() - t0
    rng = random.Random(1)
    questions = [f"When did {rng.choice(_FIRST)} go to the {rng.choice(_WORDS)} {rng.choice(['recently', 'last year', 'in May 2022', ''])}?"
                 for _ in range(args.questions // 3)]
    questions += [f"What does {rng.choice(_FIRST)} think about {rng.choice(_WORDS)} and {rng.choice(_WORDS)}?"
                  for _ in range(args.questions // 3)]
    questions += [f"Who did {rng.choice(_FIRST)} meet at the {rng.choice(_WORDS)} festival?" for _ in range(args.questions // 3)]
    host = DenseHost(embedder=embedder)
    host.memories = [Memory(text=f"m{i}", utterance_ids=[f"u{i}"]) for i in range(args.synthetic)]
    host.matrix = np.random.default_rng(2).standard_normal((args.synthetic, embedder.dim)).astype(np.float32)
    print(f"\nsynthetic: {args.synthetic:,} anchors {store.anchors.counts()}; made in {made:.1f} s, "
          f"index built once in {indexed:.1f} s; host: {args.synthetic:,} random memory vectors")
    print_table(f"synthetic {args.synthetic:,} anchors", time_questions(gq, host, questions), "query_path p50 <= 60 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=str(ROOT / "runs" / "classic" / "conv-26"))
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for the query embedding (one short text gains nothing from more, "
                             "and on a busy 2-core machine two threads contend badly)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from gravity_engine.embed import get_embedder

    embedder = get_embedder()
    locomo_section(args, embedder)
    if args.synthetic:
        synthetic_section(args, embedder)


if __name__ == "__main__":
    main()

"""Host benchmark: each memory system alone on one LoCoMo conversation. Prints a table, asserts nothing.

Per host: ingest time, search p50/p95 (ms, k=10, the host's own search), LLM calls made during ingest,
and evidence recall@10 over categories 1-4: micro = found gold evidence ids / all gold evidence ids,
macro = mean per-question share. Beside it, the figures of the probe in ../shared/HOSTS.md.

Hosts whose ingestion needs an LLM (a-mem's evolution step, graphiti's add_episode, mem0's fact
extraction) talk to the scripted server on 127.0.0.1 (gravity_engine.testing.host_llm_routes): their
extraction is heuristic, so those rows test the pipeline, not the library's real extraction quality.

Usage: python benchmarks/hosts.py [--conversation conv-26] [--hosts dense,bm25,mem0,graphiti,amem,mcp]
       (also: graphiti-cosine, graphiti-bm25, graphiti-episodes, mem0-extract)

With Gravity beside each host (recall with expansion, coverage, query-path time vs search time), run
``python -m gravity_engine measure locomo ../shared/data/locomo10.json --host dense,bm25,mem0,graphiti``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRAVITY_HOME", tempfile.mkdtemp(prefix="gravity-hosts-bench-"))

from gravity_engine.embed import get_embedder  # noqa: E402
from gravity_engine.llm.config import LLMConfig  # noqa: E402
from gravity_engine.loaders import load_conversation  # noqa: E402
from gravity_engine.testing.host_llm_routes import calls_by_route, host_router  # noqa: E402
from gravity_engine.testing.openai_server import ScriptedOpenAIServer  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
PROBE = {  # ../shared/HOSTS.md, conv-26, k=10: micro / macro
    "dense": (0.453, 0.509), "mem0": (0.453, 0.509), "graphiti": (0.522, 0.591), "graphiti-cosine": (0.453, 0.509),
    "graphiti-bm25": (0.404, 0.456), "graphiti-episodes": (0.424, 0.475), "amem": (0.468, 0.528),
}
SCRIPTED = {"amem", "graphiti-episodes", "mem0-extract"}


def make_host(name: str, embedder, llm: LLMConfig):
    if name == "dense":
        from gravity_engine.hosts.dense import DenseHost
        return DenseHost(embedder=embedder, use_cache=False)
    if name == "bm25":
        from gravity_engine.hosts.bm25 import BM25Host
        return BM25Host()
    if name in ("mem0", "mem0-extract"):
        from gravity_engine.hosts.mem0 import Mem0Host
        return Mem0Host(embedder=embedder, infer=name == "mem0-extract", llm=llm)
    if name.startswith("graphiti"):
        from gravity_engine.hosts.graphiti import GraphitiHost
        methods = {"graphiti-cosine": ("cosine_similarity",), "graphiti-bm25": ("bm25",)}.get(
            name, ("bm25", "cosine_similarity"))
        return GraphitiHost(embedder=embedder, mode="episodes" if name == "graphiti-episodes" else "direct", llm=llm,
                            search_methods=methods)
    if name == "amem":
        from gravity_engine.hosts.amem import AMemHost
        return AMemHost(embedder=embedder, llm=llm)
    if name == "mcp":
        from gravity_engine.hosts.mcp import McpHost
        return McpHost(command=[sys.executable, "-m", "gravity_engine.testing.mcp_memory_server"], cwd=str(ROOT),
                       env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRAVITY_HOME": os.environ["GRAVITY_HOME"]},
                       timeout=300)
    raise SystemExit(f"unknown host {name!r}")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def run(name: str, conversation, questions, embedder, server: ScriptedOpenAIServer) -> list:
    llm = LLMConfig(base_url=server.base_url, api_key="sk-local", model="scripted", timeout=60, max_retries=0)
    n_before = len(server.chat_requests())
    host = make_host(name, embedder, llm)
    t0 = time.perf_counter()
    host.ingest(conversation)
    ingest_s = time.perf_counter() - t0
    calls = len(server.chat_requests()) - n_before
    host.search("warm up", 10)
    times, found, total, shares = [], 0, 0, []
    for q in questions:
        t0 = time.perf_counter()
        memories = host.search(q.question, 10)
        times.append((time.perf_counter() - t0) * 1000)
        got = {u for m in memories for u in m.utterance_ids}
        hit = sum(1 for e in q.evidence if e in got)
        found, total = found + hit, total + len(q.evidence)
        shares.append(hit / len(q.evidence))
    close = getattr(host, "close", None)
    if callable(close):
        close()
    probe = PROBE.get(name)
    return [name + (" *" if name in SCRIPTED else ""), f"{ingest_s:.1f}", calls, f"{pct(times, .5):.1f}",
            f"{pct(times, .95):.1f}", f"{found / total:.3f}", f"{statistics.mean(shares):.3f}",
            f"{probe[0]:.3f} / {probe[1]:.3f}" if probe else "-"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--hosts", default="dense,bm25,mem0,graphiti,amem,mcp")
    args = parser.parse_args()
    if not LOCOMO.is_file():
        raise SystemExit(f"{LOCOMO} not found")
    from gravity_engine.llm.guard import allow_local_model_requests

    conversation = load_conversation(LOCOMO, conversation=args.conversation)
    questions = [q for q in conversation.questions if q.category in ("1", "2", "3", "4") and q.evidence]
    embedder = get_embedder()
    embedder.encode(["warm up"])
    headers = ["host", "ingest s", "LLM calls", "p50 ms", "p95 ms", "recall@10 micro", "macro", "probe micro / macro"]
    rows = []
    with allow_local_model_requests(), ScriptedOpenAIServer(router=host_router) as server:
        for name in [h.strip() for h in args.hosts.split(",") if h.strip()]:
            rows.append(run(name, conversation, questions, embedder, server))
            print("  ".join(str(c) for c in rows[-1]), flush=True)
        routes = calls_by_route(server.chat_requests())
    print(f"\n{args.conversation}: {conversation.n_utterances()} turns, {len(questions)} questions (categories 1-4), k=10")
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    for r in [headers] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print("* ingestion through the scripted LLM on 127.0.0.1 (heuristic answers): these rows test the pipeline, "
          "not the library's real extraction quality")
    if routes:
        print("scripted calls by route:", dict(routes))


if __name__ == "__main__":
    main()

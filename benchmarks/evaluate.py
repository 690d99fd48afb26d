"""Benchmark of the evaluation runner: its own overhead and its throughput with an endpoint that answers instantly.

    .venv/bin/python benchmarks/evaluate.py [--questions 40] [--variants baseline,full] [--concurrency 4]

The scripted OpenAI-compatible server runs in a child process on 127.0.0.1 (as a real endpoint would
run elsewhere) and answers every request at once. The run uses LoCoMo conv-26 with the dense host
(classic anchors built once under --stores) or, without ../shared/data, the sample conversation.

Where the wall time goes, from a strictly sequential run (--concurrency 1 internally, so the parts
add up):

* endpoint: time inside HTTP requests to the server, as the client sees it ("waiting on the endpoint");
* query path: host search + Gravity's anchors + the answer prompt (the method itself, timed on its
  own by benchmarks/query.py);
* setup: reading the dataset and the results file, loading the anchor store (once per run and
  conversation, not per row);
* runner overhead: everything else: scheduling, the client's bookkeeping around each request
  (cache key, JSON parsing and validation of the verdict), token F1, writing rows.

Then the same slice with the configured concurrency gives the throughput (rows/s and questions/s).
One-time costs (imports, tokenizer, the host's embeddings) are paid in a warm-up run first.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
SAMPLE = ROOT / "sample_data" / "medllm_project.jsonl"
_JUDGE = re.compile(r"<gold_answer>\n(.*?)\n</gold_answer>\n<generated_answer>\n(.*)\n</generated_answer>", re.S)


def instant_router(request: dict):
    """Answers 'I don't know' at once; the judge compares with the gold text at once."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema" or "JSON schema (name: judge" in str(request.get("messages")):
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        m = _JUDGE.search(user)
        ok = bool(m) and m.group(1).strip() == m.group(2).strip()
        return {"reasoning": "instant", "label": "CORRECT" if ok else "WRONG"}
    return "I don't know"


def _serve(queue, stop) -> None:
    from gravity_engine.testing.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(router=instant_router) as srv:
        queue.put(srv.base_url)
        stop.wait()


class EndpointTimer:
    """Wraps a client's ``_send`` (one HTTP request) to add up the time spent waiting on the endpoint."""

    def __init__(self, *clients):
        self.seconds = 0.0
        self.requests = 0
        self._lock = threading.Lock()
        for client in clients:
            send = client._send

            def timed(request, _send=send):
                t0 = time.perf_counter()
                try:
                    return _send(request)
                finally:
                    with self._lock:
                        self.seconds += time.perf_counter() - t0
                        self.requests += 1

            client._send = timed

    def reset(self) -> None:
        with self._lock:
            self.seconds, self.requests = 0.0, 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--variants", default="baseline,full")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "gravity_bench_stores")
    ap.add_argument("--fake-embedder", action="store_true",
                    help="Anchors and host on the hashing FakeEmbedder: isolates the runner from the embedding model's cost")
    args = ap.parse_args()
    embedder = None
    if args.fake_embedder:
        from gravity_engine.testing import FakeEmbedder

        embedder = FakeEmbedder()
        args.stores = args.stores / "fake-embedder"

    from gravity_engine.build import ensure_stores
    from gravity_engine.eval.evaluate import EvalSettings, plan_evaluation, run_evaluation
    from gravity_engine.llm import LLMConfig, OpenAIClient

    if LOCOMO.is_file():
        dataset, path, conversation = "locomo", LOCOMO, "conv-26"
    else:
        dataset, path, conversation = "custom", SAMPLE, None
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]

    ctx = mp.get_context("spawn")
    queue, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(queue, stop), daemon=True)
    proc.start()
    base_url = queue.get(timeout=60)
    work = Path(tempfile.mkdtemp(prefix="gravity_bench_eval_"))
    try:
        config = LLMConfig(base_url=base_url, api_key="bench", model="gravity-echo", cache=False, max_retries=0)
        answer, judge = OpenAIClient(config), OpenAIClient(config)
        timer = EndpointTimer(answer, judge)

        def settings(out: str, limit: int, concurrency: int) -> EvalSettings:
            return EvalSettings(dataset=dataset, path=path, conversation=conversation, out=work / out,
                                stores=args.stores, variants=variants, limit=limit, concurrency=concurrency)

        t0 = time.perf_counter()
        built = ensure_stores(plan_evaluation(settings("warmup", 2, 1)).conversations_to_build(), args.stores,
                              embedder, status=print)
        run_evaluation(settings("warmup", 2, 1), answer, judge, echo=print, embedder=embedder)
        print(f"warm-up (imports, tokenizer, host embeddings{', anchor build' if built else ''}): "
              f"{time.perf_counter() - t0:.1f} s")

        timer.reset()
        seq = run_evaluation(settings("sequential", args.questions, 1), answer, judge, embedder=embedder)
        endpoint_s, requests = timer.seconds, timer.requests
        setup_s = seq.plan_s + seq.load_s
        overhead_s = seq.wall_s - endpoint_s - seq.query_s - setup_s
        rows = seq.rows_written

        timer.reset()
        par = run_evaluation(settings("concurrent", args.questions, args.concurrency), answer, judge,
                             embedder=embedder)
        n_questions = len(par.plan.items)

        def share(x: float) -> str:
            return f"{100 * x / seq.wall_s:5.1f}%"

        print(f"\nEvaluation runner on {dataset} {conversation or path.name}, host dense, variants "
              f"{', '.join(variants)}, embedder {'FakeEmbedder' if embedder else 'all-MiniLM-L6-v2'}: {n_questions} questions, {rows} rows, {requests} HTTP requests; "
              f"scripted server in a child process answering instantly\n")
        print(f"{'sequential run (parts add up)':<42}{'seconds':>9}{'share':>8}{'per row':>10}")
        print("-" * 69)
        for name, sec in (("wall time", seq.wall_s), ("endpoint (HTTP round trips)", endpoint_s),
                          ("query path (host + Gravity + prompt)", seq.query_s),
                          ("setup (read dataset, plan, load anchors)", setup_s),
                          ("runner overhead (everything else)", overhead_s)):
            print(f"{name:<42}{sec:>9.3f}{share(sec):>8}{1000 * sec / max(1, rows):>8.1f}ms")
        print(f"\n{'concurrent run':<42}{'value':>9}")
        print("-" * 51)
        print(f"{'concurrency':<42}{args.concurrency:>9}")
        print(f"{'wall time (s)':<42}{par.wall_s:>9.2f}")
        print(f"{'rows (question x variant) per second':<42}{par.rows_written / par.wall_s:>9.1f}")
        print(f"{'questions per second (all variants done)':<42}{n_questions / par.wall_s:>9.1f}")
        print(f"\ntargets: runner overhead <= 5% of wall time -> {100 * overhead_s / seq.wall_s:.1f}%; "
              f">= 20 questions/s -> {par.rows_written / par.wall_s:.1f} rows/s, {n_questions / par.wall_s:.1f} questions/s")
    finally:
        stop.set()
        proc.join(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

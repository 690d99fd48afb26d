"""Corpus-scale benchmark: prints tables, asserts nothing.

1. Classic builds of the first N LongMemEval oracle instances (default 20) with ``build-all
   --workers 1``, ``--workers 2`` and ``--ray local``: each run is a fresh CLI process into a fresh
   folder, so imports, model loading and Ray's start are counted as a user pays them. Wall time,
   speedup against one worker, the span from the first build's start to the last one's end (the
   same without imports and start-up) and its speedup, the sum of the per-conversation build times,
   and each worker process's peak resident memory. A second table splits each run's wall time into
   phases (``RunSummary.phases``): start-up (of which reading the corpus, and the workers' models
   loaded), all workers busy, tail, exit, the workers' idle core-seconds, and the builds' CPU seconds
   and CPU/wall ratio, which do not depend on the machine's load the way wall times do.
2. A LoCoMo conversation built with the llm backend through the batch API against the scripted
   server on 127.0.0.1 (``gravity_engine.testing.batch_routes``): online calls during the batch build
   (target 0), batches submitted, and whether its anchors equal those of an online build with an
   empty cache.

The data is read from ../shared/data at run time. Timings mean something only on a quiet machine.

3. With ``--thread-cpu N``: N builds in this process with each thread's CPU time, which tells how many
   cores one build already uses (its utterance embeddings run on a background thread) and so the most
   two workers can gain over one on two cores; CPU times hold under load, so this runs on a busy machine.

Usage: python benchmarks/scale.py [--instances 20] [--runs workers1,workers2,ray] [--conversation conv-26]
                                  [--skip-batch] [--skip-classic] [--thread-cpu N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.scale import JobResult, RunSummary  # noqa: E402

JOB_FIELDS = ("conversation_id", "status", "counts", "seconds", "peak_rss_mb", "worker", "torch_threads", "started_at",
              "finished_at", "cpu_s", "ready_at")
SHARED = ROOT.parent / "shared" / "data"
LONGMEMEVAL = SHARED / "longmemeval" / "longmemeval_oracle.json"
LOCOMO = SHARED / "locomo10.json"
RUNS = {"workers1": ["--workers", "1"], "workers2": ["--workers", "2"], "ray": ["--ray", "local", "--workers", "2"]}


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[f"{c:.2f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def classic_runs(instances: int, runs: list[str], work: Path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", GRAVITY_HOME=str(work / "home"))
    rows, phase_rows, walls, spans = [], [], {}, {}
    for name in runs:
        out = work / name
        cmd = [sys.executable, "-m", "gravity_engine", "build-all", str(LONGMEMEVAL), "--limit", str(instances),
               "--out", str(out), *RUNS[name]]
        started, launched = time.perf_counter(), time.time()
        done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall, exited = time.perf_counter() - started, time.time()
        if done.returncode != 0:
            print(f"{name}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        summary = json.loads((out / "build-summary.json").read_text())
        convs = summary["conversations"]
        # The library's phases from the saved rows, measured from this process's launch and exit.
        run = RunSummary(rows=[JobResult(**{k: c[k] for k in JOB_FIELDS}) for c in convs], wall_s=summary["wall_s"],
                         started_at=summary["started_at"])
        walls[name] = wall
        peaks = sorted(summary["peak_rss_mb_by_worker"].values())
        p = run.phases(launched, exited)
        spans[name] = p["span"]
        rows.append([" ".join(RUNS[name]), len(convs), sum(c["status"] == "built" for c in convs), wall,
                     walls["workers1"] / wall if "workers1" in walls else "-", p["span"],
                     spans["workers1"] / p["span"] if "workers1" in spans else "-", p["busy"],
                     ", ".join(f"{x:.0f}" for x in peaks), sorted({c["torch_threads"] for c in convs})])
        phase_rows.append([" ".join(RUNS[name]), p["start-up"], p["read"], p["ready"], p["builds"], p["tail"],
                           p["exit"], p["idle"], p["build_cpu"], p["build_cpu"] / p["busy"] if p["busy"] else "-"])
    print(f"\nClassic builds of {instances} LongMemEval oracle instances (fresh CLI process each; wall includes "
          "imports, model loads and Ray's start)\n")
    print(table(["runner", "conversations", "built", "wall s", "speedup", "builds span s", "span speedup",
                 "sum of builds s", "peak RSS per worker MB", "torch threads"], rows))
    print("\nWhere the wall time went (s): start-up = launch to the first build; read = launch to the corpus read "
          "(CLI imports, parsing the dataset); ready = launch to the last worker's models loaded; builds = every "
          "worker busy; tail = until the last build ends; exit = until the process is gone; idle = workers' "
          "core-seconds without a build inside the span; build CPU = CPU seconds of the builds (all threads; "
          "what the machine's load does not change); CPU/wall = their parallelism\n")
    print(table(["runner", "start-up", "read", "ready", "builds", "tail", "exit", "idle core-s", "build CPU s",
                 "build CPU/wall"], phase_rows))
    if "ray" in walls and "workers2" in walls:
        print(f"\n--ray local / --workers 2: wall {walls['ray'] / walls['workers2']:.2f}, "
              f"builds span {spans['ray'] / spans['workers2']:.2f} (target <= 1.15)")
    if "workers1" in walls and "workers2" in walls:
        print(f"--workers 2 speedup: wall {walls['workers1'] / walls['workers2']:.2f}x, "
              f"builds span {spans['workers1'] / spans['workers2']:.2f}x (target >= 1.7x)")


def _thread_cpu() -> dict[int, float]:
    """CPU seconds of each live thread of this process (Linux: /proc/self/task/<tid>/stat, utime + stime)."""
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def thread_cpu_run(instances: int, work: Path) -> None:
    """A build's own parallelism, from CPU time alone: the main thread's CPU, its background threads' CPU
    (utterance embeddings during extraction) and the main thread's CPU while they ran. On an idle second
    core the background work hides behind the main thread, so a quiet build takes about main + what of the
    background outlasts it; (main + background) / that is the cores one build uses, and 2 / it caps what
    two workers can gain over one on two cores. Load changes these CPU figures little, unlike wall times."""
    import threading

    from gravity_engine.build import build_store
    from gravity_engine.embed import get_embedder
    from gravity_engine.extract.classic.nlp import get_nlp
    from gravity_engine.scale import load_corpus
    from gravity_engine.threads import configure

    configure(torch_threads=1)  # as build-all runs one process (and each of two workers on two cores)
    convs = load_corpus(LONGMEMEVAL, limit=instances).conversations
    get_embedder().encode(["warm-up"])
    get_nlp()("Warm-up.")
    main_tid, rows, totals = threading.get_native_id(), [], [0.0, 0.0, 0.0]
    for conv in convs:
        samples: list[dict[int, float]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                samples.append(_thread_cpu())
                time.sleep(0.02)

        before = _thread_cpu()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        build_store(conv, work / "threads" / conv.id)
        stop.set()
        sampler.join()
        samples.append(_thread_cpu())
        background = {t for s in samples for t in s} - set(before) - {sampler.native_id}
        last = {}
        for s in samples:
            last.update(s)
        main = last[main_tid] - before[main_tid]
        bg = sum(last[t] for t in background)
        alive = [i for i, s in enumerate(samples) if background & set(s)]
        main_during = samples[alive[-1]][main_tid] - samples[alive[0]][main_tid] if alive else 0.0
        quiet = main + max(0.0, bg - main_during)
        rows.append([conv.id, conv.n_utterances(), main, bg, main_during, quiet, (main + bg) / quiet])
        for i, v in enumerate((main, bg, quiet)):
            totals[i] += v
    print(f"\nOne build's own parallelism ({instances} LongMemEval oracle instances in this process, one torch thread; "
          "CPU seconds per thread)\n")
    cores = (totals[0] + totals[1]) / totals[2]
    rows.append(["all", sum(r[1] for r in rows), totals[0], totals[1], "", totals[2], cores])
    print(table(["conversation", "turns", "main thread CPU s", "background CPU s", "main CPU while background ran",
                 "quiet wall estimate s", "cores used"], rows))
    print(f"\n--workers 1 builds use ~{cores:.2f} cores, so --workers 2 on 2 cores can be at most "
          f"{2 / cores:.2f}x faster between the first build's start and the last one's end (start-up aside)")


def batch_api_run(conversation: str, work: Path) -> None:
    os.environ["GRAVITY_HOME"] = str(work / "batch-home")
    from gravity_engine.build import build_store
    from gravity_engine.llm import LLMConfig
    from gravity_engine.llm.guard import allow_local_model_requests
    from gravity_engine.loaders import load_conversations
    from gravity_engine.scale import BuildOptions, build_corpus
    from gravity_engine.store import AnchorStore
    from gravity_engine.testing.batch_routes import BatchRoutes
    from gravity_engine.testing.openai_server import ScriptedOpenAIServer, echo_extraction_router

    def anchors(path: Path) -> dict:
        a = AnchorStore.load(path).anchors
        return {m: [x.model_dump(exclude={"checks"}) for x in getattr(a, m)] for m in ("entities", "events", "topics")}

    conv = load_conversations(LOCOMO, conversation=conversation)[0]
    with allow_local_model_requests(), ScriptedOpenAIServer(router=echo_extraction_router) as srv:
        routes = BatchRoutes(srv)
        config = LLMConfig(base_url=srv.base_url, api_key="sk-bench-not-a-key", model="gravity-echo", timeout=30,
                           cache_dir=work / "batch-cache")
        t0 = time.perf_counter()
        summary = build_corpus([conv], work / "batch", BuildOptions(backend="llm", llm_config=config),
                               batch_api=True, poll_s=0.0)
        batch_s = time.perf_counter() - t0
        online_during_batch = len(srv.chat_requests())
        rebuilt = build_store(conv, work / "rebuild", backend="llm", llm_config=config)
        t0 = time.perf_counter()
        build_store(conv, work / "online", backend="llm",
                    llm_config=config.model_copy(update={"cache_dir": work / "online-cache"}))
        online_s = time.perf_counter() - t0
        online_calls = len(srv.chat_requests()) - online_during_batch
        same = anchors(work / "batch" / conv.id) == anchors(work / "online")
    b = summary.batch_api
    row = summary.rows[0]
    print(f"\nllm backend through the batch API, LoCoMo {conversation} ({conv.n_utterances()} utterances), scripted "
          "server on 127.0.0.1 (echo router: measures the plumbing, not a model)\n")
    print(table(["requests", "batches submitted", "uploads", "answers cached", "online calls (batch build)",
                 "online calls (rebuild, same cache)", "online calls (online build)", "same anchors as online",
                 "anchors", "batch build s", "online build s"],
                [[b["planned"], len(routes.created()), len(routes.uploads()), b["stored"], online_during_batch,
                  rebuilt.report["llm"]["total"]["calls"], online_calls, "yes" if same else "NO",
                  row.anchors, batch_s, online_s]]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=20, help="LongMemEval oracle instances to build")
    parser.add_argument("--runs", default="workers1,workers2,ray", help="comma-separated: workers1, workers2, ray")
    parser.add_argument("--conversation", default="conv-26", help="LoCoMo conversation of the batch-API run")
    parser.add_argument("--skip-batch", action="store_true", help="leave out the batch-API run")
    parser.add_argument("--skip-classic", action="store_true", help="leave out the classic runs")
    parser.add_argument("--keep", type=Path, default=None, help="write the stores here instead of a temp folder")
    parser.add_argument("--thread-cpu", type=int, default=0, metavar="N",
                        help="also build the first N instances in this process and print each build's own "
                             "parallelism from per-thread CPU time (what caps --workers 2; meaningful under load)")
    args = parser.parse_args()
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = sorted(set(runs) - set(RUNS))
    if unknown:
        parser.error(f"unknown runs {unknown}; choose from {', '.join(RUNS)}")
    for path in (LONGMEMEVAL, LOCOMO):
        if not path.is_file():
            parser.error(f"{path} not found (the benchmark data lives in ../shared/data)")
    with tempfile.TemporaryDirectory(prefix="gravity-scale-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if not args.skip_classic:
            classic_runs(args.instances, runs, work)
        if args.thread_cpu:
            thread_cpu_run(args.thread_cpu, work)
        if not args.skip_batch:
            batch_api_run(args.conversation, work)


if __name__ == "__main__":
    main()

"""Torch thread count vs MiniLM embedding time: why ``gravity_engine.threads`` defaults to one thread.

    .venv/bin/python benchmarks/threads.py [--threads 1,2] [--questions 150] [--rounds 2]

Each thread count is set once per child process (as ``threads.configure`` does at start), then the
default embedder encodes questions one at a time (the query path) and all of them in one batch (a
build). Rounds alternate the counts so that a change in the machine's load hits both. The load
average is printed: on a shared machine the numbers move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CHILD = """
import json, statistics, sys, time
from gravity_engine.threads import configure
configure(torch_threads=int(sys.argv[1]), blas_threads=1)
from gravity_engine.embed import get_embedder
e = get_embedder()
qs = [f"When did Caroline go to the support group meeting number {i}?" for i in range(int(sys.argv[2]))]
e.encode(qs[:5])
ts = []
for q in qs:
    t = time.perf_counter(); e.encode([q]); ts.append((time.perf_counter() - t) * 1000)
ts.sort()
t = time.perf_counter(); e.encode(qs); batch = (time.perf_counter() - t) * 1000
print(json.dumps({"p50": statistics.median(ts), "p95": ts[int(0.95 * (len(ts) - 1))], "batch": batch}))
"""


def run(n_threads: int, questions: int) -> dict:
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("GRAVITY_TORCH_THREADS", None)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(n_threads), str(questions)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    counts = [int(c) for c in args.threads.split(",")]
    results: dict[int, list[dict]] = {c: [] for c in counts}
    loads = []
    for _ in range(args.rounds):
        for c in counts:
            loads.append(os.getloadavg()[0])
            results[c].append(run(c, args.questions))
    print(f"cores available: {len(os.sched_getaffinity(0))}; load average during the runs: "
          f"{min(loads):.1f}-{max(loads):.1f}; {args.questions} questions, {args.rounds} round(s)\n")
    print("| torch threads | one question p50 (ms) | one question p95 (ms) | all questions in one batch (s) |")
    print("|---|---|---|---|")
    for c in counts:
        rs = results[c]
        print(f"| {c} | {statistics.median(r['p50'] for r in rs):.1f} | {statistics.median(r['p95'] for r in rs):.1f} "
              f"| {statistics.median(r['batch'] for r in rs) / 1000:.2f} |")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - started:.0f} s)")

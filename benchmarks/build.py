"""Build-phase benchmark: prints tables, asserts nothing.

1. classic build per LoCoMo conversation: wall and CPU time (embeddings, the dense host's utterance
   embeddings and verification included, models warm), the texts and tokens given to the encoder (the
   load-independent part of the cost), the build's phases, anchor counts, share of fields verified,
   share of cited source ids that exist;
2. llm backend (fused and separate) against the scripted OpenAI-compatible server on 127.0.0.1:
   calls and prompt tokens per 1,000 utterances, prompt tokens / transcript tokens, and the calls a
   rebuild with an unchanged cache makes;
3. extraction quality against LoCoMo's own annotations: event recall vs ``event_summary`` (an
   annotated event is found when an extracted event of the same session has cosine >= threshold)
   and provenance coverage vs ``observation`` (annotated facts whose cited utterance some anchor cites).

Usage: python benchmarks/build.py [--conversations conv-26,conv-30] [--skip-llm] [--threshold 0.6]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.build import build_store  # noqa: E402
from gravity_engine.embed import get_embedder  # noqa: E402
from gravity_engine.loaders import load_conversations  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
_DIA = re.compile(r"^D\d+:\d+$")


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def annotated_events(sample: dict) -> dict[str, list[str]]:
    """session id -> annotated event strings (LoCoMo's event_summary)."""
    out: dict[str, list[str]] = {}
    for key, value in sample.get("event_summary", {}).items():
        n = key.rsplit("_", 1)[-1]
        events = [e for speaker, evs in value.items() if speaker != "date" and isinstance(evs, list) for e in evs]
        out[f"session_{n}"] = events
    return out


def annotated_fact_ids(sample: dict) -> list[list[str]]:
    facts = []
    for obs in sample.get("observation", {}).values():
        for items in obs.values():
            for item in items:
                if isinstance(item, list) and len(item) == 2:
                    ids = item[1] if isinstance(item[1], list) else re.split(r"[;,\s]+", str(item[1]))
                    ids = [i for i in ids if _DIA.match(i)]
                    if ids:
                        facts.append(ids)
    return facts


def event_recall(store, sample: dict, embedder, threshold: float) -> tuple[float, int]:
    gold = annotated_events(sample)
    by_session: dict[str, list[int]] = {}
    for i, ev in enumerate(store.anchors.events):
        by_session.setdefault(ev.session_id, []).append(i)
    ev_texts = [f"{', '.join(e.participants)} {e.what}" for e in store.anchors.events]
    ev_vecs = embedder.encode(ev_texts)
    found = total = 0
    for session_id, texts in gold.items():
        if not texts:
            continue
        total += len(texts)
        idx = by_session.get(session_id, [])
        if not idx:
            continue
        sims = embedder.encode(texts) @ ev_vecs[idx].T
        found += int((sims.max(axis=1) >= threshold).sum())
    return (found / total if total else float("nan")), total


def field_source_ids(anchors) -> set[str]:
    """Utterances cited by a field (attribute, relation, event, key fact), not by an anchor's mention list:
    a speaker's profile mentions every turn of theirs, which says nothing about what was extracted."""
    ids: set[str] = set()
    for e in anchors.entities:
        for item in (*e.attributes, *e.relations):
            ids.update(item.source_ids)
    for v in anchors.events:
        ids.update(v.source_ids)
    for t in anchors.topics:
        for f in t.key_facts:
            ids.update(f.source_ids)
    return ids


def provenance_coverage(store, sample: dict, fields_only: bool = False) -> float:
    cited = field_source_ids(store.anchors) if fields_only else store.anchors.all_source_ids()
    facts = annotated_fact_ids(sample)
    return sum(any(i in cited for i in ids) for ids in facts) / len(facts) if facts else float("nan")


class RecordingEmbedder:
    """Passes through to the real embedder and keeps the texts it is given (counted after the timing)."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.encode(texts)

    def tokens(self) -> int:
        """Tokens the model saw (truncated at its max_seq_length, as when encoding)."""
        model = self.inner._model
        ids = model.tokenizer(self.texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
        return sum(len(x) for x in ids)


def classic_section(samples: dict, conversations, embedder, threshold: float, work: Path) -> None:
    rows, quality, phases = [], [], []
    totals = {"time": [], "cpu": [], "verified": [], "recall": []}
    for conv in conversations:
        counting = RecordingEmbedder(embedder)
        t, cpu = time.perf_counter(), time.process_time()
        store = build_store(conv, work / conv.id, backend="classic", embedder=counting)
        seconds, cpu_seconds = time.perf_counter() - t, time.process_time() - cpu
        timings = store.report["timings_s"]
        phases.append([conv.id, len(counting.texts), counting.tokens(), timings["extract"], timings["finalize"],
                       timings["embed"], timings["verify"], round(cpu_seconds, 1)])
        c = store.anchors.counts()
        ver = store.report["verification"]
        known = set(conv.utterance_index())
        cited = store.anchors.all_source_ids()
        exist = len(cited & known) / len(cited) if cited else 1.0
        rows.append([conv.id, conv.n_utterances(), round(seconds, 2), c["entities"], c["events"], c["topics"],
                     ver["share"], exist])
        recall, n_gold = event_recall(store, samples[conv.id], embedder, threshold)
        prov = provenance_coverage(store, samples[conv.id])
        prov_ev = provenance_coverage(store, samples[conv.id], fields_only=True)
        quality.append([conv.id, n_gold, recall, prov, prov_ev])
        totals["time"].append(seconds)
        totals["cpu"].append(cpu_seconds)
        totals["verified"].append(ver["share"])
        totals["recall"].append(recall)
        print(f"  built {conv.id} in {seconds:.1f} s", file=sys.stderr)
    print("\n## Classic build (2 cores; models loaded once; embeddings and verification included)\n")
    print(table(["conversation", "utterances", "seconds", "entities", "events", "topics", "fields verified",
                 "source ids exist"], rows))
    print(f"\nmean build {np.mean(totals['time']):.2f} s (target <= 10 s on a quiet machine), "
          f"max {np.max(totals['time']):.2f} s; CPU (all threads) mean {np.mean(totals['cpu']):.1f} s, "
          f"max {np.max(totals['cpu']):.1f} s; mean verified {np.mean(totals['verified']):.1%} (target >= 90%)")
    print("\n## Where a classic build spends its time (wall seconds per phase; the encoder's texts and tokens do "
          "not depend on load)\n")
    print(table(["conversation", "encoder texts", "encoder tokens", "extract (+ utterance embeddings)", "finalize",
                 "embed anchors", "verify", "CPU s"], phases))
    print(f"\n## Extraction quality vs LoCoMo annotations (event match: same session, cosine >= {threshold})\n")
    print(table(["conversation", "annotated events", "event recall", "provenance coverage",
                 "coverage by fields"], quality))
    print("(anchors' mention lists cite nearly every turn, so the first coverage saturates; 'by fields' counts only "
          "utterances cited by an attribute, relation, event or key fact)")
    print(f"\nmean event recall {np.nanmean(totals['recall']):.3f} (aim >= 0.5)")


def llm_section(conversations, embedder, work: Path) -> None:
    from gravity_engine.llm import LLMConfig
    from gravity_engine.llm.tokens import count_tokens
    from gravity_engine.testing.openai_server import ScriptedOpenAIServer, echo_extraction_router

    rows = []
    with ScriptedOpenAIServer(router=echo_extraction_router, token_counter=count_tokens) as server:
        for conv in conversations:
            transcript = sum(count_tokens(f"{u.speaker}: {u.display_text()}") for u in conv.utterances())
            for fused in (True, False):
                cache = work / "llm-cache" / f"{conv.id}-{fused}"
                # "gravity-echo": the scripted server's model name, so its replies never pose as a real model's in a cache.
                config = LLMConfig(base_url=server.base_url, api_key="bench-key", model="gravity-echo",
                                   cache_dir=cache)
                out = work / f"llm-{conv.id}-{'fused' if fused else 'separate'}"
                n0 = len(server.chat_requests())
                t = time.perf_counter()
                build_store(conv, out, backend="llm", llm_config=config, fused=fused, embedder=embedder, verify=False)
                seconds = time.perf_counter() - t
                requests = server.chat_requests()[n0:]
                prompt_tokens = sum(count_tokens(m.get("content") or "") for r in requests for m in r["messages"])
                # Rebuild from scratch with the same cache: no checkpoints, so only the cache can spare calls.
                import shutil

                shutil.rmtree(out)
                n1 = len(server.chat_requests())
                build_store(conv, out, backend="llm", llm_config=config, fused=fused, embedder=embedder, verify=False)
                rebuild_calls = len(server.chat_requests()) - n1
                per_k = 1000 / conv.n_utterances()
                rows.append([conv.id, "fused" if fused else "separate", len(requests), round(len(requests) * per_k, 1),
                             int(prompt_tokens * per_k), round(prompt_tokens / transcript, 2), rebuild_calls,
                             round(seconds, 1)])
    print("\n## llm backend against the scripted local server (token counts: MiniLM WordPiece, approximates GPT)\n")
    print(table(["conversation", "mode", "calls", "calls/1k utt", "prompt tok/1k utt", "prompt/transcript",
                 "calls on cached rebuild", "seconds"], rows))
    print("\ntargets: fused prompt/transcript <= 2.5; cached rebuild 0 calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", default="", help="comma-separated sample ids (default: all 10)")
    parser.add_argument("--llm-conversations", default="conv-26", help="conversations for the llm section")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--threshold", type=float, default=0.6)
    args = parser.parse_args()
    if not LOCOMO.is_file():
        sys.exit(f"{LOCOMO} not found: the benchmark reads LoCoMo from ../shared/data")
    samples = {s["sample_id"]: s for s in json.loads(LOCOMO.read_text())}
    wanted = [c for c in args.conversations.split(",") if c] or list(samples)
    conversations = [c for c in load_conversations(LOCOMO) if c.id in wanted]
    embedder = get_embedder()
    embedder.encode(["warm up"])
    from gravity_engine.extract.classic.nlp import parse

    parse(["Load spaCy before timing."])  # the extractor loads it lazily, inside the first build otherwise
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        classic_section(samples, conversations, embedder, args.threshold, work)
        if not args.skip_llm:
            llm_ids = [c for c in args.llm_conversations.split(",") if c]
            llm_section([c for c in load_conversations(LOCOMO) if c.id in llm_ids], embedder, work)


if __name__ == "__main__":
    main()

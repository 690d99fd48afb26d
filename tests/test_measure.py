"""LLM-free measures: the coverage rule, recall@k, temporal grounding, the table and the CSVs."""

from __future__ import annotations

import csv
import json

import pytest
from query_fixtures import _SESSIONS, make_anchor_set

from gravity_engine.errors import StoreError
from gravity_engine.hosts import get_host
from gravity_engine.loaders import load_conversations
from gravity_engine.eval.coverage import covers, gold_parts, normalized_text
from gravity_engine.eval.measure import MeasureSettings, measure_conversation, run_measure
from gravity_engine.eval.summary import category_label, summarize
from gravity_engine.query.config import Budget, get_variant
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder

_TIMES = ["1:56 pm on 8 May, 2023", "10:00 am on 20 June, 2023", "6:30 pm on 15 August, 2023"]
QA = [
    {"question": "When did Caroline go to the LGBTQ support group?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
    {"question": "What is the name of Caroline's dog?", "answer": "Oscar", "evidence": ["D2:1"], "category": 4},
    {"question": "What did Melanie and her kids make?", "answer": "bowls", "evidence": ["D1:4"], "category": 1},
    {"question": "What did Caroline buy in Paris?", "adversarial_answer": "a hat", "evidence": [], "category": 5},
]


def _locomo_file(tmp_path):
    conv = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for i, (_, _, turns) in enumerate(_SESSIONS, start=1):
        conv[f"session_{i}_date_time"] = _TIMES[i - 1]
        conv[f"session_{i}"] = [{"speaker": sp, "dia_id": f"D{i}:{j}", "text": tx} for j, (sp, tx) in enumerate(turns, 1)]
    path = tmp_path / "mini_locomo.json"
    path.write_text(json.dumps([{"sample_id": "toy", "conversation": conv, "qa": QA}]))
    return path


def _store_for(conversation, emb):
    anchors = make_anchor_set()
    anchors.conversation_id = conversation.id
    anchors.built_with.embedding_model = emb.name
    return AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, emb), conversation=conversation)


@pytest.mark.parametrize("gold, lines, expected", [
    ("7 May 2023", ["- 2023-05-07 (7 May 2023) | Caroline: support group"], True),
    ("7 May 2023", ["[17 May 2023] something", "on the 7th"], False),
    ("Psychology, counseling certification", ["she likes psychology", "a counseling certification course"], True),
    ("The Hobbits", ["we read the hobbit"], True),
    ("Sweden and Norway", ["moved from Sweden"], False),
    (2022, ["painted in 2022"], True),
], ids=["date", "date-split", "parts", "article-plural", "and-parts", "int"])
def test_coverage_rule(gold, lines, expected):
    assert covers(str(gold), normalized_text(lines)) is expected


def test_gold_parts_and_category_names():
    assert gold_parts("Psychology, counseling; art and music") == ["psychology", "counseling", "art", "music"]
    assert covers("", normalized_text(["x"])) is None
    assert category_label("2", "locomo") == "2 temporal" and category_label("4", "locomo") == "4 single-hop"
    assert category_label("temporal-reasoning", "longmemeval") == "TR"


def test_measure_rows_on_a_small_conversation(tmp_path):
    emb = FakeEmbedder()
    conv = load_conversations(_locomo_file(tmp_path))[0]
    store = _store_for(conv, emb)
    host = get_host("dense", embedder=emb, use_cache=False)
    seen = []
    settings = MeasureSettings(k=3, config=get_variant("full").with_(host_k=3),
                               budget=Budget(total=200, anchor_share=0.5))
    rows = measure_conversation(store, host, conv.questions, "locomo", settings, emb, lambda d, t: seen.append((d, t)))
    assert seen[-1] == (4, 4) and len(rows) == 4
    first = rows[0]
    assert first.category_label == "2 temporal" and first.recall_host == 1.0
    assert first.covered_host is False and first.covered_gravity is True  # "yesterday" resolved to 7 May 2023
    assert first.temporal_grounded is True
    assert first.gravity_tokens <= settings.budget.total and first.host_tokens <= settings.budget.total
    assert rows[3].category == "5" and rows[3].covered_host is None and rows[3].recall_host is None
    summary = {s["category"]: s for s in summarize(rows)}
    assert summary["overall (excl. 5)"]["n"] == 3 and summary["2 temporal"]["temporal_grounding"] == 1.0


def test_run_measure_uses_existing_stores_and_writes_csv(tmp_path):
    emb = FakeEmbedder()
    path = _locomo_file(tmp_path)
    conv = load_conversations(path)[0]
    runs = tmp_path / "runs"
    with pytest.raises(StoreError, match=f"no anchor store for {conv.id}; build it first"):
        run_measure("locomo", path, lambda: get_host("bm25"), runs, embedder=emb)  # measuring never builds
    assert not (runs / conv.id).exists()
    _store_for(conv, emb).save(runs / conv.id)
    report = run_measure("locomo", path, lambda: get_host("bm25"), runs, limit=3, embedder=emb,
                         settings=MeasureSettings(k=3, budget=Budget(total=80)))
    assert len(report.rows) == 3
    with open(report.csv_path, newline="") as fh:
        assert [r["question_id"] for r in csv.DictReader(fh)] == [r.question_id for r in report.rows]
    assert "2 temporal" in report.table and "overall (excl. 5)" in report.table
    assert report.summary_csv_path.is_file()


def test_context_covers_reads_raw_text_line_by_line():
    from gravity_engine.eval.coverage import context_covers

    prompt = "- 2023-05-07 (7 May 2023); said \"yesterday\" | Caroline went to a support group\n- other line"
    assert context_covers("7 May 2023", prompt) is True
    assert context_covers("7 May 2023", "7 May\n2023") is False  # a part must sit inside one line
    assert context_covers("", prompt) is None

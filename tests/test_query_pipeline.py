"""The query path end to end: ask() with a host, fusion, variants, answers, the trace and the CLI."""

from __future__ import annotations

import json

import pytest
from query_fixtures import make_store
from typer.testing import CliRunner

from gravity_engine.errors import ConfigError
from gravity_engine.hosts import get_host
from gravity_engine.hosts.base import Memory
from gravity_engine.llm import allow_local_model_requests
from gravity_engine.query import QueryConfig, QueryTrace, ask, fuse
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.fake_llm import FakeLLMClient

QUESTION = "When did Caroline go to the LGBTQ support group?"


@pytest.fixture
def store(fake_embedder):
    return make_store(fake_embedder)


@pytest.fixture
def host(fake_embedder):
    return get_host("dense", embedder=fake_embedder, use_cache=False)


def _m(uid):
    return Memory(text=uid, utterance_ids=[uid])


def test_fuse_is_weighted_reciprocal_rank_fusion():
    original = [_m("a"), _m("b"), _m("c")]
    expansion = [_m("c"), _m("d")]
    fused = fuse([original, expansion, [_m("c")]], [3.0, 1.0, 1.0], k=3, c=60)
    ids = [m.utterance_ids[0] for m, _, _ in fused]
    assert ids == ["c", "a", "b"]  # c: 3/63 + 1/61 + 1/61 beats a: 3/61; d falls beyond k
    assert fused[0][2] == [0, 1, 2] and fused[0][1] == pytest.approx(3 / 63 + 2 / 61)
    alone = fuse([original, expansion], [100.0, 1.0], k=4)
    assert [m.utterance_ids[0] for m, _, _ in alone] == ["a", "b", "c", "d"]


def test_ask_offline_fills_the_trace(store, host):
    result = ask(store, host, QUESTION)
    tr = result.trace
    assert tr.answers.status.startswith("unavailable") and tr.answers.without is None
    assert tr.reference_time == "2023-08-15" and tr.temporal["asks_when"]
    assert set(tr.modules) == {"entities", "events", "topics"}
    events = tr.modules["events"]
    assert events.candidates[0].anchor_id == "v1" and events.candidates[0].kept
    assert [c.rank for c in events.candidates] == list(range(1, len(events.candidates) + 1))
    assert all(c.status in {"kept", "temporal slot", "below sigma", "beyond K"} for c in events.candidates)
    assert 0 < len(tr.expansions) <= 9
    order = {"topics": 0, "entities": 1, "events": 2}
    assert [order[e.module] for e in tr.expansions[:3]] == sorted(order[e.module] for e in tr.expansions[:3])
    assert tr.host_results[0].source == "original" and len(tr.host_results) == 1 + len(tr.expansions)
    assert len(tr.merged) <= tr.host_k and ["D1:1"] in [m.utterance_ids for m in tr.merged]
    assert tr.host_results[0].memories[0].utterance_ids == ["D1:1"]
    assert tr.blocks and all(b.title in tr.prompt_with.text for b in tr.blocks)
    assert "Event Records" in tr.prompt_with.text
    assert "Event Records" not in tr.prompt_without.text and tr.prompt_with.tokens > tr.prompt_without.tokens
    assert tr.injected_tokens == sum(b.tokens for b in tr.blocks) > 0
    assert tr.timings_ms["query_path"] > 0 and "host_search" in tr.timings_ms
    again = QueryTrace.model_validate_json(tr.to_json())
    assert again.modules["events"].kept_ids == events.kept_ids
    assert json.loads(tr.to_json())["answers"]["with"] is None


def test_answers_with_and_without_from_the_same_model(store, host):
    llm = FakeLLMClient(replies=["8 May 2023", "7 May 2023"])
    with allow_local_model_requests():
        result = ask(store, host, QUESTION, llm=llm)
    assert (result.answer_without, result.answer_with) == ("8 May 2023", "7 May 2023")
    assert result.trace.answers.status == "answered" and result.trace.answers.model == "fake-llm"
    sent = [r.messages for r in llm.history]
    assert "<anchors>" not in sent[0][1]["content"] and "## Event Records" in sent[1][1]["content"]
    assert all(r.temperature == 0 for r in llm.history)


def test_variants_baseline_sum_and_no_expansion(store, host):
    base = ask(store, host, QUESTION, "baseline").trace
    assert base.blocks == [] and base.expansions == [] and base.prompt_with.text == base.prompt_without.text
    noexp = ask(store, host, QUESTION, "-exp").trace
    assert noexp.expansions == [] and len(noexp.host_results) == 1 and noexp.blocks
    full = ask(store, host, QUESTION).trace
    summ = ask(store, host, QUESTION, "+Sum").trace
    assert [b.module for b in summ.blocks] == ["summaries"] and summ.expansions == []
    assert "Conversation Summaries" in summ.prompt_with.text
    # matched in size: within one summary of the full variant's injection
    assert summ.injected_tokens <= full.injected_tokens + max(b.tokens for b in summ.blocks)
    single = ask(store, host, QUESTION, "+V").trace
    assert set(single.modules) == {"events"} and {e.module for e in single.expansions} == {"events"}


def test_store_embedded_with_another_model_is_refused(store, host):
    with pytest.raises(ConfigError, match="dimensions"):
        ask(store, host, QUESTION, embedder=FakeEmbedder(dim=32))


def _cli():
    from gravity_engine.cli import query_cmds  # noqa: F401  (registers ask and measure)
    from gravity_engine.cli.app import app

    return app


def test_cli_ask_prints_every_step_and_writes_the_trace(tmp_path, fake_embedder):
    store = make_store(fake_embedder)
    store.save(tmp_path / "toy")
    out = tmp_path / "t.json"
    res = CliRunner().invoke(_cli(), ["ask", str(tmp_path / "toy"), QUESTION, "--host", "bm25", "--trace", str(out)])
    assert res.exit_code == 0, res.output
    for text in ("memories for the question", "events:", "Expansion queries", "Event Records", "no endpoint configured"):
        assert text in res.output
    trace = json.loads(out.read_text())
    assert trace["host"] == "bm25" and trace["modules"]["events"]["candidates"]
    res = CliRunner().invoke(_cli(), ["ask", str(tmp_path / "toy"), QUESTION, "--host", "bm25", "--no-gravity"])
    assert res.exit_code == 0 and "Expansion queries" not in res.output


def test_cli_ask_bad_input_is_one_clear_line(tmp_path):
    res = CliRunner().invoke(_cli(), ["ask", str(tmp_path), "Who?"])
    assert res.exit_code == 2 and "no anchors.json" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(_cli(), ["ask", str(tmp_path), "Who?", "--variant", "+Q"])
    assert res.exit_code == 2 and "unknown variant" in res.output


def test_real_embedder_ranks_the_asked_event_first(embedder):
    store = make_store(embedder)
    tr = ask(store, get_host("dense", embedder=embedder, use_cache=False), QUESTION, embedder=embedder).trace
    events = tr.modules["events"]
    assert events.candidates[0].anchor_id == "v1" and events.candidates[0].cosine > 0.5
    assert events.kept_ids[0] == "v1" and "7 May 2023: Caroline" in tr.prompt_with.text
    paraphrase = "How is Caroline's plan to become a counselor going?"  # no word of the topic's label or keywords
    assert ask(store, get_host("bm25"), paraphrase, embedder=embedder).trace.modules["topics"].kept_ids == []
    widened = ask(store, get_host("bm25"), paraphrase, QueryConfig(widen=True), embedder=embedder).trace
    assert widened.modules["topics"].kept_ids[0] == "t1"  # dense widening finds it


def test_cli_ask_answers_with_and_without_gravity_from_one_endpoint(tmp_path, fake_embedder, scripted_openai,
                                                                  monkeypatch):
    from gravity_engine.testing.pytest_plugin import TEST_API_KEY

    store = make_store(fake_embedder)
    store.save(tmp_path / "toy")
    # The scripted model answers from what its prompt holds: with anchors it can see the event record.
    scripted_openai.router = lambda request: ("from the anchors" if "Event Records" in request["messages"][-1]["content"]
                                              else "not in my memories")
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", scripted_openai.base_url)
    monkeypatch.setenv("GRAVITY_LLM_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
    res = CliRunner().invoke(_cli(), ["ask", str(tmp_path / "toy"), QUESTION, "--host", "bm25"])
    assert res.exit_code == 0, res.output
    assert "host alone  : not in my memories" in res.output and "with Gravity: from the anchors" in res.output
    requests = scripted_openai.chat_requests()
    assert len(requests) == 2 and {r["model"] for r in requests} == {"gravity-echo"}
    assert all(r.get("temperature") == 0 for r in requests)


@pytest.mark.parametrize("question, parts", [
    ("In which country will Tom run, and in which state does Priya live?",
     ["In which country will Tom run", "in which state does Priya live"]),
    ("What is the name of Tom's dog, and how old was he?", ["What is the name of Tom's dog", "how old was he"]),
    ("When did Tom hurt his Achilles, and since when has he seen a physio?",
     ["When did Tom hurt his Achilles", "since when has he seen a physio"]),
    ("What was the title of her talk and who were her co-authors?", ["What was the title of her talk",
                                                                      "who were her co-authors"]),
    ("Who approved the encoder, and when?", []),  # "when" alone is too short to match on
    ("What does Melanie do when she feels stressed?", []),  # a clause, not a second question
    ("What do Melanie and Caroline both like?", []),
])
def test_question_parts(question, parts):
    from gravity_engine.text import question_parts

    assert question_parts(question) == parts


def test_a_line_scores_its_best_cosine_with_the_question_or_one_of_its_parts(store, fake_embedder):
    from gravity_engine.query import GravityQuery

    question = "What does Caroline like, and what did Melanie paint?"
    whole = GravityQuery(store, fake_embedder, QueryConfig(question_parts=False, sigma=-1.0)).run(question)
    split = GravityQuery(store, fake_embedder, QueryConfig(sigma=-1.0)).run(question)
    before = {(s.line.anchor_id, s.line.field): s.score for s in whole.lines.lines}
    after = {(s.line.anchor_id, s.line.field): s.score for s in split.lines.lines}
    assert after.keys() == before.keys()
    assert all(after[k] >= before[k] - 1e-6 for k in after)
    assert any(after[k] > before[k] + 1e-3 for k in after)

"""Streams that fit every server: the scripted server behaving as the servers people really run do.

* a proxy or gateway that ignores ``stream: true`` and answers with one JSON body;
* one that rejects ``stream`` (HTTP 400 naming it);
* a one-slot server that answers 200 at once and holds queued streams (pinging) until the model is free;
* llama-cpp-python at its defaults: the same, and a generating stream is cut (``[DONE]``, no finish_reason)
  as soon as another request waits;
* llama.cpp's own server, which says how many slots it has (``/props``).

With concurrency left at auto, no call is lost, no call is sent more than twice, and the limit settles
at the server's slots.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from gravity_engine.llm import OpenAIClient, endpoints
from gravity_engine.prompts import PROMPTS
from gravity_engine.testing.openai_server import Reply, ScriptedOpenAIServer, echo_extraction_router
from gravity_engine.testing.pytest_plugin import local_llm_config

ENTITIES = {"entities": [{"name": "Caroline", "type": "person", "source_ids": ["D1:1"]}]}


def context(i: int) -> dict:
    return {"session_id": f"s{i}", "session_time": "2023-05-08T13:56", "speakers": ["Caroline", "Melanie"],
            "utterances": [{"id": "D1:1", "speaker": "Caroline", "text": f"I went to the support group {i} days ago."},
                           {"id": "D1:2", "speaker": "Melanie", "text": "Wow! I painted a sunrise last week."}]}


def run_calls(client: OpenAIClient, n: int, workers: int = 4) -> list:
    """``n`` extraction calls from ``workers`` threads, as a build's batches; each result with its own usage."""
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda i: client.complete_json_with_info(PROMPTS["extract_entities"], context(i)),
                             range(n)))


def test_a_complete_json_reply_to_a_streamed_request_is_accepted(allow_local_llm):
    with ScriptedOpenAIServer(router=echo_extraction_router, ignore_stream=True) as srv:
        client = OpenAIClient(local_llm_config(srv, cache=False))
        results = run_calls(client, 5)
        assert all(r.entities and r.entities[0].name == "Caroline" for r, _ in results)
        assert all(u.requests == 1 for _, u in results)  # one request per call: nothing retried
        assert client.chat([{"role": "user", "content": "hi"}]) == "I don't know."  # free text too
        usage = client.usage.total()
        assert (usage.calls, usage.failures, usage.retries, usage.busy) == (6, 0, 0, 0)
        assert usage.prompt_tokens > 0 and usage.completion_tokens > 0  # from the body's usage
        assert all(r.get("stream") for r in srv.chat_requests())  # still asked to stream: it simply did not


def test_a_server_that_rejects_stream_is_asked_without_it_and_remembered(allow_local_llm):
    with ScriptedOpenAIServer(router=echo_extraction_router, reject_stream=True) as srv:
        client = OpenAIClient(local_llm_config(srv, cache=False))
        first = client.complete_json(PROMPTS["extract_entities"], context(0))
        assert first.entities
        usage = client.usage.total()
        assert (usage.requests, usage.stream_fallbacks, usage.retries, usage.failures) == (2, 1, 0, 0)
        # The next client of the same endpoint (the next batch, the judge) never streams to it again.
        other = OpenAIClient(local_llm_config(srv, cache=False))
        assert other.chat([{"role": "user", "content": "hi"}])
        assert other.usage.total().requests == 1
        streamed = [bool(r.get("stream")) for r in srv.chat_requests()]
        assert streamed == [True, False, False]
        assert "stream fallbacks" in usage.summary()


def test_one_slot_server_holding_queued_streams_settles_at_one_in_flight(allow_local_llm):
    """200 at once, then pings until the model is free: the read timeout never fires. A stream with no first
    token within the stall deadline while another is in flight is queued behind it: abandoned, retried, and
    the limit halves to one."""
    router = lambda _request: Reply.generating(ENTITIES, per_token=0.02)  # noqa: E731 - ~0.7 s a reply
    with ScriptedOpenAIServer(router=router, slots=1, queue_streams=True) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", stall_timeout=0.3, timeout=5.0,
                                               max_retries=3, cache=False))
        results = run_calls(client, 6)
        assert all(r.entities[0].name == "Caroline" for r, _ in results)  # no call lost
        assert max(u.requests for _, u in results) <= 2  # each sent at most twice
        usage = client.usage.total()
        assert usage.failures == 0 and usage.busy >= 1 and usage.timeouts == 0
        assert client.limit.limit == 1 and client.limit.decreases >= 1  # settled at the server's one slot
        assert srv.peak_active == 1 and srv.abandoned >= 1  # the abandoned queued stream left the queue
        assert usage.requests <= 6 + 2


def test_llama_cpp_python_at_its_defaults_cuts_streams_and_none_is_lost(allow_local_llm):
    """llama-cpp-python's interrupt_requests: a waiting request ends the generating stream ([DONE], no finish
    reason). Those streams are dropped, not replies: retried, and the limit comes down to one."""
    router = lambda _request: Reply.generating(ENTITIES, per_token=0.01)  # noqa: E731
    with ScriptedOpenAIServer(router=router, slots=1, queue_streams=True, interrupt_streams=True) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", stall_timeout=5.0, timeout=5.0,
                                               max_retries=3, cache=False))
        results = run_calls(client, 6)
        assert all(r.entities[0].name == "Caroline" for r, _ in results)
        assert max(u.requests for _, u in results) <= 2
        usage = client.usage.total()
        assert usage.failures == 0 and usage.repairs == 0  # a cut stream is never taken for a (bad) reply
        assert srv.interrupted >= 1 and usage.busy >= 1
        assert client.limit.limit == 1


def test_a_server_that_reports_its_slots_starts_there(allow_local_llm):
    with ScriptedOpenAIServer(router=echo_extraction_router, slots=3, props_slots=3) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", cache=False))
        run_calls(client, 6)
        assert (client.limit.server_slots, client.limit.limit, client.limit.ceiling) == (3, 3, 3)
        assert [r["path"] for r in srv.requests].count("/props") == 1  # asked once per endpoint
        # Without /props the start is 2; with a concurrency chosen, nobody asks.
    with ScriptedOpenAIServer(router=echo_extraction_router) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", cache=False))
        client.complete_json(PROMPTS["extract_entities"], context(0))
        assert (client.limit.server_slots, client.limit.limit) == (None, 2)
    with ScriptedOpenAIServer(router=echo_extraction_router, props_slots=1) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency=3, cache=False))
        client.complete_json(PROMPTS["extract_entities"], context(0))
        assert client.limit.limit == 3 and all(r["path"] != "/props" for r in srv.requests)


def test_a_slow_first_token_alone_is_waited_for(allow_local_llm):
    """Alone in flight, a late first token is a long prompt being read, not a queue: only the timeout applies."""
    with ScriptedOpenAIServer(replies=[Reply.stalled(ENTITIES, after=0, seconds=0.8)], queue_streams=True,
                              slots=1) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", stall_timeout=0.2, timeout=3.0))
        assert client.complete_json(PROMPTS["extract_entities"], context(0)).entities
        usage = client.usage.total()
        assert (usage.requests, usage.busy, usage.retries) == (1, 0, 0)


def test_the_stall_deadline_follows_the_median_first_token():
    limit = endpoints.AdaptiveLimit(4)
    assert limit.stall_deadline(30.0) == 30.0
    for seconds in (12.0, 15.0, 14.0):
        limit.record_first_token(seconds)
    assert limit.stall_deadline(30.0) == pytest.approx(42.0)  # 3 x the median, above the floor


def test_only_a_request_with_older_ones_in_flight_counts_as_queued():
    """The oldest request in flight is the one a server serving in order works on: never abandoned as queued."""
    limit = endpoints.AdaptiveLimit(3)
    with limit.slot():
        first = limit.current_ticket()
        with limit.slot():
            second = limit.current_ticket()
            assert (limit.older_in_flight(first), limit.older_in_flight(second)) == (0, 1)
        assert limit.current_ticket() == first and limit.older_in_flight(first) == 0


def test_concurrency_auto_is_unset_and_an_env_auto_leaves_it_unset(monkeypatch):
    from gravity_engine.llm import LLMConfig

    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("GRAVITY_LLM_CONCURRENCY", "auto")
    assert LLMConfig.from_env().concurrency_is_auto
    monkeypatch.setenv("GRAVITY_LLM_CONCURRENCY", "3")
    config = LLMConfig.from_env()
    assert not config.concurrency_is_auto and config.concurrency == 3
    assert json.loads(json.dumps(config.public_dict()))["concurrency_auto"] is False


def test_evaluate_against_a_server_that_ignores_stream_finishes_its_slice(tmp_path, allow_local_llm):
    from evaluate_fixtures import write_conversation, write_store

    from gravity_engine.eval.evaluate import EvalSettings, run_evaluation
    from gravity_engine.testing import FakeEmbedder

    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    questions = len(json.loads(conv.with_name(conv.stem + ".questions.json").read_text()))
    with ScriptedOpenAIServer(router=echo_extraction_router, ignore_stream=True) as srv:
        settings = EvalSettings(dataset="custom", path=conv, out=tmp_path / "results", stores=tmp_path / "stores",
                                variants=["baseline", "full"], concurrency=2)
        summary = run_evaluation(settings, OpenAIClient(local_llm_config(srv, cache=False)),
                                 OpenAIClient(local_llm_config(srv, cache=False)))
    assert summary.answer_errors == 0 and summary.rows_written == 2 * questions


def test_test_connection_to_a_server_that_rejects_stream_says_it_works(allow_local_llm):
    with ScriptedOpenAIServer(reject_stream=True, models=["other"]) as srv:
        srv.push("OK")
        check = OpenAIClient(local_llm_config(srv)).test_connection()
        assert check.ok, check.message
        assert not endpoints.streams(srv.base_url)


def test_calls_waiting_for_a_slot_start_with_the_format_the_first_refusal_taught(allow_local_llm):
    """Only the calls already in flight pay for llama.cpp's refusal of json_schema, not every batch queued."""
    router = lambda _request: Reply.generating(ENTITIES, per_token=0.005)  # noqa: E731
    with ScriptedOpenAIServer(router=router, json_schema_500=True) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency=1, cache=False))
        results = run_calls(client, 4)
        assert all(r.entities for r, _ in results)
        assert client.usage.total().format_fallbacks == 1 and client.usage.total().requests == 5


@pytest.mark.parametrize("server_kind", ["ignore_stream", "reject_stream"])
def test_a_build_against_a_server_that_does_not_stream_loses_no_batch(tmp_path, allow_local_llm, server_kind):
    """Issue 31: against a server ignoring stream every batch failed ("closed the stream without a reply")."""
    from evaluate_fixtures import write_conversation

    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversation
    from gravity_engine.testing import FakeEmbedder

    conv, _ = write_conversation(tmp_path / "data")
    with ScriptedOpenAIServer(router=echo_extraction_router, **{server_kind: True}) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency="auto", cache=False))
        store = build_store(load_conversation(conv), tmp_path / "store", backend="llm", llm_client=client,
                            embedder=FakeEmbedder(), batch_size=2, verify=False)
    report = store.report
    assert report["batches"]["total"] == 4 and report["batches"]["failed"] == []
    total = report["llm"]["total"]
    assert total["requests"] == total["calls"] + total["stream_fallbacks"] + total["format_fallbacks"]
    assert total["stream_fallbacks"] <= 2  # only the requests in flight before the first refusal came back
    assert store.anchors.entities

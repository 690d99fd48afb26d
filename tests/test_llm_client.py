"""The LLM client with the real ``openai`` package against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import time

import pytest

from gravity_engine.errors import ConfigError, LLMError
from gravity_engine.llm import LLMConfig, ModelRequestsForbidden, OpenAIClient, allow_local_model_requests
from gravity_engine.llm.cache import ResponseCache
from gravity_engine.prompts import PROMPTS
from gravity_engine.testing.openai_server import Reply, ScriptedOpenAIServer, echo_extraction_router
from gravity_engine.testing.pytest_plugin import TEST_API_KEY, local_llm_config

CONTEXT = {
    "session_id": "s1", "session_time": "2023-05-08T13:56", "speakers": ["Caroline", "Melanie"],
    "utterances": [
        {"id": "D1:1", "speaker": "Caroline", "text": "I went to the LGBTQ support group yesterday."},
        {"id": "D1:2", "speaker": "Melanie", "text": "Wow! I painted a sunrise last week."},
    ],
}
ENTITIES = {"entities": [{"name": "Caroline", "type": "person", "source_ids": ["D1:1"]}]}


@pytest.fixture
def server(allow_local_llm):
    with ScriptedOpenAIServer() as srv:
        yield srv


def make(server, **overrides) -> OpenAIClient:
    return OpenAIClient(local_llm_config(server, **overrides))


def test_happy_path_returns_validated_model_and_counts_usage(server):
    server.push(ENTITIES)
    client = make(server)
    reply = client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert reply.entities[0].name == "Caroline" and reply.entities[0].source_ids == ["D1:1"]
    usage = client.usage.by_prompt()["extract_entities"]
    assert (usage.calls, usage.requests, usage.cache_hits, usage.failures) == (1, 1, 0, 0)
    assert usage.prompt_tokens > 50 and usage.completion_tokens > 0 and usage.wall_time_s > 0


def test_request_contract(server):
    """What goes over the wire: a refactor must not silently change it."""
    server.push(ENTITIES)
    make(server, max_tokens=777).complete_json(PROMPTS["extract_entities"], CONTEXT)
    (request,) = server.requests
    assert request["method"] == "POST" and request["path"] == "/v1/chat/completions" and request["authorized"]
    body = request["json"]
    assert body["model"] == "gravity-echo"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 777
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"] == PROMPTS["extract_entities"].render(CONTEXT)
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "extract_entities" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema == PROMPTS["extract_entities"].json_schema()
    assert schema["required"] == ["entities"] and schema["additionalProperties"] is False
    assert "$defs" not in json.dumps(schema) and "default" not in json.dumps(schema)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert set(body) <= {"model", "messages", "temperature", "max_tokens", "response_format", "stream", "stream_options"}


def test_429_then_success_honours_retry_after(server):
    server.push(Reply.error(429, "slow down", retry_after=0.3), ENTITIES)
    client = make(server, backoff_base=0.0)
    started = time.perf_counter()
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities
    assert time.perf_counter() - started >= 0.3
    usage = client.usage.total()
    assert (usage.requests, usage.retries, usage.calls) == (2, 1, 1)


def test_500s_exhaust_retries_with_a_clear_error(server):
    server.push(*[Reply.error(500, "boom")] * 3)
    client = make(server, max_retries=2)
    with pytest.raises(LLMError, match=r"extract_entities: HTTP 500: boom; gave up after 3 attempts"):
        client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert len(server.requests) == 3
    assert client.usage.total().failures == 1


@pytest.mark.parametrize("first", [Reply.slow(2.0, ENTITIES), Reply.dropped()], ids=["timeout", "dropped-connection"])
def test_timeouts_and_dropped_connections_are_retried(server, first):
    server.push(first, ENTITIES)
    client = make(server, timeout=0.3)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities[0].name == "Caroline"
    assert client.usage.total().retries == 1


def test_timeout_every_time_is_an_llm_error(server):
    server.push(*[Reply.slow(2.0, ENTITIES)] * 2)
    with pytest.raises(LLMError, match="timed out: no token for 0.3 s; gave up after 2 attempts"):
        make(server, timeout=0.3, max_retries=1).complete_json(PROMPTS["extract_entities"], CONTEXT)


@pytest.mark.parametrize("bad", [
    Reply.text("Sure! Here are the entities: {\"entities\": [oops]}"),
    Reply.truncated(ENTITIES, keep=0.5),
    Reply.json({"entities": [{"type": "person"}]}),  # valid JSON, but "name" is missing
], ids=["malformed", "truncated", "schema-violation"])
def test_invalid_reply_gets_one_repair_round(server, bad):
    server.push(bad, ENTITIES)
    client = make(server)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities[0].name == "Caroline"
    repair = server.chat_requests()[1]["messages"]
    assert repair[-2]["role"] == "assistant" and repair[-2]["content"] == bad.content
    assert repair[-1]["role"] == "user" and "invalid" in repair[-1]["content"]
    assert client.usage.total().repairs == 1


def test_second_invalid_reply_fails_clearly(server):
    server.push("not json", "still not json")
    with pytest.raises(LLMError, match="still invalid after one repair round"):
        make(server).complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert len(server.requests) == 2


def test_code_fences_are_cleaned_without_a_repair(server):
    server.push("```json\n" + json.dumps(ENTITIES) + "\n```")
    client = make(server)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities
    assert client.usage.total().repairs == 0


def test_json_schema_rejected_falls_back_to_json_object_and_remembers(server):
    server.push(Reply.error(400, "response_format json_schema is not supported"), ENTITIES, ENTITIES)
    client = make(server)
    client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    client.complete_json(PROMPTS["extract_entities"], {**CONTEXT, "session_id": "s2"})
    formats = [r["response_format"] for r in server.chat_requests()]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    # Without an enforced schema the model is shown it, and json_object mode needs the word JSON.
    system = server.chat_requests()[1]["messages"][0]["content"]
    assert "JSON schema (name: extract_entities)" in system and '"entities"' in system
    assert formats[1]["schema"]["required"] == ["entities"]  # llama.cpp's grammar extension (bounded)
    assert client.json_mode == "json_object_schema"
    assert make(server).json_mode == "json_object_schema"  # remembered for the endpoint, not the client


def test_rejected_without_any_response_format_is_a_clear_error(server):
    server.push(*[Reply.error(400, "context length exceeded")] * 4)
    client = make(server)
    with pytest.raises(LLMError, match=r"rejected the request \(HTTP 400\): context length exceeded"):
        client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert client.json_mode == "json_schema"  # the format was not the problem: do not stay degraded


def test_unchanged_rerun_is_served_from_cache_with_zero_requests(server):
    server.push(ENTITIES, "a free-text answer")
    first = make(server)
    first.complete_json(PROMPTS["extract_entities"], CONTEXT)
    first.chat([{"role": "user", "content": "q"}], "answer", prompt_version="1")
    n = len(server.requests)
    second = make(server)  # a new client (new process, same cache dir)
    assert second.complete_json(PROMPTS["extract_entities"], CONTEXT).entities[0].name == "Caroline"
    assert second.chat([{"role": "user", "content": "q"}], "answer", prompt_version="1") == "a free-text answer"
    assert len(server.requests) == n
    usage = second.usage.total()
    assert (usage.calls, usage.requests, usage.cache_hits) == (0, 0, 2)


@pytest.mark.parametrize("change", [
    {"model": "other-model"}, {"temperature": 0.5}, {"max_tokens": 321},
], ids=["model", "temperature", "max_tokens"])
def test_cache_key_covers_model_and_settings(server, change):
    server.push(ENTITIES, ENTITIES)
    make(server).complete_json(PROMPTS["extract_entities"], CONTEXT)
    make(server, **change).complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert len(server.requests) == 2


def test_chat_cache_key_covers_max_tokens(server):
    server.push("a short", "a longer answer")
    client = make(server)
    assert client.chat([{"role": "user", "content": "q"}], "answer", max_tokens=2) == "a short"
    assert client.chat([{"role": "user", "content": "q"}], "answer", max_tokens=200) == "a longer answer"
    assert [r["max_tokens"] for r in server.chat_requests()] == [2, 200]


def test_truncated_chat_reply_is_returned_but_not_cached(server):
    server.push(Reply(content="The answer is", finish_reason="length"), "The answer is 7 May 2023.")
    first = make(server)
    assert first.chat([{"role": "user", "content": "q"}], "answer") == "The answer is"
    assert make(server).chat([{"role": "user", "content": "q"}], "answer") == "The answer is 7 May 2023."
    assert len(server.requests) == 2
    assert make(server).chat([{"role": "user", "content": "q"}], "answer") == "The answer is 7 May 2023."
    assert len(server.requests) == 2  # a complete reply is cached as before


def test_cache_disabled_always_asks(server):
    server.push(ENTITIES, ENTITIES)
    for _ in range(2):
        make(server, cache=False).complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert len(server.requests) == 2


def test_api_key_never_leaks_to_cache_logs_errors_or_reprs(server, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    server.api_key = TEST_API_KEY
    server.push(Reply.error(429, "slow", retry_after=0.01), "not json", ENTITIES, *[Reply.error(500, "down")] * 3)
    config = local_llm_config(server, cache_dir=tmp_path / "cache")
    client = OpenAIClient(config)
    client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    with pytest.raises(LLMError) as err:
        client.complete_json(PROMPTS["extract_events"], CONTEXT)
    texts = [caplog.text, str(err.value), repr(config), str(config), config.model_dump_json(), repr(client),
             json.dumps(config.public_dict()), json.dumps(client.usage_report())]
    for text in texts:
        assert TEST_API_KEY not in text
    for path in (tmp_path / "cache").iterdir():
        assert TEST_API_KEY.encode() not in path.read_bytes(), path
    assert all(r["authorized"] for r in server.requests)  # the key did reach the server, and only there


def test_wrong_key_is_a_clear_error_without_the_key(server):
    server.api_key = "sk-the-right-one"
    with pytest.raises(LLMError, match=r"refused the API key \(HTTP 401\)") as err:
        make(server).complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert TEST_API_KEY not in str(err.value)
    assert len(server.requests) == 1  # not retried


def test_chat_free_text_is_counted_under_its_prompt_name(server):
    server.push("7 May 2023")
    client = make(server)
    answer = client.complete_text(PROMPTS["answer"], {"question": "When?", "memories": ["[8 May 2023] yesterday"]})
    assert answer == "7 May 2023"
    assert "response_format" not in server.chat_requests()[0]
    assert client.usage.by_prompt()["answer"].calls == 1


def test_test_connection_reports_ok_and_errors(server):
    ok = make(server).test_connection()
    assert ok.ok and "gravity-echo" in ok.message and "gravity-echo" in ok.models
    server.models = ["some-other-model"]
    server.push("OK")
    assert make(server).test_connection().ok  # not listed, but it answers a chat
    server.push(Reply.error(404, "The model does not exist"))
    missing = make(server, model="nope").test_connection()
    assert not missing.ok and "nope" in missing.message


def test_test_connection_to_a_closed_port_says_so(allow_local_llm):
    with ScriptedOpenAIServer() as srv:
        config = local_llm_config(srv)
    result = OpenAIClient(config).test_connection()
    assert not result.ok and "connection failed" in result.message


def test_requests_are_forbidden_under_tests_without_the_fixture():
    with ScriptedOpenAIServer(router=echo_extraction_router) as srv:
        client = OpenAIClient(local_llm_config(srv))
        with pytest.raises(ModelRequestsForbidden, match="forbidden under tests"):
            client.complete_json(PROMPTS["extract_entities"], CONTEXT)
        assert not client.test_connection().ok
        assert srv.requests == []


def test_the_lift_covers_loopback_only(allow_local_llm):
    client = OpenAIClient(LLMConfig(base_url="https://api.example.com/v1", api_key="sk-x", max_retries=0))
    with pytest.raises(ModelRequestsForbidden, match="only a loopback base_url"):
        client.chat([{"role": "user", "content": "hi"}])


def test_lift_is_scoped():
    with allow_local_model_requests():
        pass
    with ScriptedOpenAIServer(replies=["x"]) as srv, pytest.raises(ModelRequestsForbidden):
        OpenAIClient(local_llm_config(srv)).chat([{"role": "user", "content": "hi"}])


def test_config_from_env(monkeypatch):
    with pytest.raises(ConfigError, match="no LLM endpoint configured"):
        LLMConfig.from_env()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret")
    config = LLMConfig.from_env()
    assert config.base_url == "https://api.openai.com/v1" and config.model == "gpt-4o-mini"
    assert config.api_key.get_secret_value() == "sk-env-secret" and "sk-env-secret" not in repr(config)
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", "http://user:pw@127.0.0.1:11434/v1")
    monkeypatch.setenv("GRAVITY_LLM_MODEL", "llama3.1")
    monkeypatch.setenv("GRAVITY_LLM_CONCURRENCY", "8")
    config = LLMConfig.from_env()
    assert (config.model, config.concurrency) == ("llama3.1", 8)
    assert config.endpoint_label() == "http://127.0.0.1:11434/v1"  # no credentials in what is shown
    assert str(config.cache_dir).endswith("llm_cache") and "gravity_home" in str(config.cache_dir)
    monkeypatch.setenv("GRAVITY_LLM_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="GRAVITY_LLM_TIMEOUT='soon' is not a number"):
        LLMConfig.from_env()
    with pytest.raises(ConfigError, match="invalid LLM setting concurrency"):
        LLMConfig.build(concurrency=0)


def test_cache_is_thread_safe(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    cache = ResponseCache(tmp_path)

    def work(i: int) -> None:
        cache.put(f"k{i}", prompt="p@1", model="m", content=json.dumps({"i": i}), usage={})
        assert cache.get(f"k{i}")[0] == json.dumps({"i": i})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(100)))
    assert len(cache) == 100
    assert cache.clear("p@1") == 100 and len(cache) == 0


# --- real local servers: format rejected with HTTP 500, one slot, long generations (issue 15) ---------

def test_json_schema_answered_with_500_falls_back_at_once_and_is_remembered(allow_local_llm):
    """llama-cpp-python answers json_schema with HTTP 500 and a validation message: that is a rejected
    format (next mode, no retries), not a server failure retried until the batch fails."""
    with ScriptedOpenAIServer(router=echo_extraction_router, json_schema_500=True) as srv:
        client = OpenAIClient(local_llm_config(srv, max_retries=4))
        assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities
        formats = [r.get("response_format") or {} for r in srv.chat_requests()]
        assert [f.get("type") for f in formats] == ["json_schema", "json_object"] and "schema" in formats[1]
        usage = client.usage.total()
        assert (usage.requests, usage.calls, usage.retries, usage.failures, usage.format_fallbacks) == (2, 1, 0, 0, 1)
        other = OpenAIClient(local_llm_config(srv, max_retries=4))  # the next batch, the judge, a new page run
        assert other.complete_json(PROMPTS["extract_events"], CONTEXT).events
        assert len(srv.chat_requests()) == 3 and srv.chat_requests()[-1]["response_format"]["type"] == "json_object"


def test_a_500_that_does_not_name_the_format_is_still_retried(server):
    server.push(Reply.error(500, "CUDA out of memory"), ENTITIES)
    client = make(server)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities
    assert [r["response_format"]["type"] for r in server.chat_requests()] == ["json_schema", "json_schema"]
    assert client.usage.total().retries == 1 and client.json_mode == "json_schema"


def test_json_mode_setting_starts_there(server):
    server.push(ENTITIES)
    client = make(server, json_mode="json_object")
    client.complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert server.chat_requests()[0]["response_format"] == {"type": "json_object"}
    server.push(ENTITIES)
    make(server, json_mode="prompt", cache=False).complete_json(PROMPTS["extract_entities"], CONTEXT)
    assert "response_format" not in server.chat_requests()[1]


def test_a_long_generation_still_producing_tokens_is_not_cut(server):
    """The timeout is the wait for the next token: a 1 s reply at 0.03 s per token passes a 0.4 s timeout."""
    server.push(Reply.generating(ENTITIES, per_token=0.03))
    client = make(server, timeout=0.4, max_retries=0)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities[0].name == "Caroline"
    usage = client.usage.total()
    assert (usage.requests, usage.timeouts) == (1, 0) and usage.completion_tokens > 20


def test_a_generation_that_stalls_times_out_and_is_retried(server):
    server.push(Reply.stalled(ENTITIES, after=3, seconds=2.0), ENTITIES)
    client = make(server, timeout=0.3)
    assert client.complete_json(PROMPTS["extract_entities"], CONTEXT).entities
    usage = client.usage.total()
    assert (usage.requests, usage.timeouts, usage.retries) == (2, 1, 1)


def test_single_slot_server_concurrency_adapts_and_every_call_succeeds(allow_local_llm):
    """One request generates at a time, the others queue (llama.cpp's default). Requests that wait past
    the timeout lower the concurrency; every call ends answered and the queue does not thrash."""
    from concurrent.futures import ThreadPoolExecutor

    router = lambda _request: Reply.generating(ENTITIES, per_token=0.01)  # noqa: E731 - about 0.35 s a reply
    with ScriptedOpenAIServer(router=router, slots=1) as srv:
        client = OpenAIClient(local_llm_config(srv, concurrency=3, timeout=0.2, max_retries=4, cache=False))
        contexts = [{**CONTEXT, "session_id": f"s{i}"} for i in range(5)]
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda c: client.complete_json(PROMPTS["extract_entities"], c), contexts))
        assert all(r.entities[0].name == "Caroline" for r in results)
        usage = client.usage.total()
        assert usage.failures == 0 and usage.calls == 5
        # it really queued (one waiting at least: on a loaded machine the third thread may start only after the
        # first reply, so two waiting at once is not guaranteed; a CI run saw peak_waiting == 1)
        assert srv.peak_active == 1 and srv.peak_waiting >= 1
        assert client.limit.decreases >= 1 and client.limit.limit < 3
        # Retries are the queued requests that timed out before the limit came down, not a thrash.
        assert usage.requests == 5 + usage.retries and usage.retries <= 4


def test_adaptive_limit_halves_on_overload_and_climbs_back_bounded():
    from gravity_engine.llm.endpoints import AdaptiveLimit

    limit = AdaptiveLimit(4)
    with limit.slot(), limit.slot(), limit.slot():
        pass
    limit.in_flight = 4  # three others still out when the fourth times out (still in its slot)
    limit.overloaded()
    assert (limit.limit, limit.ceiling) == (2, 3)
    limit.in_flight = 1
    limit.overloaded()
    assert (limit.limit, limit.ceiling, limit.decreases) == (1, 1, 2)  # it failed alone: one at a time
    for _ in range(AdaptiveLimit.PROBE_ROUNDS - 1):
        limit.succeeded()
    assert limit.limit == 1  # at the ceiling it waits many rounds before probing higher
    limit.succeeded()
    assert limit.limit == 2
    for _ in range(10_000):
        limit.succeeded()
    assert limit.limit == 4  # never above the configured concurrency


def test_usage_counts_every_attempt_and_the_summary_never_says_zero_calls(server):
    server.push(*[Reply.error(500, "boom")] * 15)
    client = make(server, max_retries=4)
    for session in range(3):
        with pytest.raises(LLMError):
            client.complete_json(PROMPTS["extract_entities"], {**CONTEXT, "session_id": f"s{session}"})
    total = client.usage.total()
    assert (total.requests, total.failures, total.retries, total.calls) == (15, 3, 12, 0)
    assert total.summary().startswith("15 requests for 3 calls (0 answered, 3 failed, 12 retries)")


def test_a_bad_setting_names_the_setting_not_a_missing_endpoint(monkeypatch):
    for var in ("GRAVITY_LLM_BASE_URL", "GRAVITY_LLM_API_KEY", "OPENAI_API_KEY", "GRAVITY_LLM_GGUF"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAVITY_LLM_TEMPERATURE", "abc")
    with pytest.raises(ConfigError) as err:
        LLMConfig.from_env()
    assert "GRAVITY_LLM_TEMPERATURE='abc' is not a number" in str(err.value) and "no LLM endpoint" not in str(err.value)
    monkeypatch.setenv("GRAVITY_LLM_TEMPERATURE", "0.2")
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("GRAVITY_LLM_JSON_MODE", "json_object")
    monkeypatch.setenv("GRAVITY_LLM_STREAM", "off")
    config = LLMConfig.from_env()
    assert (config.temperature, config.json_mode, config.stream) == (0.2, "json_object", False)
    monkeypatch.setenv("GRAVITY_LLM_JSON_MODE", "yaml")
    with pytest.raises(ConfigError, match="invalid LLM setting json_mode='yaml'"):
        LLMConfig.from_env()
    monkeypatch.setenv("GRAVITY_LLM_JSON_MODE", "auto")
    monkeypatch.setenv("GRAVITY_LLM_STREAM", "maybe")
    with pytest.raises(ConfigError, match="GRAVITY_LLM_STREAM='maybe' is not a yes/no value"):
        LLMConfig.from_env()


def test_settings_page_values_are_validated_and_named(monkeypatch):
    from gravity_engine.llm.settings import PRESETS, config_from_settings, masked_key

    for var in ("GRAVITY_LLM_BASE_URL", "GRAVITY_LLM_API_KEY", "OPENAI_API_KEY", "GRAVITY_LLM_GGUF"):
        monkeypatch.delenv(var, raising=False)
    assert config_from_settings({"model": "gpt-4o-mini"}) is None  # nothing configured: offline
    with pytest.raises(ConfigError, match=r"Settings › Temperature: 'abc' is not a number"):
        config_from_settings({"temperature": "abc"})
    with pytest.raises(ConfigError, match=r"Settings › Concurrency: 0: Input should be greater than or equal to 1"):
        config_from_settings({"base_url": "http://127.0.0.1:8080/v1", "concurrency": 0})
    with pytest.raises(ConfigError, match=r"Settings › Base URL: 'localhost:8080' is not an http\(s\) URL"):
        config_from_settings({"base_url": "localhost:8080"})
    with pytest.raises(ConfigError, match="the OpenAI preset needs a key"):
        config_from_settings({"preset": "OpenAI"})
    ollama = config_from_settings({"preset": "Ollama", "model": "llama3.1:8b", "timeout": "300"})
    assert (ollama.base_url, ollama.concurrency, ollama.timeout) == (PRESETS["Ollama"].base_url, 1, 300.0)
    llama = config_from_settings({"preset": "llama.cpp", "base_url": "http://127.0.0.1:8000/v1", "json_mode": "json_object"})
    assert (llama.base_url, llama.json_mode) == ("http://127.0.0.1:8000/v1", "json_object")
    assert set(PRESETS) == {"OpenAI", "Ollama", "LM Studio", "vLLM", "llama.cpp"}
    secret = "sk-proj-0123456789abcdefWXYZ"
    assert masked_key(secret) == "sk-…WXYZ" and secret not in masked_key(secret) and masked_key("short") == "set (hidden)"


def test_cli_llm_options_reach_the_requests(tmp_path, scripted_openai, monkeypatch, fake_embedder):
    from typer.testing import CliRunner

    from gravity_engine.cli import app

    for var in ("GRAVITY_LLM_JSON_MODE", "GRAVITY_LLM_CONCURRENCY", "GRAVITY_LLM_TIMEOUT", "GRAVITY_LLM_GGUF"):
        monkeypatch.delenv(var, raising=False)  # the options set them for the process; conftest restores them
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", scripted_openai.base_url)
    monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
    monkeypatch.setattr("gravity_engine.build.pipeline.get_embedder", lambda name="": fake_embedder)
    conv = tmp_path / "c.jsonl"
    conv.write_text("\n".join(json.dumps({"id": f"S1:{i}", "session": "s1", "timestamp": "2024-05-14 18:30",
                                          "speaker": "Ana", "text": f"I painted a sunrise last week, part {i}."})
                              for i in range(1, 4)) + "\n")
    result = CliRunner().invoke(app, ["--llm-json-mode", "json_object", "--llm-concurrency", "2", "--llm-timeout", "30",
                                      "build", str(conv), "--backend", "llm", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert [r["response_format"] for r in scripted_openai.chat_requests()] == [{"type": "json_object"}]
    bad = CliRunner().invoke(app, ["--llm-timeout", "-1", "build", str(conv), "--backend", "llm", "--out", str(tmp_path / "t")])
    assert bad.exit_code == 2 and "--llm-timeout -1.0: Input should be greater than 0" in bad.output


def test_grammar_schema_is_bounded_so_a_reply_always_fits(server):
    """json_object_schema: llama.cpp decodes by the schema; bounds keep its longest reply under max_tokens,
    so a small model that fills every array cannot be cut off mid-JSON."""
    from gravity_engine.llm.client import GRAMMAR_MAX_ITEMS, GRAMMAR_MAX_LENGTH, _longest, bounded_schema

    schema = PROMPTS["extract_fused"].json_schema()
    loose = bounded_schema(schema)
    entities = loose["properties"]["entities"]
    assert entities["maxItems"] == GRAMMAR_MAX_ITEMS[0]
    assert entities["items"]["properties"]["aliases"]["maxItems"] == GRAMMAR_MAX_ITEMS[1]
    assert entities["items"]["properties"]["name"]["maxLength"] == GRAMMAR_MAX_LENGTH
    assert "maxLength" not in loose["properties"]["events"]["items"]["properties"]["granularity"]  # an enum
    assert schema == PROMPTS["extract_fused"].json_schema()  # the prompt's own schema is untouched
    for max_tokens in (4096, 1024, 768):
        assert _longest(bounded_schema(schema, max_tokens)) <= 2.4 * max_tokens
    server.push(ENTITIES)
    make(server, json_mode="json_object_schema", max_tokens=1000).complete_json(PROMPTS["extract_entities"], CONTEXT)
    fmt = server.chat_requests()[0]["response_format"]
    assert fmt["type"] == "json_object" and _longest(fmt["schema"]) <= 2400


def test_a_raw_control_character_inside_a_string_is_accepted():
    from gravity_engine.llm.client import parse_json_reply

    reply = parse_json_reply('{"entities": [{"name": "Caro\tline", "type": "person\n", "source_ids": []}]}',
                             PROMPTS["extract_entities"].response_model)
    assert reply.entities[0].name == "Caro\tline"

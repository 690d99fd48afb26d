"""The scripted OpenAI-compatible server itself: routes, scripting, recording, usage, echo extraction."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from gravity_engine.prompts import PROMPTS
from gravity_engine.testing.openai_server import Reply, ScriptedOpenAIServer, approx_tokens, echo_extraction_router


def post(srv: ScriptedOpenAIServer, body: dict, key: str | None = None) -> tuple[int, dict, dict]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(srv.base_url + "/chat/completions", json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


CTX = {"session_id": "s1", "session_time": "2023-05-08T13:56", "speakers": ["Ana", "Ben"], "utterances": [
    {"id": "D1:1", "speaker": "Ana", "text": "I visited Lisbon last week with Carla."},
    {"id": "D1:2", "speaker": "Ben", "text": "Nice. How was the food?"},
]}


def test_queue_then_router_then_clear_error():
    with ScriptedOpenAIServer(replies=["first", {"a": 1}], router=lambda req: "routed") as srv:
        contents = [post(srv, {"model": "m", "messages": [{"role": "user", "content": "hi there"}]})[1]
                    ["choices"][0]["message"]["content"] for _ in range(3)]
        assert contents == ["first", '{"a": 1}', "routed"]
        assert [r["json"]["messages"][0]["content"] for r in srv.requests] == ["hi there"] * 3
    with ScriptedOpenAIServer() as srv:
        status, body, _ = post(srv, {"model": "m", "messages": []})
        assert status == 500 and "no reply left" in body["error"]["message"] and srv.errors


def test_completion_shape_and_usage():
    with ScriptedOpenAIServer(replies=["two words"]) as srv:
        status, body, _ = post(srv, {"model": "gpt-x", "messages": [{"role": "user", "content": "one two, three"}]})
    assert status == 200 and body["object"] == "chat.completion" and body["model"] == "gpt-x"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
    assert approx_tokens("don't stop") == 4


def test_error_replies_carry_status_and_retry_after():
    with ScriptedOpenAIServer(replies=[Reply.error(429, "slow", retry_after=2), Reply.truncated({"k": "v" * 20})]) as srv:
        status, body, headers = post(srv, {"model": "m", "messages": []})
        assert status == 429 and headers["Retry-After"] == "2" and body["error"]["message"] == "slow"
        _, body, _ = post(srv, {"model": "m", "messages": []})
        choice = body["choices"][0]
        assert choice["finish_reason"] == "length"
        with pytest.raises(json.JSONDecodeError):
            json.loads(choice["message"]["content"])


def test_api_key_check_and_models_route():
    with ScriptedOpenAIServer(replies=["ok"], api_key="sk-right", models=["m1"]) as srv:
        assert post(srv, {"model": "m", "messages": []}, key="sk-wrong")[0] == 401
        assert post(srv, {"model": "m", "messages": []}, key="sk-right")[0] == 200
        with urllib.request.urlopen(urllib.request.Request(srv.base_url + "/models",
                                                           headers={"Authorization": "Bearer sk-right"})) as resp:
            assert [m["id"] for m in json.loads(resp.read())["data"]] == ["m1"]
        assert [r["authorized"] for r in srv.requests] == [False, True, True]
        assert "sk-right" not in json.dumps(srv.requests)


@pytest.mark.parametrize("name", ["extract_fused", "extract_entities", "extract_events", "extract_topics", "judge"])
def test_echo_router_replies_validate_against_each_prompt_schema(name):
    prompt = PROMPTS[name]
    context = CTX if name != "judge" else {"question": "q", "gold": "g", "answer": "a"}
    request = {"model": "m", "messages": prompt.render(context),
               "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": prompt.json_schema()}}}
    reply = prompt.response_model.model_validate(echo_extraction_router(request))
    if name in ("extract_fused", "extract_entities"):
        assert {"Ana", "Ben", "Lisbon", "Carla"} <= {e.name for e in reply.entities}
    if name in ("extract_fused", "extract_events"):
        (event,) = reply.events
        assert event.when_text == "last week" and event.source_ids == ["D1:1"] and event.date_start is None
    if name in ("extract_fused", "extract_topics"):
        assert reply.topics[0].source_ids == ["D1:1", "D1:2"]


def test_echo_router_finds_the_schema_name_in_json_object_mode():
    messages = PROMPTS["extract_events"].render(CTX)
    messages[0]["content"] += "\n\nAnswer with one JSON object ... JSON schema (name: extract_events):\n{}"
    assert set(echo_extraction_router({"messages": messages, "response_format": {"type": "json_object"}})) == {"events"}
    text = echo_extraction_router({"messages": PROMPTS["summarize_batch"].render(CTX)})
    assert isinstance(text, str) and "Ana said" in text


def test_fake_llm_client_reuses_the_real_machinery(allow_local_llm):
    from gravity_engine.llm.transport import TransientError
    from gravity_engine.testing.fake_llm import FakeLLMClient

    fake = FakeLLMClient([TransientError("HTTP 429"), "not json", {"label": "CORRECT"}])
    verdict = fake.complete_json(PROMPTS["judge"], {"question": "q", "gold": "g", "answer": "g"})
    assert verdict.label == "CORRECT" and len(fake.history) == 3
    usage = fake.usage.by_prompt()["judge"]
    assert (usage.retries, usage.repairs, usage.calls) == (1, 1, 2)
    router_fake = FakeLLMClient(router=echo_extraction_router)
    assert router_fake.complete_json(PROMPTS["extract_events"], CTX).events[0].when_text == "last week"

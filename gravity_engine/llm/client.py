"""LLM clients: the base class owns retries, structured output, validation, repair, cache and usage;
a concrete client (``OpenAIClient``) only sends one request and translates its library's errors.
"""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from ..errors import LLMError
from ..prompts.base import PromptTemplate
from . import endpoints
from .cache import ResponseCache, cache_key
from .config import LLMConfig
from .endpoints import JSON_MODES
from .guard import check_model_request
from .local_server import crash_report
from .tokens import count_tokens
from .transport import (BadRequestError, ChatRequest, ChatResponse, FatalError, FormatRejected, SendError,
                        StreamRejected, TransientError)
from .usage import PromptUsage, UsageMeter

log = logging.getLogger("gravity_engine.llm")

# Structured-output modes are tried strongest first (``endpoints.JSON_MODES``). An endpoint that
# rejects one gets the next, remembered per endpoint so later calls do not pay for the rejection again.
_MAX_ECHOED_REPLY = 6000  # chars of an invalid reply sent back in the repair round
# An error that names the structured-output machinery is a rejected format whatever its status code:
# llama-cpp-python says "Input should be 'text' or 'json_object'" with HTTP 500.
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output|'text' or", re.I)


# A server that does not stream says so naming the parameter ("'stream' is not supported", "stream_options:
# extra fields not permitted"); "upstream" and the like do not match.
_STREAM_WORDS = re.compile(r"\bstream(?:_options|ing)?\b", re.I)
_STREAM_REJECTION_STATUS = (400, 422, 500, 501)


def is_format_rejection(message: str) -> bool:
    return bool(_FORMAT_WORDS.search(message or ""))


def is_stream_rejection(message: str, status: int | None) -> bool:
    return status in _STREAM_REJECTION_STATUS and bool(_STREAM_WORDS.search(message or ""))


@dataclass
class ConnectionCheck:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)


class InvalidReply(ValueError):
    """A reply that is not JSON, or not JSON of the expected shape."""


def parse_json_reply(content: str, model: type[BaseModel], finish_reason: str = "stop") -> BaseModel:
    """Clean a reply (code fences, prose around the object), parse it and validate it against ``model``."""
    text = content.strip()
    fence = re.match(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", text, re.S)
    if fence:
        text = fence.group(1).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start >= 0 and end > start:
            text = text[start:end + 1]
    try:
        data = json.loads(text, strict=False)  # a raw newline or tab inside a string (llama.cpp grammars allow them)
    except json.JSONDecodeError as err:
        cut = " (the reply was cut off at the token limit)" if finish_reason == "length" else ""
        raise InvalidReply(f"not valid JSON{cut}: {err.msg} at line {err.lineno} column {err.colno}") from None
    if not isinstance(data, dict):
        raise InvalidReply(f"expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in err.errors()[:5])
        raise InvalidReply(f"JSON does not match the schema: {problems}") from None


# Grammar-constrained decoding follows the schema token by token: an array or string without a bound
# lets a small model repeat itself until the token limit, and a reply cut there is not JSON. So the
# grammar's schema gets bounds tight enough that its longest possible reply fits in max_tokens.
GRAMMAR_BOUNDS = (  # (top-level maxItems, nested maxItems, string maxLength), most generous first
    (10, 4, 200), (8, 3, 160), (8, 3, 120), (6, 2, 100), (6, 2, 80), (4, 2, 64), (4, 1, 48), (3, 1, 40),
    (2, 1, 32), (2, 1, 24), (1, 1, 24), (1, 1, 16))
GRAMMAR_MAX_ITEMS = GRAMMAR_BOUNDS[0][:2]
GRAMMAR_MAX_LENGTH = GRAMMAR_BOUNDS[0][2]
_CHARS_PER_TOKEN = 2.4  # JSON from small models: ~3 characters a token, with a margin


def _bound(schema: Any, bounds: tuple[int, int, int], depth: int = 0) -> Any:
    if isinstance(schema, list):
        return [_bound(s, bounds, depth) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bound(v, bounds, depth + (k == "items")) for k, v in schema.items()}
    if out.get("type") == "array":
        out["maxItems"] = min(out.get("maxItems", 10**9), bounds[0] if depth == 0 else bounds[1])
    if out.get("type") == "string" and "enum" not in out:
        out["maxLength"] = min(out.get("maxLength", 10**9), bounds[2])
    return out


def _longest(schema: Any) -> int:
    """Characters of the longest JSON value ``schema`` allows (compact separators)."""
    if not isinstance(schema, dict):
        return 4
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return max(_longest(o) for o in options)
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return 2 + sum(len(k) + 4 + _longest(v) for k, v in props.items())
    if kind == "array":
        return 2 + schema.get("maxItems", 50) * (_longest(schema.get("items", {})) + 1)
    if kind == "string":
        return schema.get("maxLength", 500) + 2
    return 12  # numbers, booleans, null


def bounded_schema(schema: Any, max_tokens: int | None = None) -> Any:
    """``schema`` with ``maxItems`` on arrays and ``maxLength`` on strings, the loosest of
    ``GRAMMAR_BOUNDS`` whose longest reply fits in ``max_tokens`` (the tightest if none does)."""
    budget = max_tokens * _CHARS_PER_TOKEN if max_tokens else None
    for bounds in GRAMMAR_BOUNDS:
        out = _bound(schema, bounds)
        if budget is None or _longest(out) <= budget:
            return out
    return out


def _schema_instruction(prompt_name: str, schema: dict) -> str:
    return ("Answer with one JSON object only (no prose, no code fences) that follows this JSON schema "
            f"(name: {prompt_name}):\n" + json.dumps(schema, separators=(",", ":")))


class LLMClient:
    """Base class. Subclasses implement ``_send`` (and ``_list_models`` for ``test_connection``)."""

    def __init__(self, config: LLMConfig, *, cache: ResponseCache | bool | None = None, sleep=time.sleep):
        self.config = config
        self.usage = UsageMeter()
        self._sleep = sleep
        self._mode_lock = threading.Lock()
        self.limit = endpoints.limit_for(config.base_url, config.concurrency, auto=config.concurrency_is_auto)
        if cache is None:
            cache = config.cache
        if cache is True:
            self.cache: ResponseCache | None = ResponseCache(config.cache_dir)
        else:
            self.cache = cache if isinstance(cache, ResponseCache) else None

    @property
    def json_mode(self) -> str:
        """The structured-output mode the next call starts with: the configured one, or a weaker one
        this endpoint has shown it needs."""
        first = JSON_MODES[0] if self.config.json_mode == "auto" else self.config.json_mode
        known = endpoints.remembered_mode(self.config.base_url, self.config.model) or first
        return max(first, known, key=JSON_MODES.index)

    def _set_json_mode(self, mode: str) -> None:
        endpoints.remember_mode(self.config.base_url, self.config.model, mode)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.config.model!r}, base_url={self.config.endpoint_label()!r})"

    # --- what a concrete client implements -------------------------------------------------------
    def _send(self, request: ChatRequest) -> ChatResponse:
        """Send one request, no retries; raise TransientError / BadRequestError / FatalError on failure."""
        raise NotImplementedError

    def _list_models(self) -> list[str]:
        raise NotImplementedError

    def _server_slots(self) -> int | None:
        """How many requests the server generates at once, if it says (llama.cpp's ``/props``)."""
        return None

    # --- public entry points ----------------------------------------------------------------------
    def complete_json(self, prompt: PromptTemplate, context: dict[str, Any]) -> BaseModel:
        """Render ``prompt`` with ``context``, get a schema-valid reply (cached), return the validated model."""
        return self.complete_json_with_info(prompt, context)[0]

    def complete_json_with_info(self, prompt: PromptTemplate, context: dict[str, Any]) -> tuple[BaseModel, PromptUsage]:
        """Like ``complete_json``, plus this call's own usage (for per-batch counts under concurrency)."""
        if prompt.response_model is None:
            raise TypeError(f"prompt {prompt.name!r} has no response model: use complete_text")
        messages = prompt.render(context)
        schema = prompt.json_schema()
        delta = PromptUsage()
        started = time.perf_counter()
        try:
            key = cache_key(prompt=prompt.id, model=self.config.model, messages=messages, schema=schema,
                            temperature=self.config.temperature, max_tokens=self.config.max_tokens)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                try:
                    result = prompt.response_model.model_validate_json(cached[0])
                    delta.cache_hits += 1
                    return result, delta
                except ValidationError:
                    log.warning("%s: ignoring a cached reply that no longer validates", prompt.name)
            result = self._structured(prompt, messages, schema, delta)
            if self.cache is not None:
                self.cache.put(key, prompt=prompt.id, model=self.config.model, content=result.model_dump_json(),
                               usage={"prompt_tokens": delta.prompt_tokens, "completion_tokens": delta.completion_tokens})
            return result, delta
        except Exception:
            delta.failures += 1
            raise
        finally:
            delta.wall_time_s = time.perf_counter() - started
            self.usage.record(prompt.name, delta)

    def complete_text(self, prompt: PromptTemplate, context: dict[str, Any], *, max_tokens: int | None = None) -> str:
        """A free-text reply to a template without response model (summaries, answers)."""
        return self.chat(prompt.render(context), prompt.name, prompt_version=prompt.version, max_tokens=max_tokens)

    def chat(self, messages: list[dict[str, Any]], prompt_name: str = "chat", *, prompt_version: str = "",
             max_tokens: int | None = None) -> str:
        """A plain free-text completion of ``messages``, cached and counted under ``prompt_name``."""
        delta = PromptUsage()
        started = time.perf_counter()
        try:
            limit = max_tokens or self.config.max_tokens
            key = cache_key(prompt=f"{prompt_name}@{prompt_version}", model=self.config.model, messages=messages,
                            schema=None, temperature=self.config.temperature, max_tokens=limit)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                delta.cache_hits += 1
                return cached[0]
            request = ChatRequest(model=self.config.model, messages=messages, temperature=self.config.temperature,
                                  max_tokens=limit)
            try:
                reply = self._send_with_retries(request, prompt_name, delta)
            except BadRequestError as err:
                raise LLMError(f"{prompt_name}: the endpoint rejected the request (HTTP {err.status}): {err.message}") from None
            delta.calls += 1
            if reply.finish_reason == "length":
                # Cut off at the token limit: return it, but a rerun should ask again rather than reuse a stub.
                log.warning("%s: reply cut off at the token limit (%s); not cached", prompt_name, limit)
            elif self.cache is not None:
                self.cache.put(key, prompt=f"{prompt_name}@{prompt_version}", model=self.config.model,
                               content=reply.content, usage={"prompt_tokens": reply.prompt_tokens,
                                                             "completion_tokens": reply.completion_tokens})
            return reply.content
        except Exception:
            delta.failures += 1
            raise
        finally:
            delta.wall_time_s = time.perf_counter() - started
            self.usage.record(prompt_name, delta)

    def test_connection(self) -> ConnectionCheck:
        """Reach the endpoint once (model list, else a one-token chat) and say plainly what works."""
        where = self.config.endpoint_label()
        try:
            check_model_request(self.config.base_url)
        except Exception as err:
            return ConnectionCheck(False, str(err))
        models: list[str] = []
        try:
            models = self._list_models()
            if self.config.model in models:
                return ConnectionCheck(True, f"connected to {where}; model {self.config.model!r} is available", models)
        except (SendError, NotImplementedError):
            pass  # many servers (Azure deployments, some proxies) have no model list: try a chat instead
        probe = ChatRequest(model=self.config.model, messages=[{"role": "user", "content": "Reply with OK."}],
                            temperature=0.0, max_tokens=1)
        try:
            try:
                self._send(probe)
            except StreamRejected:
                endpoints.remember_no_stream(self.config.base_url)
                self._send(probe)
        except SendError as err:
            return ConnectionCheck(False, f"cannot use model {self.config.model!r} at {where}: {err.message}", models)
        return ConnectionCheck(True, f"connected to {where}; model {self.config.model!r} answered", models)

    def usage_report(self) -> dict[str, Any]:
        """Per-prompt counters and their total, as plain dicts for a build report."""
        return {"by_prompt": {k: v.model_dump() for k, v in self.usage.by_prompt().items()},
                "total": self.usage.total().model_dump()}

    # --- machinery --------------------------------------------------------------------------------
    def _structured(self, prompt: PromptTemplate, messages: list[dict], schema: dict, delta: PromptUsage) -> BaseModel:
        reply = self._request_json(prompt.name, messages, schema, delta)
        try:
            return parse_json_reply(reply.content, prompt.response_model, reply.finish_reason)
        except InvalidReply as err:
            first_error = err
        # One repair round: show the model its reply and what is wrong with it.
        delta.repairs += 1
        log.warning("%s: invalid reply (%s); asking once for corrected JSON", prompt.name, first_error)
        advice = " Keep it shorter so that it fits." if reply.finish_reason == "length" else ""
        repair = messages + [
            {"role": "assistant", "content": reply.content[:_MAX_ECHOED_REPLY]},
            {"role": "user", "content": f"Your reply was invalid: {first_error}. Reply again with only the corrected, "
                                        f"complete JSON object.{advice}"},
        ]
        reply = self._request_json(prompt.name, repair, schema, delta)
        try:
            return parse_json_reply(reply.content, prompt.response_model, reply.finish_reason)
        except InvalidReply as err:
            raise LLMError(f"{prompt.name}: the model's reply is still invalid after one repair round: {err}") from None

    def _request_json(self, prompt_name: str, messages: list[dict], schema: dict, delta: PromptUsage) -> ChatResponse:
        start_mode = self.json_mode
        mode = start_mode

        def request() -> ChatRequest:
            # Built once the request has its slot: the calls that waited for one while the first was refused
            # its format start with the mode that one learned, instead of each paying for the refusal.
            nonlocal mode
            mode = max(mode, self.json_mode, key=JSON_MODES.index)
            return ChatRequest(model=self.config.model,
                               messages=self._messages_for_mode(mode, messages, prompt_name, schema),
                               temperature=self.config.temperature, max_tokens=self.config.max_tokens,
                               response_format=self._response_format(mode, prompt_name, schema, self.config.max_tokens))

        while True:
            try:
                reply = self._send_with_retries(request, prompt_name, delta)
                delta.calls += 1
                return reply
            except BadRequestError as err:
                index = JSON_MODES.index(mode)
                if index + 1 >= len(JSON_MODES):
                    # Rejected even without response_format: the format was not the problem after all.
                    with self._mode_lock:
                        self._set_json_mode(start_mode)
                    raise LLMError(f"{prompt_name}: the endpoint rejected the request (HTTP {err.status}): {err.message}") from None
                delta.format_fallbacks += 1
                with self._mode_lock:
                    mode = max(JSON_MODES[index + 1], self.json_mode, key=JSON_MODES.index)
                    self._set_json_mode(mode)
                log.info("%s: %s rejected response_format %s (HTTP %s: %s); using %s from now on",
                         prompt_name, self.config.endpoint_label(), JSON_MODES[index], err.status,
                         err.message[:200], mode)

    @staticmethod
    def _response_format(mode: str, prompt_name: str, schema: dict, max_tokens: int | None = None) -> dict | None:
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": prompt_name, "strict": True, "schema": schema}}
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": bounded_schema(schema, max_tokens)}
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    @staticmethod
    def _messages_for_mode(mode: str, messages: list[dict], prompt_name: str, schema: dict) -> list[dict]:
        if mode == "json_schema":
            return messages
        # Without an enforced schema the model must read it (json_object mode also requires the word JSON).
        instruction = _schema_instruction(prompt_name, schema)
        out = [dict(m) for m in messages]
        if out and out[0].get("role") == "system":
            out[0]["content"] = f"{out[0]['content']}\n\n{instruction}"
        else:
            out.insert(0, {"role": "system", "content": instruction})
        return out

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.backoff_max)
        base = min(self.config.backoff_base * (2 ** attempt), self.config.backoff_max)
        return base * (0.5 + random.random() / 2)  # jitter: parallel workers should not retry in lockstep

    def _send_with_retries(self, request: ChatRequest | Callable[[], ChatRequest], prompt_name: str,
                           delta: PromptUsage) -> ChatResponse:
        """Send ``request`` (or the one ``request()`` builds, once it has a slot), retrying transient failures."""
        check_model_request(self.config.base_url)
        self.limit.start_once(self._server_slots)
        attempts = self.config.max_retries + 1
        attempt = 0
        unstreamed = False
        while True:
            delta.requests += 1
            try:
                with self.limit.slot():
                    try:
                        reply = self._send(request() if callable(request) else request)
                    except TransientError as err:
                        if err.overload:  # inside the slot: no waiting request takes the freed place first
                            self.limit.overloaded()
                        raise
            except StreamRejected as err:
                if unstreamed:  # asked without stream and still refused: stream was not the problem
                    raise LLMError(f"{prompt_name}: the endpoint rejected the request (HTTP {err.status}): "
                                   f"{err.message}") from None
                unstreamed = True
                endpoints.remember_no_stream(self.config.base_url)  # other calls in flight may learn it too
                delta.stream_fallbacks += 1
                log.info("%s: %s rejected stream (HTTP %s: %s); asking without streaming from now on", prompt_name,
                         self.config.endpoint_label(), err.status, err.message[:200])
                continue  # the same request unstreamed, at once: not a retry
            except TransientError as err:
                delta.timeouts += int(err.timeout)
                delta.busy += int(err.busy)
                crash = _local_server_crash(self.config.base_url)
                if crash:
                    raise LLMError(f"{prompt_name}: {crash}") from None
                attempt += 1
                if attempt >= attempts:
                    raise LLMError(f"{prompt_name}: {err.message}; gave up after {attempts} attempts "
                                   f"to {self.config.endpoint_label()}") from None
                wait = self._backoff(attempt - 1, err.retry_after)
                delta.retries += 1
                log.warning("%s: %s; retry %d/%d in %.2f s (at most %d requests in flight now)", prompt_name,
                            err.message, attempt, self.config.max_retries, wait, self.limit.limit)
                self._sleep(wait)
                continue
            except FatalError as err:
                raise LLMError(f"{prompt_name}: {err.message} ({self.config.endpoint_label()})") from None
            self.limit.succeeded()
            delta.prompt_tokens += reply.prompt_tokens
            delta.completion_tokens += reply.completion_tokens
            return reply


def _local_server_crash(base_url: str) -> str | None:
    """What happened to the local model server at ``base_url`` if this process started it and it died: a
    crash then reads as one clear message instead of retries of "connection refused"."""
    return crash_report(base_url)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if present."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class OpenAIClient(LLMClient):
    """Any OpenAI-compatible endpoint through the ``openai`` package (its own retries off: ours apply).

    Replies are streamed, so the timeout is the longest wait for the next token rather than for the
    whole reply (httpx applies its read timeout to every read of the stream).
    """

    def __init__(self, config: LLMConfig | None = None, **kwargs):
        import openai

        config = config or LLMConfig.from_env()
        super().__init__(config, **kwargs)
        self._openai_module = openai
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key.get_secret_value(),
                                     max_retries=0, timeout=config.timeout)

    def _scrub(self, text: str) -> str:
        key = self.config.api_key.get_secret_value()
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def _translate(self, err: Exception, request: ChatRequest | None = None, streaming: bool = False) -> SendError:
        openai = self._openai_module
        if isinstance(err, openai.APITimeoutError):
            return TransientError(f"timed out: no token for {self.config.timeout:g} s", timeout=True)
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err
            return TransientError(self._scrub(f"connection failed: {type(cause).__name__}: {cause}"))
        if isinstance(err, (openai.APIStatusError, openai.APIError)):
            status = getattr(err, "status_code", None)
            message = self._scrub(_error_message(err))
            if request is not None and request.response_format is not None and is_format_rejection(message):
                return FormatRejected(message, status=status)
            if streaming and is_stream_rejection(message, status):
                return StreamRejected(message, status=status)
            if status is None:  # an error event inside a stream: the server failed this reply
                return TransientError(f"the endpoint failed while answering: {message}")
            if status in (408, 409, 429) or status >= 500:
                return TransientError(f"HTTP {status}: {message}", status=status, overload=status == 429,
                                      retry_after=parse_retry_after(err.response.headers))
            if status in (401, 403):
                return FatalError(f"the endpoint refused the API key (HTTP {status}): {message}", status=status)
            if status == 404:
                return FatalError(f"model {self.config.model!r} or endpoint not found (HTTP 404): {message}", status=status)
            if status in (400, 413, 422):
                return BadRequestError(message, status=status)
            return FatalError(f"HTTP {status}: {message}", status=status)
        return FatalError(self._scrub(f"{type(err).__name__}: {err}"))

    def _send(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {"model": request.model, "messages": request.messages,
                                  "temperature": request.temperature}
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        streaming = self.config.stream and endpoints.streams(self.config.base_url)
        try:
            if streaming:
                return self._send_streamed(kwargs)
            completion = self._client.chat.completions.create(**kwargs)
        except self._openai_module.OpenAIError as err:
            raise self._translate(err, request, streaming) from None
        if not completion.choices:
            raise TransientError("the endpoint returned no choices")
        choice = completion.choices[0]
        usage = completion.usage
        return ChatResponse(content=choice.message.content or "", finish_reason=choice.finish_reason or "stop",
                            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0))

    def _send_streamed(self, kwargs: dict[str, Any]) -> ChatResponse:
        parts: list[str] = []
        finish_reason = None
        usage = None
        pieces = 0
        started = time.monotonic()
        deadline = self.limit.stall_deadline(self.config.stall_timeout)
        with self._client.chat.completions.create(**kwargs, stream=True,
                                                  stream_options={"include_usage": True}) as stream:
            kind = stream.response.headers.get("content-type", "")
            if "event-stream" not in kind and "json" in kind:
                # A server (or a proxy in front of it) that ignores stream answers with the whole completion.
                return _reply_from_json(stream.response.read(), self._scrub)
            ticket = self.limit.current_ticket()  # taken in this thread: the watch runs in its own
            watch = _FirstTokenWatch(stream.response, deadline, lambda: self.limit.older_in_flight(ticket))
            try:
                for chunk in stream:
                    if getattr(chunk, "usage", None):
                        usage = chunk.usage
                    for choice in chunk.choices or ():
                        if choice.index not in (0, None):
                            continue
                        text = getattr(choice.delta, "content", None) if choice.delta is not None else None
                        if text:
                            parts.append(text)
                            pieces += 1
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
                    if (parts or finish_reason) and not watch.done:
                        watch.stop()
                        self.limit.record_first_token(time.monotonic() - started)
            except Exception as err:
                if not watch.fired:
                    raise
                log.debug("stream abandoned after a stall: %s", err)
            finally:
                watch.stop()
        if watch.fired:
            raise TransientError(f"no first token within {deadline:g} s while {watch.others} older request(s) to "
                                 "the endpoint were in flight: queued behind them", busy=True)
        if finish_reason is None:
            # llama-cpp-python ends a stream this way when another request waits for the model.
            what = "before its reply was complete" if parts else "without a reply"
            raise TransientError(f"the endpoint closed the stream {what} (a busy server)", busy=True)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        if usage is None:  # a server that reports no usage in streams (llama-cpp-python): our own counts
            prompt_tokens = sum(count_tokens(str(m.get("content") or "")) for m in kwargs["messages"])
        # One streamed piece is about one token.
        return ChatResponse(content="".join(parts), finish_reason=finish_reason, prompt_tokens=prompt_tokens,
                            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0) or pieces)

    def _server_slots(self) -> int | None:
        import httpx  # the openai package's own HTTP library

        check_model_request(self.config.base_url)
        root = re.sub(r"/v1/?$", "", self.config.base_url.rstrip("/"))
        key = self.config.api_key.get_secret_value()
        try:
            resp = httpx.get(f"{root}/props", headers={"Authorization": f"Bearer {key}"}, timeout=5.0)
            slots = resp.json().get("total_slots") if resp.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return slots if isinstance(slots, int) and slots > 0 else None

    def _list_models(self) -> list[str]:
        check_model_request(self.config.base_url)
        try:
            return [m.id for m in self._client.models.list()]
        except self._openai_module.OpenAIError as err:
            raise self._translate(err) from None


class _FirstTokenWatch:
    """Abandons a stream that has no first token ``deadline`` seconds after it was sent while requests to the
    endpoint that were sent before it are still in flight: it is queued behind them (llama-cpp-python answers
    200 at once and holds the stream, pinging, until the model is free; the pings keep the read timeout from
    ever firing). The oldest request in flight is the one being served: a slow first token there is a long
    prompt being read on a busy CPU, and only the timeout applies."""

    POLL_S = 0.1

    def __init__(self, response: Any, deadline: float, older_in_flight):
        self.fired = False
        self.others = 0
        self._response = response
        self._deadline = deadline
        self._older_in_flight = older_in_flight
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="first-token-watch", daemon=True).start()

    @property
    def done(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        if self._stop.wait(self._deadline):
            return
        while not self._stop.is_set():
            self.others = self._older_in_flight()
            if self.others:
                self.fired = True
                self._cut()
                return
            self._stop.wait(self.POLL_S)

    def _cut(self) -> None:
        # Shutting the socket down wakes the read blocked on it; closing the response alone may not.
        network = self._response.extensions.get("network_stream")
        sock = network.get_extra_info("socket") if network is not None else None
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:
                self._response.close()
        except Exception:  # noqa: BLE001 - already closed: the read has ended anyway
            pass


def _reply_from_json(raw: bytes, scrub) -> ChatResponse:
    """A whole chat completion (the answer of a server that ignores ``stream``) as a ``ChatResponse``."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise TransientError(f"the endpoint answered a streamed request with a body that is not JSON: "
                             f"{scrub(raw[:200].decode(errors='replace'))}") from None
    if not isinstance(data, dict):
        raise TransientError("the endpoint answered with JSON that is not a chat completion")
    if data.get("error"):
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise TransientError(f"the endpoint failed while answering: {scrub(str(message))[:500]}")
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        raise TransientError("the endpoint returned no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    usage = data.get("usage") or {}
    return ChatResponse(content=str(message.get("content") or ""), finish_reason=choice.get("finish_reason") or "stop",
                        prompt_tokens=int(usage.get("prompt_tokens") or 0),
                        completion_tokens=int(usage.get("completion_tokens") or 0))


def _error_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return str(getattr(err, "message", err))[:500]

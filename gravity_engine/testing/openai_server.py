"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests, benchmarks and the offline demo.

    with ScriptedOpenAIServer(replies=[Reply.error(429, retry_after=0.1), {"entities": []}]) as srv:
        client = OpenAIClient(LLMConfig(base_url=srv.base_url, ...))

Replies come from a queue first, then from a router ``(request_json) -> reply``. A reply is a string
(the message content), a dict or list (sent as JSON content) or a ``Reply`` (status codes, headers,
delays, generation time per token, stalls, truncation, dropped connections). Every request is
recorded in ``srv.requests``. ``echo_extraction_router`` writes a plausible, schema-valid extraction
from the prompt's own lines.

Like real servers, it streams (server-sent events, usage in the last chunk) when a request says
``"stream": true``, and it can behave like two kinds of local server:

* ``slots=1``: one request generates at a time, the others queue (llama.cpp, Ollama, LM Studio);
  ``srv.peak_active`` and ``srv.peak_waiting`` tell how many were in flight at once.
* ``json_schema_500=True``: ``response_format: json_schema`` is answered with HTTP 500 and
  llama-cpp-python's validation message (``LLAMA_CPP_JSON_SCHEMA_ERROR``).
* ``queue_streams=True`` (with ``slots``): a streamed request is answered 200 at once and then held,
  with an SSE comment (``: ping``) every ``ping_interval`` s, until a slot is free; with
  ``interrupt_streams=True`` a generating stream ends with ``[DONE]`` and no ``finish_reason`` as soon
  as another request waits. Both are llama-cpp-python's server at its defaults (``interrupt_requests``).
* ``props_slots=N``: ``GET /props`` says ``{"total_slots": N}``, as llama.cpp's own server does.

And like simple proxies and gateways, ``ignore_stream=True`` answers a streamed request with one JSON
body, and ``reject_stream=True`` answers it with HTTP 400 naming ``stream``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from ..llm import endpoints

_TOKEN = re.compile(r"\w+|[^\w\s]")
_PIECE = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")  # streamed pieces: a word or a symbol with its leading space

# What llama-cpp-python 0.3.x's server says (HTTP 500) to ``response_format: {"type": "json_schema"}``.
LLAMA_CPP_JSON_SCHEMA_ERROR = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or "
    "'json_object' [type=literal_error, input_value='json_schema', input_type=str]")


def approx_tokens(text: str) -> int:
    """Words and punctuation marks: a crude, dependency-free stand-in for a BPE token count."""
    return len(_TOKEN.findall(text))


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    body: Any = None  # the whole response body for non-200 replies (or to override a 200 body)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (longer than the client's timeout = a timeout)
    finish_reason: str = "stop"
    drop: bool = False  # close the connection without answering
    per_token: float = 0.0  # generation time per streamed piece (unstreamed: all of it before the reply)
    stall_after: int | None = None  # stop producing after this many pieces ...
    stall: float = 0.0  # ... for this many seconds (a generation that hangs midway)

    @classmethod
    def text(cls, content: str) -> "Reply":
        return cls(content=content)

    @classmethod
    def json(cls, obj: Any) -> "Reply":
        return cls(content=json.dumps(obj))

    @classmethod
    def error(cls, status: int, message: str = "scripted error", retry_after: float | None = None) -> "Reply":
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        kind = {400: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
        return cls(status=status, headers=headers, body={"error": {"message": message, "type": kind, "code": None}})

    @classmethod
    def slow(cls, seconds: float, content: str | dict = "") -> "Reply":
        text = content if isinstance(content, str) else json.dumps(content)
        return cls(content=text, delay=seconds)

    @classmethod
    def generating(cls, content: str | dict, per_token: float) -> "Reply":
        """A reply produced piece by piece, ``per_token`` seconds each, as a real model generates it."""
        text = content if isinstance(content, str) else json.dumps(content)
        return cls(content=text, per_token=per_token)

    @classmethod
    def stalled(cls, content: str | dict, after: int, seconds: float, per_token: float = 0.0) -> "Reply":
        """Starts generating, then produces nothing for ``seconds`` after ``after`` pieces."""
        text = content if isinstance(content, str) else json.dumps(content)
        return cls(content=text, per_token=per_token, stall_after=after, stall=seconds)

    @classmethod
    def truncated(cls, obj: Any, keep: float = 0.6) -> "Reply":
        text = json.dumps(obj)
        return cls(content=text[: max(1, int(len(text) * keep))], finish_reason="length")

    @classmethod
    def dropped(cls) -> "Reply":
        return cls(drop=True)


Router = Callable[[dict[str, Any]], Any]


def _as_reply(item: Any) -> Reply:
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return Reply(content=item)
    if isinstance(item, (dict, list)):
        return Reply.json(item)
    raise TypeError(f"cannot turn {type(item).__name__} into a scripted reply")


class ScriptedOpenAIServer:
    """``POST /v1/chat/completions`` and ``GET /v1/models`` answered from a script, on 127.0.0.1:<free port>."""

    def __init__(self, replies: list[Any] | None = None, router: Router | None = None, *,
                 models: list[str] | None = None, api_key: str | None = None,
                 token_counter: Callable[[str], int] = approx_tokens, slots: int | None = None,
                 json_schema_500: bool = False, ignore_stream: bool = False, reject_stream: bool = False,
                 queue_streams: bool = False, interrupt_streams: bool = False, ping_interval: float = 0.1,
                 props_slots: int | None = None):
        self.replies: deque = deque(replies or [])
        self.router = router
        self.models = models or ["gravity-echo", "gpt-4o-mini"]
        self.api_key = api_key  # when set, requests without this bearer key get 401
        self.token_counter = token_counter
        self.requests: list[dict[str, Any]] = []  # {"method", "path", "json", "authorized"}
        self.errors: list[str] = []  # script problems (queue exhausted, router crash)
        # Extra routes (e.g. testing.batch_routes): each gets the request handler first and returns True
        # when it answered the request.
        self.routes: list[Callable[[Any], bool]] = []
        self.json_schema_500 = json_schema_500
        self.ignore_stream = ignore_stream
        self.reject_stream = reject_stream
        self.queue_streams = queue_streams
        self.interrupt_streams = interrupt_streams
        self.ping_interval = ping_interval
        self.props_slots = props_slots
        self.interrupted = 0  # streams ended early because another request waited (interrupt_streams)
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self.active = self.waiting = self.peak_active = self.peak_waiting = 0
        self.abandoned = 0  # streamed replies whose client went away before the end
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "ScriptedOpenAIServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="scripted-openai", daemon=True)
        self._thread.start()

        endpoints.forget(self.base_url)  # a new server: nothing learned about an old one on this port applies
        return self

    def close(self) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting --------------------------------------------------------------------------------
    def push(self, *replies: Any) -> None:
        with self._lock:
            self.replies.extend(replies)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every chat completion request, in order."""
        with self._lock:
            return [r["json"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def _next_reply(self, request_json: dict[str, Any]) -> Reply:
        with self._lock:
            item = self.replies.popleft() if self.replies else None
        if item is None and self.router is not None:
            try:
                item = self.router(request_json)
            except Exception as err:  # a crashing router should fail the test visibly, not hang it
                self.errors.append(f"router raised {type(err).__name__}: {err}")
                return Reply.error(500, f"scripted router raised {type(err).__name__}: {err}")
        if item is None:
            self.errors.append("no scripted reply left")
            return Reply.error(500, "scripted server: no reply left in the script")
        return _as_reply(item)

    def _usage(self, request_json: dict[str, Any], reply: Reply) -> dict[str, int]:
        prompt_text = "\n".join(_message_text(m) for m in request_json.get("messages", []))
        prompt_tokens = self.token_counter(prompt_text)
        completion_tokens = self.token_counter(reply.content or "")
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens}

    def _completion(self, request_json: dict[str, Any], reply: Reply) -> dict[str, Any]:
        with self._lock:
            n = len(self.requests)
        return {
            "id": f"chatcmpl-scripted-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": request_json.get("model", self.models[0]),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content or ""},
                         "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": self._usage(request_json, reply),
        }

    def _chunk(self, request_json: dict[str, Any], delta: dict[str, Any], finish: str | None,
               usage: dict[str, int] | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-scripted-stream", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": request_json.get("model", self.models[0]),
                "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
                "usage": usage}

    def _schema_rejection(self, request_json: dict[str, Any]) -> Reply | None:
        fmt = request_json.get("response_format")
        if self.json_schema_500 and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return Reply(status=500, body={"error": {"message": LLAMA_CPP_JSON_SCHEMA_ERROR, "type": "internal_server_error",
                                                     "param": None, "code": None}})
        return None

    def _generation_pause(self, pieces_done: int, reply: Reply) -> float:
        pause = reply.per_token
        if reply.stall_after is not None and pieces_done == reply.stall_after:
            pause += reply.stall
        return pause

    def _enter_slot(self, ping: Callable[[], bool] | None = None) -> bool:
        """Wait for a slot; ``ping`` (if given) is called every ``ping_interval`` s while waiting and returns
        False when the client has gone, which gives up the wait (False)."""
        with self._lock:
            self.waiting += 1
            self.peak_waiting = max(self.peak_waiting, self.waiting)
        if self._slots is not None:
            while not self._slots.acquire(timeout=self.ping_interval if ping else None):
                if self._closing.is_set() or not ping():
                    with self._lock:
                        self.waiting -= 1
                        self.abandoned += 1
                    return False
        with self._lock:
            self.waiting -= 1
            self.active += 1
            self.peak_active = max(self.peak_active, self.active)
        return True

    def _leave_slot(self) -> None:
        with self._lock:
            self.active -= 1
        if self._slots is not None:
            self._slots.release()


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedOpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    # Headers and body go out in two writes; with Nagle on, a keep-alive client waits ~40 ms for the
    # delayed ACK on every reply.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests read srv.requests instead

    def _authorized(self) -> bool:
        key = self.owner.api_key
        return key is None or self.headers.get("Authorization", "") == f"Bearer {key}"

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to answer

    def _record(self, body: Any) -> None:
        # The Authorization header is not stored: a recorded key would be one more place it could leak from.
        with self.owner._lock:
            self.owner.requests.append({"method": self.command, "path": self.path, "json": body,
                                        "authorized": self._authorized()})

    def _extra_route(self) -> bool:
        return any(route(self) for route in list(self.owner.routes))

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self._extra_route():
            return
        self._record(None)
        if not self._authorized():
            return self._send_json(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.owner.models]
            return self._send_json(200, {"object": "list", "data": data})
        if self.path.rstrip("/") == "/props" and self.owner.props_slots:
            return self._send_json(200, {"total_slots": self.owner.props_slots, "model_path": self.owner.models[0]})
        self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        if self._extra_route():
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._record(None)
            return self._send_json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
        self._record(body)
        if not self._authorized():
            return self._send_json(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        rejection = self.owner._schema_rejection(body)
        if rejection is not None:  # the server's request validation, before any model work
            return self._send_json(rejection.status, rejection.body)
        if body.get("stream") and self.owner.reject_stream:
            return self._send_json(400, {"error": {"message": "'stream' is not supported by this endpoint",
                                                   "type": "invalid_request_error", "param": "stream", "code": None}})
        reply = self.owner._next_reply(body)
        plain = reply.status == 200 and not reply.drop and reply.body is None and not reply.delay
        if body.get("stream") and self.owner.queue_streams and plain and not self.owner.ignore_stream:
            return self._queued_stream(body, reply)
        self.owner._enter_slot()
        try:
            self._answer(body, reply)
        finally:
            self.owner._leave_slot()

    def _queued_stream(self, body: dict[str, Any], reply: Reply) -> None:
        """llama-cpp-python's way: 200 and the headers at once, pings while the model is busy, then the reply."""
        if not self._stream_headers(reply):
            return
        if not self.owner._enter_slot(ping=self._ping):
            return
        try:
            self._stream_events(body, reply)
        finally:
            self.owner._leave_slot()

    def _ping(self) -> bool:
        try:
            self.wfile.write(b": ping\n\n")
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            return False

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        closing = self.owner._closing
        if reply.delay and closing.wait(reply.delay):
            return
        if reply.drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.status != 200:
            return self._send_json(reply.status, reply.body if reply.body is not None else {"error": {"message": "error"}},
                                   reply.headers)
        if body.get("stream") and reply.body is None and not self.owner.ignore_stream:
            return self._stream(body, reply)
        pieces = _PIECE.findall(reply.content or "")
        generation = sum(self.owner._generation_pause(i, reply) for i in range(len(pieces)))
        if generation and closing.wait(generation):
            return
        self._send_json(200, reply.body if reply.body is not None else self.owner._completion(body, reply), reply.headers)

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        """Server-sent events, one piece per event, as OpenAI and llama.cpp send them."""
        if self._stream_headers(reply):
            self._stream_events(body, reply)

    def _stream_headers(self, reply: Reply) -> bool:
        self.close_connection = True  # the stream ends when the connection closes (no Content-Length)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _stream_events(self, body: dict[str, Any], reply: Reply) -> None:
        owner = self.owner
        events = [owner._chunk(body, {"role": "assistant", "content": ""}, None)]
        pieces = _PIECE.findall(reply.content or "")
        events += [owner._chunk(body, {"content": p}, None) for p in pieces]
        events.append(owner._chunk(body, {}, reply.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(owner._chunk(body, {}, None, owner._usage(body, reply)))
        try:
            for i, event in enumerate(events):
                if 1 <= i <= len(pieces):
                    pause = owner._generation_pause(i - 1, reply)
                    if pause and owner._closing.wait(pause):
                        return
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                if owner.interrupt_streams and owner.waiting and i < len(events) - 1:
                    # llama-cpp-python (interrupt_requests): another request waits, so this one ends here.
                    with owner._lock:
                        owner.interrupted += 1
                    break
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with owner._lock:
                owner.abandoned += 1  # the client gave up (timeout): stop generating, free the slot


# --- the echo-extraction router ---------------------------------------------------------------------

_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last (?:week|month|year|night|weekend|summer|winter|spring|fall|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|next (?:week|month|year|weekend|summer)|"
    r"this (?:week|month|year|weekend|morning)|(?:a|one|two|three|few|\d+) (?:days?|weeks?|months?|years?) ago|"
    r"(?:in|since|last) (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)|recently)\b", re.I)
_STOP = set("""a an the and or but if so of to in on at for with from by about as is are was were be been being i
you he she it we they me him her us them my your his its our their this that these those do did does have has
had not no yes just really so very too also can could would should will shall may might must what which who whom
how when where why there here than then out up down over again more most some any all such only own same other
into through during before after above below off once each few both get got going go gonna im i'm it's that's
dont don't oh wow hey hi hello thanks thank like know think yeah okay ok well lot lots one""".split())
_CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.S)
_SCHEMA_NAME = re.compile(r"JSON schema \(name: (\w+)\)")



def _conversation_lines(request_json: dict[str, Any]) -> list[tuple[str, str, str]]:
    lines: list[tuple[str, str, str]] = []
    for message in request_json.get("messages", []):
        if message.get("role") != "user":
            continue
        match = _CONVERSATION.search(_message_text(message))
        if not match:
            continue
        for line in match.group(1).splitlines():
            try:
                uid, speaker, text = json.loads(line)
            except (ValueError, TypeError):
                continue
            lines.append((str(uid), str(speaker), str(text)))
        break  # the first user message holds the transcript (later ones are repair rounds)
    return lines


def _prompt_name(request_json: dict[str, Any]) -> str | None:
    fmt = request_json.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("name")
    for message in request_json.get("messages", []):
        match = _SCHEMA_NAME.search(_message_text(message))
        if match:
            return match.group(1)
    return None


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z'-]{2,}", text.lower()) if w not in _STOP]


def _echo_entities(lines: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    by_speaker: dict[str, list[str]] = {}
    for uid, speaker, _ in lines:
        by_speaker.setdefault(speaker, []).append(uid)
    entities = [{"name": s, "type": "person", "aliases": [], "description": f"{s}, a participant in the conversation",
                 "attributes": [], "relations": [], "source_ids": ids} for s, ids in by_speaker.items()]
    # Capitalized words inside a sentence (not after . ! ?) are likely names: one "other" entity each.
    names: dict[str, list[str]] = {}
    for uid, _, text in lines:
        for match in re.finditer(r"(?<![.!?]\s)\b([A-Z][a-z]{2,})\b", text):
            word = match.group(1)
            if match.start() > 0 and word.lower() not in _STOP and word not in by_speaker:
                names.setdefault(word, [])
                if uid not in names[word]:
                    names[word].append(uid)
    for word, ids in list(names.items())[:8]:
        entities.append({"name": word, "type": "other", "aliases": [], "description": "", "attributes": [],
                         "relations": [], "source_ids": ids})
    return entities


def _echo_events(lines: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for uid, speaker, text in lines:
        match = _TIME_WORDS.search(text)
        if not match:
            continue
        events.append({"what": text[:160], "participants": [speaker], "when_text": match.group(0),
                       "date_start": None, "date_end": None, "granularity": "unknown", "where": "",
                       "source_ids": [uid], "follows": [len(events) - 1] if events else [], "causes": []})
    return events


def _echo_topic(lines: list[tuple[str, str, str]]) -> dict[str, Any]:
    counts = Counter(w for _, _, text in lines for w in _words(text))
    keywords = [w for w, _ in counts.most_common(6)]
    speakers = list(dict.fromkeys(s for _, s, _ in lines))
    facts = [{"text": f"{s} said: {t[:120]}", "source_ids": [u]} for u, s, t in lines[:3]]
    return {"label": " ".join(keywords[:3]) or "conversation", "keywords": keywords,
            "summary": f"{' and '.join(speakers)} talk about {', '.join(keywords[:3]) or 'various things'}.",
            "key_facts": facts, "participants": speakers, "state": "discussed in this part",
            "source_ids": [u for u, _, _ in lines]}


def echo_extraction_router(request_json: dict[str, Any]) -> Any:
    """A plausible, schema-valid reply built from the prompt's own transcript: an entity per speaker
    (plus capitalized names), an event per utterance with a time word (dates left for the engine to
    resolve), one topic per batch; free-text prompts get an extractive summary."""
    lines = _conversation_lines(request_json)
    name = _prompt_name(request_json)
    if name == "judge":
        return {"reasoning": "the scripted server cannot judge; it labels every answer WRONG", "label": "WRONG"}
    if name in ("extract_fused", "extract_entities", "extract_events", "extract_topics"):
        reply: dict[str, Any] = {}
        if name in ("extract_fused", "extract_entities"):
            reply["entities"] = _echo_entities(lines)
        if name in ("extract_fused", "extract_events"):
            reply["events"] = _echo_events(lines)
        if name in ("extract_fused", "extract_topics"):
            reply["topics"] = [_echo_topic(lines)] if lines else []
        return reply
    if lines:
        return " ".join(f"{s} said: {t[:100]}" for _, s, t in lines[:5])
    return "I don't know."

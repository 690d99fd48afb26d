"""OpenAI's batch API on the scripted server: ``/v1/files`` and ``/v1/batches``.

    with ScriptedOpenAIServer(router=echo_extraction_router) as srv:
        batches = BatchRoutes(srv)          # installs the routes; batches.hold() keeps jobs in progress

Upload (multipart ``POST /v1/files``), file metadata and content (``GET /v1/files/{id}[/content]``),
create (``POST /v1/batches``), retrieve (``GET /v1/batches/{id}``), list and cancel. A batch moves
one status per retrieve, ``validating -> in_progress -> finalizing -> completed``, as a real one
moves over minutes; while ``hold()`` is on it stays ``in_progress``. On completion every request line
is answered by the server's own script (queue, then router), like an online call, and written to an
output file (errors to an error file). Batch lines are not chat requests: ``srv.chat_requests()``
does not list them, so a test can tell batch answers from online calls.
"""

from __future__ import annotations

import json
import re
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import urlsplit

from .openai_server import ScriptedOpenAIServer

STEPS = ("validating", "in_progress", "finalizing", "completed")
_ROUTE = re.compile(r"^(?:/v1)?/(files|batches)(?:/([^/]+))?(?:/(content|cancel))?$")


class BatchRoutes:
    """The batch API of one scripted server; ``files`` and ``batches`` hold what was uploaded and created."""

    def __init__(self, server: ScriptedOpenAIServer):
        self.server = server
        self.files: dict[str, dict[str, Any]] = {}  # id -> {"meta": FileObject dict, "data": bytes}
        self.batches: dict[str, dict[str, Any]] = {}  # id -> Batch dict
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._released.set()
        server.routes.append(self.handle)

    # --- scripting --------------------------------------------------------------------------------
    def hold(self) -> None:
        """Keep every batch ``in_progress`` (a provider that takes hours) until ``release()``."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def created(self) -> list[dict[str, Any]]:
        """The ``POST /v1/batches`` requests received, in order."""
        return [r["json"] for r in self.server.requests if r["method"] == "POST" and _path(r["path"]) == "/v1/batches"]

    def uploads(self) -> list[dict[str, Any]]:
        return [r["json"] for r in self.server.requests if r["method"] == "POST" and _path(r["path"]) == "/v1/files"]

    # --- the route --------------------------------------------------------------------------------
    def handle(self, h) -> bool:
        match = _ROUTE.match(_path(h.path))
        if not match:
            return False
        kind, ident, action = match.groups()
        body: Any = None
        if h.command == "POST":
            raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
            body = self._form(h, raw) if kind == "files" else _json(raw)
        h._record(body)
        if not h._authorized():
            h._send_json(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
        elif kind == "files" and h.command == "POST" and ident is None:
            self._upload(h, body)
        elif kind == "files" and h.command == "GET" and ident in self.files:
            if action == "content":
                _send_bytes(h, self.files[ident]["data"])
            else:
                h._send_json(200, self.files[ident]["meta"])
        elif kind == "batches" and h.command == "POST" and ident is None:
            self._create(h, body)
        elif kind == "batches" and h.command == "GET" and ident is None:
            with self._lock:
                data = list(reversed(self.batches.values()))  # newest first, as OpenAI lists them
            ends = {"first_id": data[0]["id"], "last_id": data[-1]["id"]} if data else {"first_id": None, "last_id": None}
            h._send_json(200, {"object": "list", "data": data, "has_more": False, **ends})
        elif kind == "batches" and ident in self.batches:
            h._send_json(200, self._cancel(ident) if action == "cancel" else self._advance(ident))
        else:
            h._send_json(404, {"error": {"message": f"no {kind} {ident!r}", "type": "invalid_request_error"}})
        return True

    def _form(self, h, raw: bytes) -> dict[str, Any]:
        """A multipart/form-data body as {field: text} plus the uploaded file's name and bytes."""
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {h.headers.get('Content-Type', '')}\r\n\r\n".encode() + raw)
        form: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if part.get_filename():
                form["filename"], form["_data"] = part.get_filename(), data
            elif name:
                form[name] = data.decode("utf-8", "replace")
        return form

    def _upload(self, h, form: dict[str, Any]) -> None:
        data = form.pop("_data", None)
        if data is None or form.get("purpose") != "batch":
            h._send_json(400, {"error": {"message": "expected a file and purpose=batch",
                                         "type": "invalid_request_error"}})
            return
        with self._lock:
            file_id = f"file-scripted-{len(self.files)}"
            meta = _file(file_id, form.get("filename") or "upload.jsonl", data, "batch")
            self.files[file_id] = {"meta": meta, "data": data}
        h._send_json(200, meta)

    def _create(self, h, body: dict[str, Any]) -> None:
        source = self.files.get(str(body.get("input_file_id")))
        if source is None or body.get("endpoint") != "/v1/chat/completions":
            h._send_json(400, {"error": {"message": "unknown input_file_id or unsupported endpoint",
                                         "type": "invalid_request_error"}})
            return
        lines = [ln for ln in source["data"].decode("utf-8").splitlines() if ln.strip()]
        with self._lock:
            batch_id = f"batch_scripted_{len(self.batches)}"
            batch = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                     "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window", "24h"),
                     "status": STEPS[0], "output_file_id": None, "error_file_id": None, "created_at": int(time.time()),
                     "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                     "metadata": body.get("metadata")}
            self.batches[batch_id] = batch
        h._send_json(200, batch)

    def _advance(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self.batches[batch_id]
            status = batch["status"]
            if status in STEPS[:-1] and not (status == "in_progress" and not self._released.is_set()):
                batch["status"] = STEPS[STEPS.index(status) + 1]
                if batch["status"] == "completed":
                    self._run(batch)
            return dict(batch)

    def _cancel(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self.batches[batch_id]
            if batch["status"] not in ("completed", "failed", "expired"):
                batch["status"] = "cancelled"
            return dict(batch)

    def _run(self, batch: dict[str, Any]) -> None:
        """Answer every request line with the server's script, as the provider does when the job runs."""
        out, errors = [], []
        for n, line in enumerate(self.files[batch["input_file_id"]]["data"].decode("utf-8").splitlines()):
            if not line.strip():
                continue
            request = json.loads(line)
            body = request.get("body") or {}
            reply = self.server._next_reply(body)
            row = {"id": f"batch_req_{batch['id']}_{n}", "custom_id": request.get("custom_id"), "error": None}
            if reply.status == 200:
                answer = reply.body if reply.body is not None else self.server._completion(body, reply)
                row["response"] = {"status_code": 200, "request_id": f"req_{n}", "body": answer}
                out.append(row)
            else:
                row["response"] = {"status_code": reply.status, "request_id": f"req_{n}", "body": reply.body}
                errors.append(row)
        for rows, field in ((out, "output_file_id"), (errors, "error_file_id")):
            if rows:
                file_id = f"file-scripted-{len(self.files)}"
                data = "".join(json.dumps(r) + "\n" for r in rows).encode()
                self.files[file_id] = {"meta": _file(file_id, f"{batch['id']}_{field}.jsonl", data, "batch_output"),
                                       "data": data}
                batch[field] = file_id
        batch["request_counts"] = {"total": len(out) + len(errors), "completed": len(out), "failed": len(errors)}


def _path(raw: str) -> str:
    return urlsplit(raw).path.rstrip("/")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {}


def _file(file_id: str, name: str, data: bytes, purpose: str) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": name,
            "purpose": purpose, "status": "processed"}


def _send_bytes(h, data: bytes) -> None:
    try:
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass

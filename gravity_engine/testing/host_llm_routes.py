"""Scripted LLM answers for the host libraries' own ingestion calls (Graphiti, A-Mem, Mem0 extraction).

Use with ``ScriptedOpenAIServer(router=host_router)``. Graphiti and A-Mem ask for structured output
with ``response_format={"type": "json_schema", "json_schema": {"name": ...}}``; routes go by that
schema name (and, for A-Mem's two calls that share the name "response", by the schema's fields).
Mem0 asks for a plain JSON object; its route goes by the system prompt.

The answers are heuristic (entities = speaker + capitalised words, one fact per turn, no duplicates,
no evolution), so results obtained through them test the libraries' pipelines and our plumbing,
not the libraries' real extraction quality.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Callable

from .openai_server import ScriptedOpenAIServer

_STOP = set("""a an the and or but if so of to in on at for with from by about as is are was were be been i you he she
it we they me him her us them my your his its our their this that these those do did does have has had not no yes
just really very too also can could would should will what which who how when where why there here than then hey
hi hello thanks thank oh wow well yeah okay ok""".split())
_CAPS = re.compile(r"(?<![.!?]\s)\b([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})*)\b")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(_text(m) for m in request.get("messages", []))


def _schema(request: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        return spec.get("name"), spec.get("schema") or {}
    return None, {}


def _tag(prompt: str, *names: str) -> str | None:
    for name in names:
        match = re.search(rf"<{re.escape(name)}>\s*(.*?)\s*</{re.escape(name)}>", prompt, re.S)
        if match:
            return match.group(1)
    return None


def _json_tag(prompt: str, *names: str) -> Any:
    raw = _tag(prompt, *names)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _speaker_and_words(message: str) -> tuple[str, str]:
    speaker, sep, words = message.partition(":")
    return (speaker.strip(), words.strip()) if sep and len(speaker) < 60 else ("", message.strip())


def message_entities(message: str) -> list[str]:
    """The speaker, then capitalised words or runs of them that do not start a sentence."""
    speaker, words = _speaker_and_words(message)
    names = [speaker] if speaker else []
    for match in _CAPS.finditer(words):
        name = match.group(1)
        if match.start() > 0 and name.lower() not in _STOP and name not in names:
            names.append(name)
    return names[:8]


def minimal_instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest JSON value a schema accepts (empty lists, zeros, first enum value)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return minimal_instance(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = schema[key]
            return None if any(o.get("type") == "null" for o in options) else minimal_instance(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object" or "properties" in schema:
        return {name: minimal_instance(sub, defs) for name, sub in schema.get("properties", {}).items()
                if name in schema.get("required", schema.get("properties", {}))}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False, "null": None}.get(kind, None)


# --- Graphiti --------------------------------------------------------------------------------------

def _graphiti_entities(prompt: str) -> dict[str, Any]:
    message = _tag(prompt, "CURRENT MESSAGE", "CURRENT_MESSAGE") or ""
    return {"extracted_entities": [{"name": n, "entity_type_id": 0, "episode_indices": [0]}
                                   for n in message_entities(message)]}


def _graphiti_edges(prompt: str) -> dict[str, Any]:
    message = _tag(prompt, "CURRENT_MESSAGE", "CURRENT MESSAGE") or ""
    entities = _json_tag(prompt, "ENTITIES") or []
    names = [e.get("name") for e in entities if isinstance(e, dict) and e.get("name")]
    speaker, _ = _speaker_and_words(message)
    source = speaker if speaker in names else (names[0] if names else None)
    edges = [{"source_entity_name": source, "target_entity_name": target, "relation_type": "MENTIONS",
              "fact": message, "valid_at": None, "invalid_at": None, "episode_indices": [0]}
             for target in names if source and target != source]
    return {"edges": edges[:1]}  # one fact per turn, like the direct ingest


def _graphiti_resolutions(prompt: str) -> dict[str, Any]:
    found = []
    for raw in re.findall(r"<[A-Z][A-Z _]*>\s*(\[.*?\])\s*</[A-Z][A-Z _]*>", prompt, re.S):
        try:
            items = json.loads(raw)
        except ValueError:
            continue
        found += [{"id": int(i["id"]), "name": str(i.get("name", "")), "duplicate_candidate_id": -1}
                  for i in items if isinstance(i, dict) and isinstance(i.get("id"), int)]
        if found:
            break
    return {"entity_resolutions": found}


def _graphiti_summaries(prompt: str) -> dict[str, Any]:
    entities = _json_tag(prompt, "ENTITIES") or []
    names = [e.get("name") for e in entities if isinstance(e, dict) and e.get("name")]
    return {"summaries": [{"name": n, "summary": f"{n} appears in the conversation."} for n in names]}


GRAPHITI_ROUTES: dict[str, Callable[[str], Any]] = {
    "ExtractedEntities": _graphiti_entities,
    "ExtractedEdges": _graphiti_edges,
    "EdgeDuplicate": lambda p: {"duplicate_facts": [], "contradicted_facts": []},
    "EdgeTimestamps": lambda p: {"valid_at": None, "invalid_at": None},
    "NodeResolutions": _graphiti_resolutions,
    "SummarizedEntities": _graphiti_summaries,
}


# --- A-Mem -----------------------------------------------------------------------------------------

def _amem(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    if "should_evolve" in props:
        return {"should_evolve": False, "actions": [], "suggested_connections": [], "tags_to_update": [],
                "new_context_neighborhood": [], "new_tags_neighborhood": []}
    words = [w for w in re.findall(r"[a-z][a-z'-]{3,}", prompt.lower()) if w not in _STOP]
    return {"keywords": [w for w, _ in Counter(words).most_common(5)], "context": "Conversation", "tags": ["chat"]}


# --- Mem0 ------------------------------------------------------------------------------------------

def _mem0(prompt: str) -> dict[str, Any]:
    new = prompt.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
    memories = []
    for line in new.splitlines():
        line = line.strip()
        role, sep, content = line.partition(": ")
        if sep and role in ("user", "assistant") and content:
            memories.append({"text": content, "attributed_to": "user"})
    return {"memory": memories}


def host_router(request: dict[str, Any]) -> Any:
    """One router for every host library's ingestion calls; unknown schemas get a minimal valid instance."""
    name, schema = _schema(request)
    prompt = _prompt(request)
    if name in GRAPHITI_ROUTES:
        return GRAPHITI_ROUTES[name](prompt)
    if name == "response":
        return _amem(prompt, schema)
    if "Memory Extractor" in prompt and "## New Messages" in prompt:
        user = [_text(m) for m in request.get("messages", []) if m.get("role") == "user"]
        return _mem0(user[-1] if user else "")
    if schema:
        return minimal_instance(schema)
    return {}


def calls_by_route(requests: list[dict[str, Any]]) -> Counter:
    """How many chat requests each route answered (schema name, or 'mem0' / 'other')."""
    counts: Counter = Counter()
    for body in requests:
        name, _ = _schema(body)
        counts[name or ("mem0" if "Memory Extractor" in _prompt(body) else "other")] += 1
    return counts


def scripted_host_server():
    """The scripted server with these routes (``measure --scripted-llm``): a context manager with ``base_url``."""
    return ScriptedOpenAIServer(router=host_router)

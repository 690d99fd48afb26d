"""The entity graph: a networkx graph from entity profiles, its inverse relations merged, a cached
layout, and the data the app's graph component draws (a node click opens its profile, an edge its evidence).

The graph is drawn by a small SVG component of the app (``app_pages/components/entity_graph.js``) instead of
a Vega chart: a tab opened on the graph page does not wait for the Vega library to load and start.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping

import networkx as nx
import pandas as pd

from ..anchors import AnchorSet, Entity
from ..comentions import SPEAKER_PREFIX, co_mentions, speaker_ids, speakers_of
from . import type_color

# Predicates whose inverse has another word; everything else pairs "X" with "X_of" ("sister", "sister_of").
_INVERSE_WORDS = {"child": "parent", "mentee": "mentor", "student": "teacher", "employee": "employer",
                  "owned by": "owns", "pet": "owns pet"}
# Above this many nodes only the best-connected ones are labelled; the rest show on hover.
LABEL_LIMIT = 80
# The spacing of the grid of unconnected entities under the components, in layout units.
GRID_STEP = 1.3
# At most this many co-mention edges (the least frequent weight dropped first).
MAX_CO_MENTIONS = 60
# Components up to this size get the Kamada-Kawai layout (all-pairs distances: quadratic), bigger ones the spring one.
KK_MAX_NODES = 150

def _session_of(source_ids: Iterable[str], session_by_utt: dict[str, str]) -> set[str]:
    return {session_by_utt[s] for s in source_ids if s in session_by_utt}

def build_graph(anchors: AnchorSet, session_by_utt: dict[str, str] | None = None) -> nx.MultiDiGraph:
    """One node per entity (name, type, mentions, sessions), one edge per relation to a known entity."""
    session_by_utt = session_by_utt or {}
    g = nx.MultiDiGraph()
    by_name: dict[str, str] = {}
    for e in anchors.entities:
        g.add_node(e.id, name=e.name, type=e.type or "other", mentions=max(e.mentions, len(e.source_ids), 1),
                   aliases=list(e.aliases), description=e.description,
                   sessions=sorted(_session_of(e.source_ids, session_by_utt)))
        for n in [e.name, *e.aliases]:
            by_name.setdefault(n.lower(), e.id)
    for e in anchors.entities:
        for r in e.relations:
            target = r.target_id if r.target_id in g else by_name.get(r.target.lower())
            if target is None or target == e.id:
                continue
            # An extractor may score its relations (an optional ``confidence``): shown wherever the relation is.
            g.add_edge(e.id, target, predicate=r.predicate, source_ids=list(r.source_ids),
                       sessions=sorted(_session_of(r.source_ids, session_by_utt)), kind="relation",
                       confidence=getattr(r, "confidence", None))
    return g

def add_co_mentions(g: nx.MultiDiGraph, anchors: AnchorSet, conversation=None, min_shared: int = 2
                    ) -> nx.MultiDiGraph:
    """Add a 'mentioned with' edge (``weight``: how many utterances, ``source_ids``: which) between entities cited
    together by at least ``min_shared`` utterances (:func:`gravity_engine.comentions.co_mentions`; with the
    ``conversation``, a speaker is mentioned by what they say). A speaker with no entity gets a node."""
    pairs = co_mentions(anchors, conversation, min_weight=min_shared)
    # On a long conversation hundreds of pairs are said together twice: keep the most frequent ones, the weakest
    # weight dropped whole, so the layer stays readable (a 705-turn chat had 122 such edges at weight 2).
    while len(pairs) > MAX_CO_MENTIONS and pairs[-1].weight < pairs[0].weight:
        pairs = [c for c in pairs if c.weight > pairs[-1].weight]
    for c in pairs:
        for n in (c.a, c.b):
            if n not in g and n.startswith(SPEAKER_PREFIX):
                _add_speaker(g, n)
        if c.a in g and c.b in g:
            g.add_edge(c.a, c.b, predicate="mentioned with", source_ids=list(c.utterance_ids), sessions=[],
                       kind="co-mention", weight=c.weight)
    return g


def _add_speaker(g: nx.MultiDiGraph, node: str) -> None:
    name = node.removeprefix(SPEAKER_PREFIX)
    g.add_node(node, name=name, type="person", mentions=1, aliases=[], description="a speaker", sessions=[],
               speaker=True)


def add_speakers(g: nx.MultiDiGraph, anchors: AnchorSet, speakers: Iterable[str]) -> nx.MultiDiGraph:
    """Mark the speakers' nodes (adding one for a speaker with no entity): they are always drawn."""
    for node in speaker_ids(anchors, list(speakers)).values():
        if node not in g:
            _add_speaker(g, node)
        g.nodes[node]["speaker"] = True
    return g


def filter_graph(g: nx.MultiDiGraph, *, types: Iterable[str] | None = None, min_degree: int = 0,
                 sessions: Iterable[str] | None = None, search: str = "") -> nx.MultiDiGraph:
    """The subgraph a user asked for: entity types, minimum degree, sessions seen in, and a name search.

    A search keeps the matching entities and their direct neighbours, so a profile is seen in context.
    """
    keep = set(g.nodes)
    if types is not None:
        wanted = {t.lower() for t in types}
        keep = {n for n in keep if g.nodes[n]["type"].lower() in wanted}
    if sessions is not None:
        wanted_s = set(sessions)
        keep = {n for n in keep if not g.nodes[n]["sessions"] or wanted_s & set(g.nodes[n]["sessions"])}
    sub = g.subgraph(keep).copy()
    query = search.strip().lower()
    if query:
        hits = {n for n in sub.nodes
                if query in sub.nodes[n]["name"].lower() or any(query in a.lower() for a in sub.nodes[n]["aliases"])}
        around = set(hits)
        for n in hits:
            around.update(sub.predecessors(n))
            around.update(sub.successors(n))
        sub = sub.subgraph(around).copy()
    if min_degree > 0:
        sub = sub.subgraph([n for n in sub.nodes if sub.degree(n) >= min_degree]).copy()
    return sub

def readable(predicate: str) -> str:
    """'sister_of' -> 'sister of'."""
    return " ".join(predicate.replace("_", " ").replace("-", " ").split()).lower()

def base_predicate(predicate: str) -> str:
    """The word a relation and its inverse share: 'sister' for both 'sister' and 'sister_of'."""
    p = readable(predicate)
    if p.endswith(" of"):
        p = p[:-3].strip()
    return _INVERSE_WORDS.get(p, p)

def merge_relations(g: nx.MultiDiGraph) -> nx.Graph:
    """One undirected edge per entity pair and relation meaning: "A sister_of B" and "B sister A" are one
    edge, with both statements and the union of their evidence. Co-mentions stay apart from relations."""
    merged = nx.Graph()
    merged.add_nodes_from(g.nodes(data=True))
    for u, v, d in g.edges(data=True):
        kind = d.get("kind", "relation")
        key = ("co-mention", "") if kind == "co-mention" else ("relation", base_predicate(d["predicate"]))
        statement = f"{g.nodes[u]['name']} {readable(d['predicate'])} {g.nodes[v]['name']}"
        if merged.has_edge(u, v):
            rels = merged.edges[u, v]["relations"]
        else:
            rels = {}
            merged.add_edge(u, v, relations=rels)
        entry = rels.setdefault(key, {"kind": kind, "label": readable(d["predicate"]), "statements": [],
                                      "source_ids": [], "confidence": None})
        if statement not in entry["statements"]:
            entry["statements"].append(statement)
        entry["source_ids"] += [s for s in d.get("source_ids", []) if s not in entry["source_ids"]]
        if d.get("confidence") is not None:
            entry["confidence"] = max(entry["confidence"] or 0.0, float(d["confidence"]))
    return merged

def layout(g: nx.Graph, seed: int = 7) -> dict[str, tuple[float, float]]:
    """Positions for every node: each connected component laid out on its own (spring layout) and the
    components packed in rows, largest first; entities without any edge in a grid underneath.

    One spring layout over everything pushes the unconnected nodes into an outer ring and squeezes the
    rest; per-component layouts keep a few hundred entities readable.
    """
    pos: dict[str, tuple[float, float]] = {}
    comps = sorted((sorted(c) for c in nx.connected_components(g) if len(c) > 1), key=lambda c: (-len(c), c[0]))
    isolated = sorted((n for n in g if g.degree(n) == 0),
                      key=lambda n: (g.nodes[n].get("type", ""), -g.nodes[n].get("mentions", 0), n))
    row_width = max(6.0, 2.2 * math.sqrt(len(g)))
    x = y = row_height = 0.0
    for comp in comps:
        radius = 0.9 * math.sqrt(len(comp))
        # A new graph with the nodes in sorted order: a small subgraph view iterates its node set, whose order
        # changes with the hash seed, and the spring layout with it (a different picture every server start).
        sub = nx.Graph()
        sub.add_nodes_from(comp)
        sub.add_edges_from(g.edges(comp))
        # Kamada-Kawai puts nodes as far apart as their graph distance (a star's leaves evenly round it, no edge
        # squashed to a stub); the spring layout, left to chance, drew some edges shorter than their labels.
        local = (nx.kamada_kawai_layout(sub) if len(comp) <= KK_MAX_NODES else
                 nx.spring_layout(sub, seed=seed, k=1.6 / math.sqrt(len(comp)), iterations=80))
        if x > 0 and x + 2 * radius > row_width:
            x, y, row_height = 0.0, y - row_height - 0.8, 0.0
        for n, (px, py) in local.items():
            pos[n] = (x + radius + radius * float(px), y - radius + radius * float(py))
        x += 2 * radius + 0.8
        row_height = max(row_height, 2 * radius)
    top = y - row_height - (1.2 if comps else 0.0)
    per_row = max(4, int(row_width / GRID_STEP))
    for i, n in enumerate(isolated):
        pos[n] = (GRID_STEP * (i % per_row) + 0.5, top - 0.9 * (i // per_row))
    return pos

def node_size(mentions: int) -> float:
    """A node's diameter in pixels. Square-root scaling, capped: a chatty speaker should not dwarf the rest."""
    return 10.0 + 2.4 * min(mentions, 400) ** 0.5

def _label_side(g: nx.Graph, pos: Mapping[str, tuple[float, float]], n: str) -> str:
    # A label on the side away from the node's neighbours crosses fewer edges.
    nbrs = list(g.neighbors(n))
    if not nbrs:
        return "right"
    return "left" if pos[n][0] < sum(pos[m][0] for m in nbrs) / len(nbrs) else "right"


def graph_frames(g: nx.Graph, pos: Mapping[str, tuple[float, float]],
                 label_limit: int = LABEL_LIMIT) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chart's data: one row per node (position, type, label) and one per merged edge (ends, midpoint,
    label, statements, evidence). ``g`` is a :func:`merge_relations` graph."""
    ranked = sorted(g.nodes, key=lambda n: (-g.degree(n), -g.nodes[n]["mentions"], g.nodes[n]["name"].lower()))
    labelled = set(ranked[:label_limit])
    nodes = pd.DataFrame([{
        "id": n, "name": d["name"], "type": d["type"], "mentions": int(d["mentions"]), "degree": g.degree(n),
        "aliases": ", ".join(d["aliases"]), "about": (d["description"] or "")[:160],
        "x": pos[n][0], "y": pos[n][1], "r": round(node_size(int(d["mentions"])) / 2, 1),
        "label": d["name"] if n in labelled or d.get("speaker") else "", "label_side": _label_side(g, pos, n),
        "speaker": bool(d.get("speaker")),
    } for n, d in g.nodes(data=True)], columns=["id", "name", "type", "mentions", "degree", "aliases", "about", "x",
                                                "y", "r", "label", "label_side", "speaker"])
    rows = []
    for u, v, d in g.edges(data=True):
        for (kind, _), rel in d["relations"].items():
            rows.append({"edge_id": f"{u}|{v}|{len(rows)}", "source": u, "target": v, "kind": kind,
                         "label": rel["label"], "statements": "; ".join(rel["statements"]),
                         "source_ids": list(rel["source_ids"]), "evidence": len(rel["source_ids"]),
                         "confidence": rel.get("confidence"),
                         "x": pos[u][0], "y": pos[u][1], "x2": pos[v][0], "y2": pos[v][1]})
    edges = pd.DataFrame(rows, columns=["edge_id", "source", "target", "kind", "label", "statements", "source_ids",
                                        "evidence", "confidence", "x", "y", "x2", "y2"])
    # Two meanings between one pair would share a midpoint: spread them along the edge.
    if not edges.empty:
        nth = edges.groupby(["source", "target"]).cumcount()
        t = 0.5 + 0.12 * nth
        edges["mx"] = edges["x"] + (edges["x2"] - edges["x"]) * t
        edges["my"] = edges["y"] + (edges["y2"] - edges["y"]) * t
    else:
        edges["mx"], edges["my"] = [], []
    return nodes, edges

def explore_data(anchors: AnchorSet, session_by_utt: dict[str, str] | None = None, *, co_mentions: bool = False,
                 label_limit: int = LABEL_LIMIT, conversation=None
                 ) -> tuple[nx.MultiDiGraph, pd.DataFrame, pd.DataFrame]:
    """Everything the graph page draws from, computed once per store: the relation graph (for filters), and
    the node and edge rows with their layout positions (inverse relations merged). With the ``conversation``
    its speakers are always nodes (and mentioned by what they say, in the co-mention layer)."""
    g = build_graph(anchors, session_by_utt)
    if conversation is not None:
        add_speakers(g, anchors, speakers_of(conversation))
    if co_mentions:
        add_co_mentions(g, anchors, conversation)
    merged = merge_relations(g)
    nodes, edges = graph_frames(merged, layout(merged), label_limit=label_limit)
    return g, nodes, edges


def select_frames(nodes: pd.DataFrame, edges: pd.DataFrame, keep: Iterable[str], *,
                  hide_unconnected: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows to draw: nodes in ``keep`` (a filtered graph's nodes) and the edges between them.
    ``hide_unconnected`` drops the entities with no edge in the whole store (a filter does not strand them)."""
    keep = set(keep)
    edges = edges[edges["source"].isin(keep) & edges["target"].isin(keep)]
    nodes = nodes[nodes["id"].isin(keep)]
    if hide_unconnected:
        nodes = nodes[(nodes["degree"] > 0) | nodes["speaker"]]
    return nodes.reset_index(drop=True), edges.reset_index(drop=True)


def graph_view(nodes: pd.DataFrame, edges: pd.DataFrame, *, selected: str | None = None,
               height: int | None = None) -> dict:
    """What the page's graph component draws (plain JSON): nodes with position, colour, radius, label and
    tooltip rows; merged edges with ends, midpoint, label and tooltip rows; the legend. Names and predicates
    stay data: the component sets them as SVG text and tooltip text, never as markup. The height grows with
    the number of nodes unless given. Entities without an edge are not drawn (:func:`unconnected` lists them);
    the speakers always are."""
    nodes = nodes[(nodes["degree"] > 0) | nodes["speaker"]]
    types = sorted(set(nodes["type"]))
    node_rows = [{
        "id": r.id, "type": r.type, "color": type_color(r.type), "r": float(r.r), "x": float(r.x), "y": float(r.y),
        "label": r.label, "side": r.label_side, "focus": r.id == selected, "grid": False,
        "tip": [[k, str(v)] for k, v in (("entity", r.name), ("type", r.type), ("mentions", r.mentions),
                                         ("edges", r.degree), ("also called", r.aliases), ("description", r.about))
                if v not in ("", None)],
    } for r in nodes.itertuples(index=False)]
    # Past a few dozen edges their labels cover the nodes: hover the diamonds instead.
    edge_labels = int((edges["kind"] == "relation").sum()) <= 60 if len(edges) else False
    edge_rows = [{
        "id": r.edge_id, "source": r.source, "target": r.target, "kind": r.kind,
        "label": r.label if r.kind == "relation" else "",
        "x": float(r.x), "y": float(r.y), "x2": float(r.x2), "y2": float(r.y2), "mx": float(r.mx), "my": float(r.my),
        "width": round(1.0 + 1.5 * math.log2(max(int(r.evidence), 1)), 2) if r.kind == "co-mention" else None,
        "tip": [["mentioned together" if r.kind == "co-mention" else "relation", r.statements],
                ["utterances", str(r.evidence)]]
               + ([["confidence", f"{float(r.confidence):.2f}"]] if _has(r.confidence) else []),
    } for r in edges.itertuples(index=False)]
    return {"nodes": node_rows, "edges": edge_rows, "edge_labels": edge_labels, "grid_step": GRID_STEP,
            "legend": [{"type": t, "color": type_color(t)} for t in types],
            "height": height or min(1000, 520 + 4 * len(nodes)),
            # Pan and zoom are kept while the same nodes are drawn (a click, a toggle of co-mentions).
            "view_key": f"{zlib.crc32(chr(31).join(sorted(nodes['id'])).encode()):08x}"}


def _has(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def unconnected(nodes: pd.DataFrame) -> pd.DataFrame:
    """The entities without any edge, as a list (name, type, mentions; most mentioned first): a grid of dots with
    cut names said less than this list."""
    out = nodes[(nodes["degree"] == 0) & ~nodes["speaker"]]
    return out.sort_values(["mentions", "name"], ascending=[False, True])[["id", "name", "type", "mentions"]] \
        .reset_index(drop=True)


def clicked(value: Mapping | None) -> tuple[str, str] | None:
    """What a click in the graph component picked: ``("node", entity_id)``, ``("edge", edge_id)`` or None."""
    if not isinstance(value, Mapping):
        return None
    kind, ident = value.get("kind"), value.get("id")
    if kind in ("node", "edge") and isinstance(ident, str) and ident:
        return kind, ident
    return None

def resolve_entity(anchors: AnchorSet, ref: str | None) -> str | None:
    """An entity id from an id, a name or an alias (case-insensitive), as another page may pass one."""
    if not ref:
        return None
    ref = ref.strip()
    low = ref.lower()
    for e in anchors.entities:
        if e.id == ref:
            return e.id
    for e in anchors.entities:
        if e.name.lower() == low or any(a.lower() == low for a in e.aliases):
            return e.id
    return None

def entity_profile(entity: Entity) -> dict:
    """A profile as plain rows for display: attributes and relations with their cited utterance ids."""
    return {
        "attributes": [{"key": a.key, "value": a.value, "sources": ", ".join(a.source_ids)} for a in entity.attributes],
        "relations": [{"predicate": r.predicate, "target": r.target,
                       **({"confidence": getattr(r, "confidence", None)} if any(
                           getattr(x, "confidence", None) is not None for x in entity.relations) else {}),
                       "sources": ", ".join(r.source_ids)} for r in entity.relations],
        "merges": [{"alias": m.alias, "was": m.alias_id, "reason": m.reason, "sources": ", ".join(m.source_ids)}
                   for m in entity.merges],
        "checks": [{"field": c.field, "supported": c.supported, "score": round(c.score, 2), "method": c.method,
                    "note": c.note} for c in entity.checks],
    }

"""The entity graph: a networkx graph from entity profiles, filtered, and its offline pyvis HTML.

Every string that came from a conversation is HTML-escaped before it enters the page. pyvis hands
node titles to ``innerHTML`` in one of its templates, so escaping is the safety line; a small script
in the page then turns the escaped strings back into plain text for text-only sinks (the canvas
label and a tooltip element filled through ``innerText``), so names read as typed and run nothing.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import networkx as nx

from ..anchors import AnchorSet, Entity
from . import type_color

_CDN_TAG = re.compile(r"<(link|script)\b[^>]*\bhttps?://[^>]*>(\s*</script>)?", re.IGNORECASE)
_HREF = re.compile("href", re.IGNORECASE)

# Decodes escaped strings into text-only sinks: canvas labels and innerText tooltips.
_TEXT_SCRIPT = """
function gsText(s) { var t = document.createElement('textarea'); t.innerHTML = s; return t.value; }
function gsTip(s) { var d = document.createElement('div'); d.className = 'gs-tip'; d.innerText = gsText(s); return d; }
nodes.forEach(function (n) {
  var u = {id: n.id};
  if (typeof n.label === 'string') u.label = gsText(n.label);
  if (typeof n.title === 'string') u.title = gsTip(n.title);
  nodes.update(u);
});
edges.forEach(function (e) {
  var u = {id: e.id};
  if (typeof e.label === 'string') u.label = gsText(e.label);
  if (typeof e.title === 'string') u.title = gsTip(e.title);
  edges.update(u);
});
"""
_TIP_STYLE = "<style>.gs-tip{white-space:pre-wrap;max-width:360px;font:13px sans-serif}</style>"


def esc(text: object) -> str:
    """HTML-escape a conversation string for the graph page (also defuses pyvis's 'href' popup switch)."""
    return _HREF.sub(lambda m: m.group(0)[:2] + "&#" + str(ord(m.group(0)[2])) + ";" + m.group(0)[3:],
                     html.escape(str(text), quote=True))


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
            g.add_edge(e.id, target, predicate=r.predicate, source_ids=list(r.source_ids),
                       sessions=sorted(_session_of(r.source_ids, session_by_utt)), kind="relation")
    return g


def add_co_mentions(g: nx.MultiDiGraph, anchors: AnchorSet, min_shared: int = 2) -> nx.MultiDiGraph:
    """Add a 'mentioned with' edge between entities cited together by at least ``min_shared`` utterances.

    Extracted relations are sparse; shared source utterances show who appears with whom.
    """
    cited: dict[str, set[str]] = {}
    for e in anchors.entities:
        if e.id in g:
            for sid in e.source_ids:
                cited.setdefault(sid, set()).add(e.id)
    shared: dict[tuple[str, str], list[str]] = {}
    for sid, ids in cited.items():
        for a in ids:
            for b in ids:
                if a < b:
                    shared.setdefault((a, b), []).append(sid)
    for (a, b), sids in shared.items():
        if len(sids) >= min_shared and not g.has_edge(a, b) and not g.has_edge(b, a):
            g.add_edge(a, b, predicate=f"mentioned with ({len(sids)})", source_ids=sorted(sids), sessions=[],
                       kind="co-mention")
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


def node_size(mentions: int) -> float:
    # Square-root scaling: a chatty speaker should not dwarf every other node.
    return 10.0 + 4.0 * min(mentions, 400) ** 0.5


def graph_html(g: nx.MultiDiGraph, *, height: int = 620, physics: bool = True) -> str:
    """Self-contained HTML (vis-network inlined, nothing fetched) drawing the graph."""
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", bgcolor="#ffffff")
    for n, d in g.nodes(data=True):
        tip = f"{d['name']} ({d['type']})\nmentions: {d['mentions']}"
        if d["aliases"]:
            tip += "\naka " + ", ".join(d["aliases"])
        if d["description"]:
            tip += "\n" + d["description"][:300]
        net.add_node(str(n), label=esc(d["name"]), title=esc(tip), color=type_color(d["type"]),
                     size=node_size(d["mentions"]), font={"size": 14})
    for u, v, d in g.edges(data=True):
        if d.get("kind") == "co-mention":
            # Unlabelled and light: context, not a claim the extractor made.
            net.add_edge(str(u), str(v), title=esc(d["predicate"]), color="#d9dee4", dashes=True, arrows="",
                         width=1)
        else:
            net.add_edge(str(u), str(v), label=esc(d["predicate"]), title=esc(d["predicate"]), arrows="to",
                         color="#7b8794", width=2, font={"size": 11, "align": "middle", "color": "#3e4c59"})
    net.set_options(_options(physics, len(g)))
    page = net.generate_html()
    page = _CDN_TAG.sub("", page)  # pyvis links bootstrap from a CDN even in in_line mode; the graph needs none of it
    page = page.replace("network = new vis.Network(container, data, options);",
                        _TEXT_SCRIPT + "\nnetwork = new vis.Network(container, data, options);", 1)
    page = page.replace("</head>", _TIP_STYLE + "</head>", 1)
    return page


def _options(physics: bool, n_nodes: int) -> str:
    # Fewer stabilization iterations on large graphs: the first paint matters more than a perfect layout.
    iterations = 150 if n_nodes < 150 else 60
    return f"""{{
      "physics": {{"enabled": {str(physics).lower()}, "solver": "forceAtlas2Based",
                   "forceAtlas2Based": {{"gravitationalConstant": -60, "springLength": 120}},
                   "stabilization": {{"iterations": {iterations}}}}},
      "interaction": {{"hover": true, "tooltipDelay": 120, "navigationButtons": false}},
      "edges": {{"smooth": {{"type": "dynamic"}}}}
    }}"""


def entity_profile(entity: Entity) -> dict:
    """A profile as plain rows for display: attributes and relations with their cited utterance ids."""
    return {
        "attributes": [{"key": a.key, "value": a.value, "sources": ", ".join(a.source_ids)} for a in entity.attributes],
        "relations": [{"predicate": r.predicate, "target": r.target, "sources": ", ".join(r.source_ids)}
                      for r in entity.relations],
        "merges": [{"alias": m.alias, "was": m.alias_id, "reason": m.reason, "sources": ", ".join(m.source_ids)}
                   for m in entity.merges],
        "checks": [{"field": c.field, "supported": c.supported, "score": round(c.score, 2), "method": c.method,
                    "note": c.note} for c in entity.checks],
    }

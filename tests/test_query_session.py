"""The host side shared by ask, measure and evaluate: sessions, fusion rules and budgets."""

from __future__ import annotations

import pytest
from query_fixtures import make_store

from gravity_engine.hosts import get_host
from gravity_engine.hosts.base import Memory
from gravity_engine.query import QueryConfig, ask
from gravity_engine.query.config import get_variant
from gravity_engine.query.pipeline import GravityQuery
from gravity_engine.query.config import Budget
from gravity_engine.query.session import HostSession, fuse, fuse_slots, run_question

QUESTION = "When did Caroline go to the LGBTQ support group?"


def _m(uid):
    return Memory(text=uid, utterance_ids=[uid])


def _ids(fused):
    return [m.utterance_ids[0] for m, _, _ in fused]


def test_fusion_keep_pins_the_hosts_first_hits():
    original = [_m("a"), _m("b"), _m("c")]
    expansion = [_m("d"), _m("c")]
    assert _ids(fuse([original, expansion], [1.0, 1.0], k=3, keep=0))[0] == "c"
    assert _ids(fuse([original, expansion], [1.0, 1.0], k=3, keep=2)) == ["a", "b", "c"]


def test_slots_fusion_gives_each_expansion_its_best_new_memory_in_turn():
    original = [_m("a"), _m("b"), _m("c"), _m("d")]
    e1, e2 = [_m("a"), _m("x"), _m("y")], [_m("z"), _m("x")]
    fused = fuse_slots([original, e1, e2], k=5, keep=2)
    assert _ids(fused) == ["a", "b", "z", "x", "y"]  # a is taken already: e1 gives x at rank 2
    assert fused[0][2] == [0, 1] and fused[3][2] == [1, 2]  # where each memory came from
    assert _ids(fuse_slots([original], k=3, keep=1)) == ["a", "b", "c"]  # no expansion: the host's order


@pytest.fixture
def parts(fake_embedder):
    store = make_store(fake_embedder)
    host = get_host("dense", embedder=fake_embedder, use_cache=False)
    session = HostSession(host, store.conversation, fake_embedder)
    return store, GravityQuery(store, fake_embedder), session


def test_a_host_on_the_same_model_searches_by_vector_and_nothing_is_encoded_twice(parts, fake_embedder, monkeypatch):
    store, gq, session = parts
    assert session.by_vector
    calls = []
    real = fake_embedder.encode
    monkeypatch.setattr(fake_embedder, "encode", lambda texts: calls.append(list(texts)) or real(texts))
    run = run_question(gq, session, QUESTION)
    assert calls == [[QUESTION]]  # the question once; the expansions' embeddings were stored at build time
    assert run.gravity.expansions and all(e.vector is not None for e in run.gravity.expansions)
    assert len(run.expanded) == len(run.gravity.expansions)


def test_budgets_equal_additive_and_host_k(parts):
    store, gq, session = parts
    cfg = get_variant("full")
    equal = run_question(gq, session, QUESTION, config=cfg.with_(total=120, pool=20))
    assert equal.with_.anchors.total_tokens <= 48
    assert equal.without.tokens <= 120 and equal.with_.tokens <= 120
    assert equal.with_.memory_tokens <= 120 - equal.with_.anchors.total_tokens
    additive = run_question(gq, session, QUESTION, config=cfg.with_(total=120, pool=20, additive=True))
    assert additive.with_.anchors.total_tokens > 0  # anchors on top of the full memory budget
    assert additive.with_.memory_tokens <= 120 < additive.with_.tokens
    assert additive.without.memory_lines == equal.without.memory_lines
    plain = run_question(gq, session, QUESTION, config=cfg)  # ask's default: the host's k, anchors on top
    assert len(plain.without.memories) == min(10, len(plain.original))
    assert plain.with_.anchors.total_tokens <= cfg.budget.anchor_budget
    lines = plain.with_.lines()
    assert lines[: len(plain.with_.memory_lines)] == plain.with_.memory_lines and "## Event Records" in lines


def test_baseline_has_no_anchors_and_no_expansion(parts):
    store, gq, session = parts
    run = run_question(gq, session, QUESTION, config=get_variant("baseline").with_(total=200))
    assert run.with_ is run.without and not run.expanded and run.with_.anchors.total_tokens == 0


def test_ask_trace_keeps_line_ids_and_names_what_gravity_pushed_out(parts, fake_embedder):
    store, gq, session = parts
    tr = ask(store, session.host, QUESTION, QueryConfig(), session=session).trace
    events = next(b for b in tr.blocks if b.module == "events")
    assert events.lines and all(ln.source_ids and ln.anchor_id for ln in events.lines)
    assert "sources" not in events.text
    assert all(e.stored_vector for e in tr.expansions)
    kept = {m.text for m in tr.merged}
    assert all(m.text not in kept for m in tr.pushed_out)


def test_paper_variant_is_the_methods_literal_reading():
    paper = get_variant("paper")
    assert (paper.lines.question_aware, paper.lines.packing) == (False, "anchors")
    assert (paper.selection.widen, paper.fusion.fusion_method) == (False, "rrf")
    assert paper.budget.anchor_budget is None and get_variant("method") is paper
    full = get_variant("full")
    assert full.lines.question_aware and full.lines.packing == "lines"
    rrk = get_variant("-rrk")
    changed = {k for k, v in rrk.options().items() if v != full.options()[k]}
    assert changed == {"rerank"} and rrk.mode == full.mode  # -rrk changes exactly one thing


def _people():
    from gravity_engine.anchors import AnchorSet, Entity

    return AnchorSet(conversation_id="names", entities=[
        Entity(id="p", name="Priya", type="person"),
        Entity(id="l", name="Lena Ortiz", type="person", aliases=["Lena"]),
        Entity(id="m", name="Marco Silva", type="person", aliases=["Marco", "Silva"]),
        Entity(id="a1", name="Anna Berg", type="person", aliases=["Anna"]),
        Entity(id="a2", name="Anna Kowalski", type="person", aliases=["Anna"]),
        Entity(id="k", name="Kenji Watanabe", type="person"),  # never called "Kenji" on his own
        Entity(id="c", name="Cedar Valley Clinic", type="organization", aliases=["Cedar"]),
    ])


def test_full_names_of_the_first_names_a_context_uses():
    from gravity_engine.query.names import FullNames, render

    names = FullNames(_people(), ["Priya", "Tom"])
    text = "Priya: Lena and Marco are co-authors. Anna came too. Kenji trained it at Cedar."
    assert names.used_in(text) == [("Lena", "Lena Ortiz"), ("Marco", "Marco Silva")]
    assert names.used_in("Lena Ortiz said Lena was late; Marcos called.") == []  # written in full; no whole word
    assert render(names.used_in(text)) == "## Full Names\n- Lena: Lena Ortiz\n- Marco: Marco Silva"


def test_full_names_take_their_room_from_the_memories_under_an_equal_budget():
    from types import SimpleNamespace

    from gravity_engine.query.inject import InjectedContext, count_tokens
    from gravity_engine.query.names import FullNames
    from gravity_engine.query.session import ContextPack, _add_full_names

    lines = ["Priya: Lena and Marco are co-authors.", "Tom: Great!", "Priya: Thanks."]
    pack = ContextPack(memories=[_m(f"D1:{i}") for i in range(3)], memory_lines=list(lines),
                       memory_tokens=sum(count_tokens(x) + 1 for x in lines), anchors=InjectedContext())
    gq = SimpleNamespace(full_names=FullNames(_people(), ["Priya", "Tom"]))
    total = pack.tokens + 2
    _add_full_names(gq, pack, Budget(total=total))
    assert "- Marco: Marco Silva" in pack.lines()
    assert pack.tokens <= total  # the last memories made room
    assert pack.memory_lines == lines[: len(pack.memory_lines)] and len(pack.memory_lines) < 3
    assert len(pack.memories) == len(pack.memory_lines)
    assert pack.memory_tokens == sum(count_tokens(x) + 1 for x in pack.memory_lines)
    on_top = ContextPack(memories=[_m("D1:0")], memory_lines=lines[:1], memory_tokens=count_tokens(lines[0]) + 1)
    _add_full_names(gq, on_top, Budget(total=on_top.tokens, additive=True))
    assert on_top.memory_lines == lines[:1] and on_top.anchors.total_tokens > 0  # additive: names on top


def test_under_an_equal_budget_lines_worth_less_than_the_memory_they_push_out_give_their_room_back(parts):
    store, gq, session = parts
    full = get_variant("full").with_(total=150, pool=20)
    question = "What career is Caroline interested in?"
    always = run_question(gq, session, question, config=full.with_(memory_floor=None))
    strict = run_question(gq, session, question, config=full.with_(memory_floor=1.0))
    assert always.with_.anchors.total_tokens > 0 and len(always.with_.memories) < len(always.without.memories)
    assert strict.with_.anchors.total_tokens < always.with_.anchors.total_tokens
    assert len(strict.with_.memories) > len(always.with_.memories)  # the room went back to the memories
    assert strict.with_.tokens <= 150
    # a temporal slot's event is pinned: it stays whatever the memories are worth
    when = run_question(gq, session, QUESTION, config=full.with_(memory_floor=1.0))
    pinned = [s.line.anchor_id for lines in when.with_.anchors.lines.values() for s in lines if s.pinned]
    assert pinned and all(s.pinned for lines in when.with_.anchors.lines.values() for s in lines)
    on_top = [run_question(gq, session, question, config=full.with_(memory_floor=f, additive=True)).with_.anchors.text
              for f in (1.0, None)]
    assert on_top[0] == on_top[1]  # memories are not at stake when the anchors come on top
    summaries = [run_question(gq, session, question, config=get_variant("+Sum").with_(memory_floor=f, total=150, pool=20))
                 .with_.anchors.text for f in (1.0, None)]
    assert summaries[0] and summaries[0] == summaries[1]  # summaries are no anchor lines: the floor leaves them be

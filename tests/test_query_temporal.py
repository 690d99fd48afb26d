"""Temporal preservation: question time expressions, their ranges, and reserved event slots."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from query_fixtures import make_store

from gravity_engine.query import GravityQuery, QueryConfig
from gravity_engine.query.config import FULL
from gravity_engine.query.temporal import QuerySpan, detect, matching_events

REF = date(2023, 8, 15)
WORDS = lambda text: len(text.split())  # noqa: E731 - keeps the tokenizer out of these tests


@pytest.mark.parametrize("question, kind, start, end", [
    ("What did Caroline do recently?", None, "2023", "2023-08-15"),
    ("What did Mel paint last year?", "expression", "2022-01-01", "2022-12-31"),
    ("What happened before May 2023?", "before", None, "2023-04-30"),
    ("What did she do after 20 June 2023?", "after", "2023-06-21", None),
    ("Where did they go in 2022?", "expression", "2022-01-01", "2022-12-31"),
], ids=["recently", "last-year", "before", "after", "year"])
def test_detect_resolves_against_the_reference(question, kind, start, end):
    qt = detect(question, REF)
    assert qt.reference == REF and len(qt.spans) == 1
    span = qt.spans[0].as_dict()
    if kind:
        assert span["kind"] == kind
    assert (span["start"] or "").startswith(start or "") and (start is not None) == (span["start"] is not None)
    assert span["end"] == end


def test_when_questions_and_missing_reference():
    assert detect("When did Caroline go to the LGBTQ support group?", REF).asks_when
    assert detect("What year did they meet?", REF).asks_when
    assert not detect("Who is Oscar?", REF).asks_when
    # a "when" that is one part of a question asks for a date too; a "when" clause inside does not
    assert detect("Who approved the retrained encoder, and when?", REF).asks_when
    assert detect("Where and when was the workshop held?", REF).asks_when
    assert detect("When did Tom hurt his Achilles, and since when has he seen a physio?", REF).asks_when
    assert not detect("What did Tom do when he lost?", REF).asks_when
    qt = detect("What did she do recently?", None)
    assert qt.spans == [] and qt.unresolved == ["recently"]


def test_matching_events_handles_open_ranges_and_undated():
    start = np.array([date(2023, 5, 1).toordinal(), date(2023, 7, 1).toordinal(), -1])
    end = np.array([date(2023, 5, 7).toordinal(), date(2023, 7, 1).toordinal(), -1])
    assert matching_events([QuerySpan("before June", None, date(2023, 5, 31), "before")], start, end).tolist() == [True, False, False]
    assert matching_events([QuerySpan("May 5", date(2023, 5, 5), date(2023, 5, 5), "expression")], start, end).tolist() == [True, False, False]
    assert matching_events([QuerySpan("after", date(2023, 6, 1), None, "after")], start, end).tolist() == [False, True, False]


def test_temporal_slots_keep_dated_events_regardless_of_similarity(fake_embedder):
    store = make_store(fake_embedder)
    gq = GravityQuery(store, fake_embedder, QueryConfig(sigma=0.99, temporal_slots=2, widen=True), count=WORDS)
    result = gq.run("What happened in June 2023?")
    sel = result.modules["events"]
    kept = [store.anchors.events[r].id for r in sel.kept]
    assert set(kept) == {"v3", "v4"}  # the two June events, although far below sigma
    statuses = {store.anchors.events[r].id: s for r, s in zip(sel.rows, sel.status)}
    assert statuses["v3"] == statuses["v4"] == "temporal slot"
    assert statuses["v1"] == "below sigma"
    off = GravityQuery(store, fake_embedder, FULL.with_(sigma=0.99, temporal_preservation=False),
                       count=WORDS).run("What happened in June 2023?")
    assert off.modules["events"].kept == []


def test_temporal_slots_are_capped_by_r(fake_embedder):
    store = make_store(fake_embedder)
    result = GravityQuery(store, fake_embedder, QueryConfig(sigma=0.99, temporal_slots=1), count=WORDS).run("What happened in 2023?")
    assert result.modules["events"].status.count("temporal slot") == 1


def test_question_date_overrides_the_last_session(fake_embedder):
    store = make_store(fake_embedder)
    gq = GravityQuery(store, fake_embedder, count=WORDS)
    assert gq.run("What happened last month?").qtime.spans[0].start == date(2023, 7, 1)
    assert gq.run("What happened last month?", question_date="2023-06-10").qtime.spans[0].start == date(2023, 5, 1)


def test_before_and_after_an_event_take_its_resolved_date_as_the_boundary(embedder):
    from gravity_engine.query.pipeline import GravityQuery
    from query_fixtures import make_store

    g = GravityQuery(make_store(embedder), embedder)
    result = g.run("What did Melanie do after the charity race?")
    spans = [s for s in result.qtime.spans if s.kind == "after"]
    assert spans and spans[0].start.isoformat() == "2023-06-18" and "v4" in spans[0].text
    kept = {e.id for e in result.selected["events"]}
    assert {"v5", "v6"} <= kept  # the later events hold the temporal slots
    before = g.run("What happened before the talk at the school?").qtime
    spans = [s for s in before.spans if s.kind == "before"]
    assert spans and spans[0].end.isoformat() == "2023-08-14"


def test_event_refs_are_not_taken_from_dates():
    from gravity_engine.query.temporal import detect

    assert detect("What did she do after 2022?", "2023-10-01").event_refs == []
    assert detect("What did she do after the wedding?", "2023-10-01").event_refs == [("after", "the wedding")]


def test_a_question_about_time_ranks_events_by_their_lines(fake_embedder):
    """The compact vectors are scrambled here (each event gets another's): a "when" question still finds its
    event through the event lines, the same question with the option off and a question not about time do not."""
    store = make_store(fake_embedder)
    store.embeddings["events"] = store.embeddings["events"][::-1].copy()
    config = QueryConfig(K_V=1, temporal_slots=0, sigma=-1.0, temporal_lexical=0.0, temporal_source_weight=0.0)
    gq = GravityQuery(store, fake_embedder, config, count=WORDS)

    def top_event(question, cfg):
        return gq.run(question, config=cfg).selected["events"][0].id

    when = "When did Caroline go to the LGBTQ support group?"
    assert top_event(when, config) == "v1"
    assert top_event(when, config.with_(temporal_event_lines=False)) != "v1"
    assert top_event("Did Caroline go to the LGBTQ support group?", config) != "v1"


def test_a_question_about_time_ranks_events_by_their_words_and_cited_utterances(fake_embedder):
    """Lines off and compact vectors scrambled: the question's words in the event or the cosine of the
    utterance an event cites bring it back."""
    from gravity_engine.store import embed_utterances

    store = make_store(fake_embedder)
    store.embeddings["events"] = store.embeddings["events"][::-1].copy()
    off = QueryConfig(K_V=1, temporal_slots=0, sigma=-1.0, temporal_event_lines=False, temporal_lexical=0.0,
                      temporal_source_weight=0.0)
    gq = GravityQuery(store, fake_embedder, off, count=WORDS)
    when = "When did Caroline go to the LGBTQ support group?"

    def top_event(cfg):
        return gq.run(when, config=cfg).selected["events"][0].id

    assert top_event(off) != "v1"
    assert top_event(off.with_(temporal_lexical=1.0)) == "v1"
    assert top_event(off.with_(temporal_source_weight=1.0)) != "v1"  # no utterance vectors stored: nothing to mix
    store.utterance_vectors = embed_utterances(store.conversation, fake_embedder)
    gq = GravityQuery(store, fake_embedder, off, count=WORDS)
    assert top_event(off.with_(temporal_source_weight=1.0)) == "v1"
    assert gq.run("Did Caroline go to the LGBTQ support group?", config=off.with_(temporal_lexical=1.0)) \
        .selected["events"][0].id != "v1"  # not about time: words and utterances stay out


def test_stems_meet_across_inflections():
    from gravity_engine.text import content_tokens, stems

    assert stems(content_tokens("When did Maria adopt a dog?")) == stems(content_tokens("Maria adopted dogs"))

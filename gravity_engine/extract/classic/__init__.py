"""The ``classic`` extraction backend: offline NLP (spaCy, regex time grammar, embeddings + clustering).

Per batch: entity profiles and event records from a spaCy parse. Once per build (``finalize``):
topic arcs by clustering every utterance's embedding, then links between anchors (event -> topic,
event -> the participant's previous event, relation -> target entity) and pruning of proper nouns
that were seen only once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...anchors import AnchorSet, Attribute, Event, KeyFact, Relation
from ...conversation import Conversation
from ...embed import DEFAULT_MODEL, Embedder, get_embedder
from ..base import Batch, BatchAnchors
from .answers import parsed_statements
from .entities import extract_entities
from .events import extract_events
from .facts import FACT_KEY
from ..learned.apply import apply_learned
from ..learned.encoder import get_token_encoder
from ..learned.heads import load_models
from .inference import infer_relations
from .nicknames import merge_speaker_nicknames
from .nlp import SPACY_MODEL, parse
from .profiles import capitalised_inside
from .topics import build_topics, embed_cached
from .wordlists import word_list

__all__ = word_list("extractor", "__all__")

# Bump when a change to this backend changes what it extracts: checkpoints and stores record it, so a
# rebuild re-extracts instead of reusing batches the old code wrote.
EXTRACTOR_VERSION = "21"
PERSON_PET_CUES = 3  # utterances with pet words that make a person-typed name a pet (2 for other types)
PARSE_CHUNK = 160  # utterances per spaCy call in extract_batches
_LOWER_WORD = re.compile(r"\b[a-z][a-z'-]+\b")
_WORDS = re.compile(r"[A-Za-z][\w'’-]*")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_PET_PARTS = (r"(?:paws?|tail|fur|whiskers|collar|lead|leash|cone|kennel|jabs|flea|fleas|hutch|cage|beak|feathers"
              r"|mane)\b")
_PET_CUES = re.compile(r"\b(dogs?|pupp(?:y|ies)|pups?|cats?|kitt(?:y|en)s?|vet|leash|dog park|walkies|paws?|"
                       r"bark(?:s|ed|ing)?|fetch|treats|litter|kennel|groomer|fur)\b", re.I)


class ClassicExtractor:
    """Offline extractor. ``embedder`` defaults to the shared sentence-transformers model, loaded lazily."""

    name = "classic"

    def __init__(self, embedder: Embedder | None = None, spacy_model: str = SPACY_MODEL, learned: bool = True,
                 new_relations: bool | None = None):
        self._embedder = embedder
        self.spacy_model = spacy_model
        # The learned heads decide types, references and relations (``extract.learned``); off, the rules' own
        # proposals stand (what ``gravity train`` learns from).
        self.models = load_models() if learned else None
        # Whether the relation head may relate a pair the rules did not: off unless asked for
        # (GRAVITY_LEARNED_RELATIONS=1), since on LoCoMo 17 of the 39 it added were judged right (docs/learned.md).
        if new_relations is None:
            new_relations = os.environ.get("GRAVITY_LEARNED_RELATIONS", "").strip().lower() in ("1", "true", "yes")
        self.new_relations = bool(new_relations and self.models)
        self.learned_stats: dict[str, int] = {}
        # Utterance vectors by (model, text): a second finalize (incremental build) re-encodes only new text.
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        # Noun phrases per utterance id, from the batch parse: topic labels a person would use.
        self._chunks: dict[str, list[str]] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def describe(self) -> dict[str, Any]:
        model = self._embedder.name if self._embedder is not None else DEFAULT_MODEL
        return {"backend": "classic", "version": EXTRACTOR_VERSION, "spacy_model": self.spacy_model,
                "embedding_model": model, "learned": self.models.version if self.models else None,
                "learned_new_relations": self.new_relations}

    def extract_batch(self, batch: Batch) -> BatchAnchors:
        # Image captions are not words anyone said: parse the text only (topics do see captions).
        return self._from_docs(batch, parse([u.text for u in batch.utterances], self.spacy_model))

    def extract_batches(self, batches: list[Batch]) -> Iterator[tuple[Batch, BatchAnchors | Exception]]:
        """Like ``extract_batch`` over many batches, parsing ~PARSE_CHUNK utterances per spaCy call.

        spaCy runs about 1.6x faster on a few large calls than on one small call per batch.
        """
        chunk: list[Batch] = []
        for batch in [*batches, None]:
            if batch is not None and sum(len(b.utterances) for b in chunk) + len(batch.utterances) <= PARSE_CHUNK:
                chunk.append(batch)
                continue
            if chunk:
                yield from self._extract_chunk(chunk)
            chunk = [batch] if batch is not None else []

    def _extract_chunk(self, chunk: list[Batch]) -> Iterator[tuple[Batch, BatchAnchors | Exception]]:
        try:
            docs = parse([u.text for b in chunk for u in b.utterances], self.spacy_model)
        except Exception as err:  # the build records failed batches and goes on
            for batch in chunk:
                yield batch, err
            return
        start = 0
        for batch in chunk:
            batch_docs = docs[start:start + len(batch.utterances)]
            start += len(batch.utterances)
            try:
                yield batch, self._from_docs(batch, batch_docs)
            except Exception as err:
                yield batch, err

    def _from_docs(self, batch: Batch, docs: list) -> BatchAnchors:
        for utt, doc in zip(batch.utterances, docs):
            self._chunks[utt.id] = noun_phrases(doc)
        answered = parsed_statements(batch.utterances, docs, self.spacy_model)
        entities = extract_entities(batch, docs, answered)
        events = extract_events(batch, docs, answered)
        return BatchAnchors(entities=entities, events=events,
                            stats={"utterances": len(batch.utterances),
                                   "events_dated": sum(bool(e.date_start) for e in events)})

    def propose_entities(self, conversation: Conversation, anchors: AnchorSet, lenient: bool | None = None) -> None:
        """The rules' whole-conversation pass over entities: pets by context, names that are no names, relations
        the conversation implies. What the learned heads then decide from. ``lenient`` (the default when the
        heads decide) keeps names said once: the typing head tells a name from junk better than a count."""
        lenient = self.models is not None if lenient is None else lenient
        lowercase = lowercase_words(conversation)
        merge_speaker_nicknames(anchors, conversation)
        _pets_by_context(anchors, conversation, lowercase)
        _prune_and_link_entities(anchors, conversation, lowercase, lenient=lenient)
        infer_relations(anchors)

    def finalize(self, conversation: Conversation, anchors: AnchorSet, new_session_ids: list[str]) -> AnchorSet:
        """Recompute topics over the whole conversation (a few seconds at most), then link anchors.

        Topics are rebuilt even in an incremental build: a new session can merge or split clusters,
        and a re-encode costs only the new utterances because vectors are cached per text.
        """
        self.propose_entities(conversation, anchors)
        if self.models is not None:
            encoder = get_token_encoder(layer=self.models.layer)
            self.learned_stats = apply_learned(anchors, conversation, self.models, encoder,
                                               new_relations=self.new_relations)
        facts = [KeyFact(text=a.value, source_ids=list(a.source_ids))
                 for e in anchors.entities for a in e.attributes if a.key == FACT_KEY]
        # A resumed or incremental build read some batches in another process: parse them again for their noun
        # phrases, or the topics they join get lowercase keyword labels ("northwind health") a fresh build has not
        missing = [u for u in conversation.utterances() if u.id not in self._chunks]
        if missing:
            for utt, doc in zip(missing, parse([u.text for u in missing], self.spacy_model)):
                self._chunks[utt.id] = noun_phrases(doc)
        topics, assignment = build_topics(conversation, embed_cached(self.embedder, self._vectors), facts=facts,
                                          chunks=self._chunks)
        anchors.topics = topics
        for event in anchors.events:
            event.topic_id = next((assignment[s] for s in event.source_ids if s in assignment), None)
        link_follows(anchors.events, conversation)
        return anchors


_CHUNK_SKIP_POS = set(word_list("extractor", "_CHUNK_SKIP_POS"))
_VAGUE_HEADS = set(word_list("extractor", "_VAGUE_HEADS"))


def noun_phrases(doc) -> list[str]:
    """Lowercased noun phrases of a parse without determiners or possessives ("adoption agencies")."""
    out: list[str] = []
    for chunk in doc.noun_chunks:
        words = [t for t in chunk if t.pos_ not in _CHUNK_SKIP_POS and t.dep_ != "poss" and t.pos_ != "ADJ"
                 or (t.pos_ == "ADJ" and t.i == chunk.root.i)]
        if not words or chunk.root.pos_ not in ("NOUN", "PROPN") or chunk.root.lower_ in _VAGUE_HEADS:
            continue
        words = words[-3:]
        if words[0].i != chunk.root.i and words[-1].i != chunk.root.i:
            continue
        out.append(" ".join(t.text if t.pos_ == "PROPN" else t.lower_ for t in words))
    return out


def link_follows(events: list[Event], conversation: Conversation) -> None:
    """``follows``: each dated event points to the previous dated event of each of its participants."""
    order = {s.id: k for k, s in enumerate(conversation.sessions)}
    dated = [e for e in events if e.date_start]
    dated.sort(key=lambda e: (e.date_start, e.date_end or e.date_start, order.get(e.session_id, 0)))
    previous: dict[str, Event] = {}
    for event in dated:
        links: list[str] = []
        for person in event.participants:
            before = previous.get(person)
            if before is not None and before.id != event.id and before.id not in links:
                links.append(before.id)
            previous[person] = event
        event.follows = links


def standalone_capitalised(conversation: Conversation) -> set[str]:
    """``capitalised_inside`` over the whole conversation."""
    return capitalised_inside(u.text for u in conversation.utterances())


def lowercase_words(conversation: Conversation) -> set[str]:
    """Every word written in lowercase somewhere in the conversation: a name also written so is a word ("Glad",
    "Nature"), not a name."""
    return {w for u in conversation.utterances() for w in _LOWER_WORD.findall(u.text)}


def _pets_by_context(anchors: AnchorSet, conversation: Conversation, lowercase: set[str] | None = None) -> None:
    """A name talked about with pet words around it ("Biscuit got sick ... the vet", "Smart dog.")
    is a pet; its owner is the speaker who talks of it most as theirs: their statements about it, and the other
    speaker's questions after it ("How's Pickle's paw?")."""
    speakers = {s.lower() for s in conversation.speakers}
    utts = list(conversation.utterances())
    # a word also written in lowercase is no name ("Nature is so soothing" beside "out in nature"): the pruning
    # below drops it, unless a pet relation made here kept it
    lowercase = lowercase_words(conversation) if lowercase is None else lowercase
    # a question about a name asks after the listener's: the one other speaker, if there is just one
    listener = {s: others[0] if len(others := [o for o in conversation.speakers if o != s]) == 1 else None
                for s in conversation.speakers}
    for e in anchors.entities:
        if e.type in ("pet", "place", "event", "project") or e.name.lower() in speakers or " " in e.name or any(
                a.key == "why" for a in e.attributes) or e.name.lower() in lowercase:
            continue
        name = re.compile(rf"\b{re.escape(e.name)}\b")
        # "German Shepherds are loyal", "a German Shepherd like Toby": the first word of a longer name, never alone
        alone = re.compile(rf"\b{re.escape(e.name)}\b(?! [A-Z])")
        parts = re.compile(rf"\b{re.escape(e.name)}['’]s {_PET_PARTS}")
        cued: list[str] = []
        owned_part = said_alone = False
        statements: dict[str, list[str]] = {}
        for k, u in enumerate(utts):
            if not name.search(u.text):
                continue
            said_alone = said_alone or bool(alone.search(u.text))
            owned_part = owned_part or bool(parts.search(u.text))
            nxt = utts[k + 1] if k + 1 < len(utts) and utts[k + 1].session_id == u.session_id else None
            if _PET_CUES.search(u.text) or (nxt is not None and _PET_CUES.search(nxt.text)):
                cued.append(u.id)
            # who talks of it as theirs: a statement is the speaker's, a question about it ("How's Pickle's paw?")
            # asks after the listener's
            asked = any(name.search(sent) and sent.rstrip().endswith("?") for sent in _SENTENCES.split(u.text))
            who = listener.get(u.speaker) if asked else u.speaker
            if who is not None:
                statements.setdefault(who, []).append(u.id)
        # A name NER or a pattern calls a person needs more: a partner's name near talk of the family dog
        # ("it was Ines's idea, we got a dog") is said beside pet words once or twice, a pet's name keeps coming back.
        # "How's Pickle's paw?": what only an animal has settles it, with any pet word said about the name
        if not said_alone or len(cued) < (1 if owned_part else PERSON_PET_CUES if e.type == "person" else 2) or \
                not statements:
            continue
        ranked = sorted(statements.items(), key=lambda kv: -len(kv[1]))
        if len(ranked) > 1 and len(ranked[1][1]) >= len(ranked[0][1]):
            continue
        owner, said = ranked[0]
        evidence = [i for i in said if i in cued] or said[:2]
        e.type = "pet"
        e.description = f"pet of {owner} (talked about with pet words: {', '.join(cued[:3])})"
        e.attributes.append(Attribute(key="why", value=f"pet of {owner}", source_ids=evidence[:3]))
        owner_entity = next((x for x in anchors.entities if x.name == owner), None)
        if owner_entity is not None and not any(r.predicate == "owns_pet" and r.target == e.name
                                                for r in owner_entity.relations):
            owner_entity.relations.append(Relation(predicate="owns_pet", target=e.name, source_ids=evidence[:3]))


def _prune_and_link_entities(anchors: AnchorSet, conversation: Conversation,
                             lowercase: set[str] | None = None, lenient: bool = False) -> None:
    """Drop names that are not names, then point relations at their target profiles.

    Dropped: a one-word name also written in lowercase somewhere in the conversation ("Glad",
    "Pottery": capitalised only at a sentence start), a one-word name never written capitalised
    inside a sentence ("Fingers crossed."), and an untyped proper noun seen in one utterance only.
    Speakers, entities typed by context and anything a relation touches always stay.
    """
    lowercase = lowercase_words(conversation) if lowercase is None else lowercase
    standalone = standalone_capitalised(conversation)
    speakers = {s.lower() for s in conversation.speakers}
    targets = {r.target.lower() for e in anchors.entities for r in e.relations}

    def keep(e) -> bool:
        name = e.name.lower()
        if name in speakers or e.relations or name in targets or any(a.key == "why" for a in e.attributes):
            return True
        if " " not in name and (name in lowercase or (name not in standalone and not any(
                a.lower() in standalone for a in e.aliases))):
            return False
        return lenient or e.type != "other" or len(set(e.source_ids)) >= 2

    anchors.entities = [e for e in anchors.entities if keep(e)]
    by_name: dict[str, str] = {}
    for e in anchors.entities:
        for name in (e.name, *e.aliases):
            by_name.setdefault(name.lower(), e.id)
    for e in anchors.entities:
        for r in e.relations:
            r.target_id = by_name.get(r.target.lower(), r.target_id)

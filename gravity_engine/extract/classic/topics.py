"""Topic arcs across the whole conversation: cluster utterance embeddings, label clusters by their
distinctive words, and follow each cluster session by session.

Texts are written from the topic's atomic facts (``facts.py``: "Caroline is researching adoption
agencies") when the extractor gave any: key facts are the most central and specific facts, the
summary says who talks about what ("Caroline and Melanie talk about adoption agencies: ..."), and
each arc state lists that session's facts. Without facts (or for a session with none) a sentence of
the most central utterance, prefixed by its speaker, stands in. Labels are the cluster's most
distinctive noun phrase from the parse ("adoption agencies"), else its top keywords.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np

from ...anchors import KeyFact, Topic, TopicSession
from ...conversation import Conversation, Utterance
from ...embed import Embedder, normalize

MIN_CONTENT_WORDS = 4
MAX_TOPICS = 25
# Weight of the neighbouring utterances when embedding one: a short reply ("what kind of paint?")
# belongs to the topic of the turn it answers.
CONTEXT_WEIGHT = 0.35
_WORD = re.compile(r"[a-z][a-z']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_FINISHED = re.compile(r"\b(finished|completed|done with|wrapped up|is over|was over|resolved|fixed|graduated|"
                       r"sold|ended|got the job|signed|accepted|approved|final(?:ly)?)\b", re.I)
CHAT_WORDS = {
    "yeah", "yes", "wow", "thanks", "thank", "really", "great", "awesome", "amazing", "cool", "nice", "love",
    "glad", "hey", "hi", "hello", "oh", "good", "lot", "totally", "definitely", "sounds", "sure", "super", "lol",
    "haha", "know", "think", "just", "like", "feel", "feels", "felt", "things", "thing", "want", "going", "gonna",
    "got", "get", "make", "made", "did", "doing", "does", "don't", "i'm", "it's", "that's", "you're", "i've",
    "can't", "what's", "let", "keep", "way", "time", "much", "kind", "pretty", "stuff", "well", "also", "bit",
    "always", "mean", "sure", "look", "looks", "see", "say", "said", "tell", "hope", "happy", "proud", "wish",
    "agree", "appreciate", "right", "soon", "ago", "day", "today", "yesterday", "week", "last", "new",
    # what the token pattern leaves of contractions ("don't" -> "don")
    "don", "didn", "doesn", "isn", "wasn", "weren", "couldn", "wouldn", "shouldn", "haven", "hasn", "aren", "won",
    "can", "ain", "let's", "aww", "omg", "wanna", "talk", "chat", "catch", "soon", "bye",
    # common verbs and adjectives that make poor topic labels ("set, hallucination, interaction")
    "set", "come", "came", "need", "needs", "small", "big", "ask", "asked", "put", "take", "took", "use", "used",
    "try", "tried", "start", "started", "work", "worked", "long", "little", "old", "thought", "vibes", "place",
}


def _content_words(text: str, stop: frozenset[str]) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in stop and len(w) > 2 and "'" not in w]


def _stopwords(speakers: list[str]) -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    names = {part.lower() for s in speakers for part in s.split()}
    # Words with an apostrophe never survive the token pattern; passing them only makes sklearn warn.
    return frozenset(w for w in ENGLISH_STOP_WORDS | CHAT_WORDS | names if "'" not in w)


def _shorten(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _said(u: Utterance, limit: int = 200) -> str:
    return f"{u.speaker}: {_shorten(u.display_text(), limit)}"


def _n_clusters(n: int) -> int:
    return max(2, min(MAX_TOPICS, round(math.sqrt(n / 2))))


_MID_SENTENCE_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z]{2,})\b")


_CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december".split())


def proper_nouns(texts: list[str], stop: frozenset[str]) -> set[str]:
    """Lowercased words written capitalised inside a sentence (names of people, places, projects):
    a topic named after them ("MedKG", "Berlin") reads better than one named after common words."""
    names: set[str] = set()
    for text in texts:
        for sentence in _SENTENCE.split(text):
            names.update(m.lower() for m in _MID_SENTENCE_NAME.findall(sentence[1:]) if m.lower() not in stop)
    return names - _CALENDAR_WORDS


def label_from(words: list[str], names: set[str]) -> str:
    """Three keywords, a proper noun first when the topic has one."""
    named = [w for w in words if set(w.split()) & names]
    rest = [w for w in words if w not in named[:1]]
    return ", ".join((named[:1] + rest)[:3])


def _keywords(docs: list[str], stop: frozenset[str], top: int = 6) -> list[list[str]]:
    """The most distinctive words of each document against the others (TF-IDF)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    for max_df in (0.5, 1.0):  # with few clusters, a 0.5 cut can remove every term
        try:
            # only stop words the token pattern can produce, or sklearn warns they are inconsistent
            vec = TfidfVectorizer(stop_words=[w for w in stop if re.fullmatch(r"[a-zA-Z]{3,}", w)], ngram_range=(1, 2), max_df=max_df, sublinear_tf=True,
                                  token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]{2,}\b")
            matrix = vec.fit_transform(docs)
            break
        except ValueError:
            continue
    else:
        return [[] for _ in docs]
    terms = vec.get_feature_names_out()
    # Ties are common (every word said once scores alike): the single word first ("accepted", not "accepted
    # email"), then the vocabulary's order. numpy's default sort orders ties differently on CPUs with AVX-512,
    # so the same conversation got other keywords and labels on another machine.
    words_in = np.array([str(t).count(" ") for t in terms])
    out: list[list[str]] = []
    for row in matrix.toarray():
        words: list[str] = []
        for idx in np.lexsort((np.arange(len(row)), words_in, -row)):
            if row[idx] <= 0 or len(words) >= top:
                break
            term = str(terms[idx])
            # A term sharing a word with a kept keyword ("adopted" / "adopted dog") adds nothing.
            if any(set(term.split()) & set(w.split()) for w in words):
                continue
            words.append(term)
        out.append(words)
    return out


def cluster_utterances(vectors: np.ndarray, sessions: list[str]) -> np.ndarray:
    """A cluster label per utterance (ward linkage over context-smoothed, normalized embeddings)."""
    from sklearn.cluster import AgglomerativeClustering

    n = len(vectors)
    smoothed = vectors.copy()
    for i in range(n):
        for j in (i - 1, i + 1):
            if 0 <= j < n and sessions[j] == sessions[i]:
                smoothed[i] += CONTEXT_WEIGHT * vectors[j]
    smoothed = normalize(smoothed)
    return AgglomerativeClustering(n_clusters=min(_n_clusters(n), n), linkage="ward").fit_predict(smoothed)


def build_topics(conversation: Conversation, embed: Callable[[list[str]], np.ndarray],
                 facts: list[KeyFact] | None = None,
                 chunks: dict[str, list[str]] | None = None) -> tuple[list[Topic], dict[str, str]]:
    """Topic arcs of the conversation and a map utterance id -> topic id.

    ``embed`` takes a list of texts and returns their normalized vectors (one batched call);
    ``facts`` are atomic facts citing utterances, ``chunks`` noun phrases per utterance id.
    """
    facts_by_utt: dict[str, list[KeyFact]] = defaultdict(list)
    for fact in facts or []:
        for sid in fact.source_ids[:1]:
            facts_by_utt[sid].append(fact)
    chunks = chunks or {}
    stop = _stopwords(conversation.speakers)
    order = {s.id: k for k, s in enumerate(conversation.sessions)}
    session_time = {s.id: s.timestamp for s in conversation.sessions}
    utts = [u for u in conversation.utterances() if len(_content_words(u.display_text(), stop)) >= MIN_CONTENT_WORDS]
    if len(utts) < 4:
        return [], {}
    vectors = np.asarray(embed([u.display_text() for u in utts]), dtype=np.float32)
    labels = cluster_utterances(vectors, [u.session_id for u in utts])
    min_size = max(2, len(utts) // 150)
    members: dict[int, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        members[int(label)].append(i)
    clusters = [idx for idx in members.values() if len(idx) >= min_size]
    clusters.sort(key=lambda idx: (order.get(utts[idx[0]].session_id, 0), idx[0]))
    keywords = _keywords([" ".join(utts[i].display_text() for i in idx) for idx in clusters], stop)
    phrase_labels = _phrase_labels([[p for i in idx for p in chunks.get(utts[i].id, [])] for idx in clusters],
                                   stop, keywords)
    last_sessions = {s.id for s in conversation.sessions[-2:]}
    topics: list[Topic] = []
    assignment: dict[str, str] = {}
    for number, (idx, words) in enumerate(zip(clusters, keywords), start=1):
        topic_id = f"topic-{number}"
        centroid = normalize(vectors[idx].mean(axis=0))[0]
        score = {i: float(vectors[i] @ centroid) for i in idx}
        central = sorted(idx, key=lambda i: -score[i])
        arc: list[TopicSession] = []
        by_session: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            by_session[utts[i].session_id].append(i)
        for sid in sorted(by_session, key=lambda s: order.get(s, 0)):
            in_session = by_session[sid]
            best = max(in_session, key=lambda i: score[i])
            session_facts = _ranked_facts(sorted(in_session, key=lambda i: -score[i]), utts, facts_by_utt, 2)
            state = "; ".join(f.text for f in session_facts) if session_facts else _said(utts[best])
            arc.append(TopicSession(session_id=sid, date=session_time.get(sid), state=state,
                                    mentions=len(in_session), source_ids=[utts[i].id for i in in_session]))
        if _FINISHED.search(arc[-1].state):
            status = "resolved"
        elif arc[-1].session_id in last_sessions:
            status = "ongoing"
        else:
            status = "dormant"
        speakers = Counter(utts[i].speaker for i in idx)
        label = phrase_labels[number - 1] or (words[0] if words else _shorten(utts[central[0]].text, 40))
        people = [s for s, _ in speakers.most_common()]
        key_facts = _ranked_facts(central, utts, facts_by_utt, 5)
        if key_facts:
            who = " and ".join(people[:2]) if len(people) <= 2 else ", ".join(people[:-1]) + " and " + people[-1]
            summary = f"{who} talk about {label}: " + "; ".join(f.text for f in key_facts[:3]) + "."
        else:
            key_facts = _key_facts([utts[i] for i in central[:10]], words)
            summary = " ".join(_said(utts[i], 160) for i in central[:2])
        topics.append(Topic(
            id=topic_id, label=label, keywords=words, summary=summary, key_facts=key_facts,
            participants=people,
            sessions=arc, status=status, source_ids=[utts[i].id for i in sorted(idx)],
        ))
        for i in idx:
            assignment[utts[i].id] = topic_id
    return topics, assignment


_SPECIFIC = re.compile(r"\d|\s[A-Z][a-z]")


def _ranked_facts(central: list[int], utts: list[Utterance], facts_by_utt: dict[str, list[KeyFact]],
                  limit: int) -> list[KeyFact]:
    """Facts of the most central utterances first, the more specific (names, numbers, dates) first
    within a rank band, one per utterance until each central utterance had its turn."""
    scored: list[tuple[float, int, KeyFact]] = []
    for rank, i in enumerate(central):
        for k, fact in enumerate(facts_by_utt.get(utts[i].id, [])):
            specific = len(_SPECIFIC.findall(fact.text[1:]))
            scored.append((rank / 3.0 + 2.0 * k - 0.5 * min(specific, 3), rank, fact))
    out: list[KeyFact] = []
    seen: set[str] = set()
    for _, _, fact in sorted(scored, key=lambda t: (t[0], t[1])):
        if fact.text.lower() in seen:
            continue
        seen.add(fact.text.lower())
        out.append(KeyFact(text=fact.text, source_ids=list(fact.source_ids)))
        if len(out) >= limit:
            break
    return out


def _phrase_labels(phrases: list[list[str]], stop: frozenset[str], keywords: list[list[str]]) -> list[str]:
    """Per cluster, its most distinctive noun phrase (frequent here, rare in other clusters), or ""."""
    df: Counter = Counter()
    counts = [Counter(p for p in ps if any(w.lower() not in stop for w in p.split())
                      and not all(w.lower() in stop or w.lower() in CHAT_WORDS for w in p.split())) for ps in phrases]
    for c in counts:
        df.update(set(c))
    n = max(1, len(counts))
    labels: list[str] = []
    for c, words in zip(counts, keywords):
        terms = {w for k in words for w in k.split()}
        best, best_score = "", 0.0
        for phrase, count in c.items():
            hit = bool(set(phrase.lower().split()) & terms)
            if count < 2 and not hit:
                continue
            value = count * math.log(1 + n / df[phrase]) * (2.0 if hit else 1.0) * (1.3 if " " in phrase else 1.0)
            if value > best_score:
                best, best_score = phrase, value
        labels.append(best)
    return labels


def _key_facts(central: list[Utterance], keywords: list[str], limit: int = 5) -> list[KeyFact]:
    """The most informative sentence of each central utterance: keyword hits, numbers and names."""
    terms = {w for k in keywords for w in k.split()}
    scored: list[tuple[float, int, str, Utterance]] = []
    for rank, u in enumerate(central):
        for sentence in _SENTENCE.split(u.text):
            words = _WORD.findall(sentence.lower())
            if len(words) < 5 or sentence.rstrip().endswith("?"):
                continue
            hits = sum(w in terms for w in words)
            bonus = 0.5 * bool(re.search(r"\d", sentence)) + 0.3 * bool(re.search(r"\s[A-Z][a-z]", sentence))
            scored.append((hits + bonus - 0.1 * rank, rank, sentence.strip(), u))
    facts: list[KeyFact] = []
    used: set[str] = set()
    for _, _, sentence, u in sorted(scored, key=lambda s: (-s[0], s[1])):
        if u.id in used:
            continue
        used.add(u.id)
        facts.append(KeyFact(text=f"{u.speaker}: {_shorten(sentence, 220)}", source_ids=[u.id]))
        if len(facts) >= limit:
            break
    return facts


def embed_cached(embedder: Embedder, cache: dict[tuple[str, str], np.ndarray]):
    """An ``embed`` function that encodes only texts not seen before, in one batched call."""
    def embed(texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if (embedder.name, t) not in cache))
        if missing:
            for text, vector in zip(missing, embedder.encode(missing)):
                cache[(embedder.name, text)] = vector
        if not texts:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([cache[(embedder.name, t)] for t in texts])
    return embed

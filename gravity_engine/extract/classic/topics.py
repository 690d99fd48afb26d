"""Topic arcs across the whole conversation: cluster utterance embeddings, label clusters by their
distinctive words, and follow each cluster session by session.

Every text a topic holds (summary, key facts, arc states) is an utterance or a sentence of one,
prefixed by its speaker, so it can be checked against the ids it cites.
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
    out: list[list[str]] = []
    for row in matrix.toarray():
        words: list[str] = []
        for idx in np.argsort(-row):
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


def build_topics(conversation: Conversation,
                 embed: Callable[[list[str]], np.ndarray]) -> tuple[list[Topic], dict[str, str]]:
    """Topic arcs of the conversation and a map utterance id -> topic id.

    ``embed`` takes a list of texts and returns their normalized vectors (one batched call).
    """
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
    names = proper_nouns([u.display_text() for u in utts], stop)
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
            arc.append(TopicSession(session_id=sid, date=session_time.get(sid), state=_said(utts[best]),
                                    mentions=len(in_session), source_ids=[utts[i].id for i in in_session]))
        if _FINISHED.search(arc[-1].state):
            status = "resolved"
        elif arc[-1].session_id in last_sessions:
            status = "ongoing"
        else:
            status = "dormant"
        speakers = Counter(utts[i].speaker for i in idx)
        label = label_from(words, names) if words else _shorten(utts[central[0]].text, 40)
        topics.append(Topic(
            id=topic_id, label=label, keywords=words,
            summary=" ".join(_said(utts[i], 160) for i in central[:2]),
            key_facts=_key_facts([utts[i] for i in central[:10]], words),
            participants=[s for s, _ in speakers.most_common()],
            sessions=arc, status=status, source_ids=[utts[i].id for i in sorted(idx)],
        ))
        for i in idx:
            assignment[utts[i].id] = topic_id
    return topics, assignment


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

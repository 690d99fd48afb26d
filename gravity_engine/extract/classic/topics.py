"""Topic arcs across the whole conversation: cluster utterance embeddings, label clusters by their
distinctive words, and follow each cluster session by session.

Texts are written from the topic's atomic facts (``facts.py``: "Caroline is researching adoption
agencies") when the extractor gave any: key facts are the most central and specific facts, the
summary says who talks about what ("Caroline and Melanie talk about adoption agencies: ..."), and
each arc state lists that session's facts. Without facts (or for a session with none) a sentence of
the most central utterance, prefixed by its speaker, stands in. Labels (the titles people read) are one or two
of the cluster's own noun phrases ranked against its centroid with the same embedding model
(:func:`centroid_titles`: "adoption agencies", "wedding decor and necklace"), else its top keyword; the
TF-IDF keywords stay beside them.
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
from .wordlists import word_list

MIN_CONTENT_WORDS = 4
MAX_TOPICS = 25
# Weight of the neighbouring utterances when embedding one: a short reply ("what kind of paint?")
# belongs to the topic of the turn it answers.
CONTEXT_WEIGHT = 0.35
_WORD = re.compile(r"[a-z][a-z']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_FINISHED = re.compile(r"\b(finished|completed|done with|wrapped up|is over|was over|resolved|fixed|graduated|"
                       r"sold|ended|got the job|signed|accepted|approved|final(?:ly)?)\b", re.I)
CHAT_WORDS = set(word_list("topics", "CHAT_WORDS"))


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
    centroids = normalize(np.stack([vectors[idx].mean(axis=0) for idx in clusters]))
    speaker_words = frozenset(w.lower() for sp in conversation.speakers for w in sp.split())
    phrase_labels = centroid_titles([[p for i in idx for p in chunks.get(utts[i].id, [])] for idx in clusters],
                                    centroids, embed, stop, keywords, speaker_words)
    last_sessions = {s.id for s in conversation.sessions[-2:]}
    topics: list[Topic] = []
    assignment: dict[str, str] = {}
    for number, (idx, words) in enumerate(zip(clusters, keywords), start=1):
        topic_id = f"topic-{number}"
        centroid = centroids[number - 1]
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


# A title names what the topic's utterances are about: its noun phrases ranked by closeness to the topic's centroid
# (the mean of its utterances' embeddings) less their closeness to the nearest other topic and to all of them, so a
# phrase every topic shares ("family") loses to one this topic owns ("adoption agencies"). A second phrase joins the first when it is
# nearly as good and says something else (maximal marginal relevance): "wedding and stained glass".
TITLE_CANDIDATES = 30
# Said, not talked about; or so general that every chat is about them ("memories", "feeling"): no title alone.
TITLE_SKIP = frozenset(word_list("topics", "TITLE_SKIP"))
TITLE_OTHER_WEIGHT = 0.4
TITLE_SPREAD_WEIGHT = 0.4
TITLE_SPECIFIC = 0.05
TITLE_MMR_LAMBDA = 0.6
TITLE_SECOND_SHARE = 0.85
TITLE_REPEAT = 0.03  # per log of how often the phrase is said
TITLE_KEYWORD = 0.05  # for a phrase holding one of the topic's TF-IDF keywords


_PHRASE = re.compile(r"[A-Za-z][A-Za-z0-9'+.-]*(?: [A-Za-z0-9][A-Za-z0-9'+.-]*)*")


def _stems(phrase: str) -> set[str]:
    # "book" and "books", "wedding" and "weddings" say the same: a second phrase must add a word
    return {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z0-9]+", phrase)}


def _well_formed(phrase: str, stop: frozenset[str]) -> bool:
    """Not parse debris: no filler word inside a longer phrase ("pup doing"), and three words or more only for a
    name ("Harry Potter conference"), not a run of common words ("education crumbling infrastructure")."""
    words = phrase.split()
    if len(words) > 1 and any(w.lower() in stop for w in words):
        return False
    return len(words) <= 2 or sum(w[:1].isupper() for w in words) >= 2


def title_candidates(phrases: list[list[str]], stop: frozenset[str], names: frozenset[str] = frozenset()
                     ) -> list[Counter]:
    """Per topic, its noun phrases with their counts, the most distinctive first (frequent here, rare in the
    other topics), at most ``TITLE_CANDIDATES``. Dropped: phrases made only of stop or chat words, phrases naming
    a speaker (a topic is what they talk about, not who talks), and parse debris ("team / support")."""
    counts = [Counter(p for p in ps if _PHRASE.fullmatch(p) and len(p) > 2 and _well_formed(p, stop)
                      and not all(w.lower() in stop or w.lower() in TITLE_SKIP for w in p.split())
                      and not {w.lower() for w in p.split()} & names) for ps in phrases]
    df: Counter = Counter()
    for c in counts:
        df.update(set(c))
    n = max(1, len(counts))
    out = []
    for c in counts:
        ranked = sorted(c, key=lambda p: (-c[p] * math.log(1 + n / df[p]), p))[:TITLE_CANDIDATES]
        out.append(Counter({p: c[p] for p in ranked}))
    return out


def centroid_titles(phrases: list[list[str]], centroids: np.ndarray, embed: Callable[[list[str]], np.ndarray],
                    stop: frozenset[str], keywords: list[list[str]] | None = None,
                    names: frozenset[str] = frozenset()) -> list[str]:
    """Per topic (``phrases``: its utterances' noun phrases; ``centroids``: normalized, one row per topic;
    ``keywords``: its TF-IDF keywords) a title of one or two of its own phrases, or "" when it has none."""
    candidates = title_candidates(phrases, stop, names)
    every = sorted({p for c in candidates for p in c})
    if not every:
        return ["" for _ in phrases]
    vecs = normalize(np.asarray(embed(every), dtype=np.float32))
    row = {p: i for i, p in enumerate(every)}
    sims = vecs @ centroids.T  # phrase x topic
    titles = []
    for t, cands in enumerate(candidates):
        if not cands:
            titles.append("")
            continue
        names = sorted(cands, key=lambda p: (-cands[p], p))
        own = np.array([sims[row[p], t] for p in names])
        others = np.delete(sims[[row[p] for p in names]], t, axis=1)
        # Near the nearest other topic, or near all of them alike ("memories", "feeling"): not this topic's own.
        nearest = others.max(axis=1) if others.shape[1] else np.zeros(len(names))
        spread = others.mean(axis=1) if others.shape[1] else np.zeros(len(names))
        # A phrase said once may be a passing remark; repeats count a little, never more than closeness; a second
        # word makes it specific ("homeless shelter", not "shelter").
        kw = {w.rstrip("s") for k in (keywords[t] if keywords else []) for w in k.lower().split()}
        bonus = np.array([TITLE_REPEAT * math.log(cands[p]) + TITLE_KEYWORD * bool(_stems(p) & kw)
                          + TITLE_SPECIFIC * ((len(p.split()) == 2) - (len(p.split()) > 2)) for p in names])
        relevance = (own - TITLE_OTHER_WEIGHT * np.maximum(nearest, 0) - TITLE_SPREAD_WEIGHT * np.maximum(spread, 0)
                     + bonus)
        best = int(np.argmax(relevance))
        title = names[best]
        words = _stems(title)
        second, second_score = None, -1.0
        for k, p in enumerate(names):
            if k == best or _stems(p) & words or relevance[k] < TITLE_SECOND_SHARE * relevance[best]:
                continue
            redundancy = float(vecs[row[p]] @ vecs[row[title]])
            score = TITLE_MMR_LAMBDA * relevance[k] - (1 - TITLE_MMR_LAMBDA) * redundancy
            if score > second_score:
                second, second_score = p, score
        titles.append(f"{title} and {second}" if second else title)
    return titles


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

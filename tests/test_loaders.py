"""Loaders: every format read into Conversations, and every bad input refused with file + place."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest
from conftest import LOCOMO, LONGMEMEVAL, requires_locomo

from gravity_engine.conversation import Conversation
from gravity_engine.errors import InputError
from gravity_engine.loaders import ColumnMap, LoadLimits, load_bytes, load_conversation, load_conversations

FIXTURES = Path(__file__).parent / "fixtures" / "loaders"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def texts(conv: Conversation) -> list[tuple[str, str, str]]:
    return [(u.session_id, u.speaker, u.text) for u in conv.utterances()]


# ---------------------------------------------------------------- generic JSON / JSONL / CSV


def test_json_records_with_sessions_and_per_turn_times(tmp_path):
    records = [
        {"speaker": "Ana", "text": "I moved to Porto.", "session": 1, "timestamp": "2024-01-10 09:00"},
        {"speaker": "Ben", "text": "Congrats!", "session": 1, "timestamp": "2024-01-10 09:01", "mood": "happy"},
        {"speaker": "Ana", "text": "The flat has a balcony.", "session": 2, "timestamp": "2024-02-01 20:15"},
    ]
    conv = load_conversation(write(tmp_path, "chat.json", json.dumps(records)))
    assert conv.format == "json" and conv.id == "chat"
    assert [s.id for s in conv.sessions] == ["1", "2"]
    assert conv.sessions[0].timestamp == "2024-01-10T09:00"  # session time = its first utterance's
    assert conv.sessions[1].timestamp_text == "2024-02-01 20:15"
    assert [u.id for u in conv.utterances()] == ["1:1", "1:2", "2:1"]
    assert conv.utterances()[1].timestamp == "2024-01-10T09:01"
    assert conv.utterances()[1].metadata == {"mood": "happy"}
    assert conv.speakers == ["Ana", "Ben"]
    assert conv.source.endswith("chat.json") and conv.metadata["load_limits"]["max_depth"] == 64


def test_json_object_with_messages_and_synonym_fields(tmp_path):
    data = {"id": "support-7", "messages": [{"role": "user", "content": "My order is late."},
                                            {"role": "agent", "content": "Let me check."}]}
    conv = load_conversation(write(tmp_path, "x.json", json.dumps(data)))
    assert conv.id == "support-7" and len(conv.sessions) == 1
    assert texts(conv) == [("session_1", "user", "My order is late."), ("session_1", "agent", "Let me check.")]


def test_json_sessions_objects_round_trip_of_own_model(tmp_path):
    data = {"id": "c1", "speakers": ["Ana", "Ben"], "sessions": [
        {"id": "s-a", "date": "5 March 2024", "utterances": [{"speaker": "Ana", "text": "Hi", "id": "u1"}]},
        [{"speaker": "Ben", "text": "Hello again"}],
    ]}
    conv = load_conversation(write(tmp_path, "c.json", json.dumps(data)))
    assert [(s.id, s.timestamp) for s in conv.sessions] == [("s-a", "2024-03-05T00:00"), ("session_2", None)]
    assert [u.id for u in conv.utterances()] == ["u1", "session_2:1"]
    # The engine's own Conversation JSON loads back the same.
    again = load_conversation(write(tmp_path, "dump.json", conv.model_dump_json()))
    assert texts(again) == texts(conv) and [s.id for s in again.sessions] == ["s-a", "session_2"]


def test_jsonl_records_and_several_conversations(tmp_path):
    lines = [
        {"conversation_id": "a", "speaker": "Ana", "text": "one"},
        {"conversation_id": "b", "speaker": "Ben", "text": "two"},
        {"conversation_id": "a", "speaker": "Cy", "text": "three"},
    ]
    path = write(tmp_path, "multi.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    convs = load_conversations(path)
    assert [(c.id, c.format, c.n_utterances()) for c in convs] == [("a", "jsonl", 2), ("b", "jsonl", 1)]
    assert load_conversation(path, conversation="b").utterances()[0].text == "two"
    with pytest.raises(InputError, match=r"holds 2 conversations.*a, b"):
        load_conversation(path)
    with pytest.raises(InputError, match=r"no conversation 'zz'; available: a, b"):
        load_conversations(path, conversation="zz")


def test_jsonl_detected_by_content_and_openai_messages_lines(tmp_path):
    lines = [{"messages": [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}]},
             {"messages": [{"role": "user", "content": "q2"}]}]
    convs = load_conversations(write(tmp_path, "train.txt", "\n".join(json.dumps(x) for x in lines)))
    assert [c.id for c in convs] == ["train-1", "train-2"] and convs[0].format == "jsonl"


def test_csv_with_custom_columns_and_semicolons(tmp_path):
    content = 'who;said;when\nAna;"Hello; world";2024-05-01 10:00\nBen;"Two\nlines";2024-05-01 10:02\n'
    cols = ColumnMap(speaker="who", text="said", timestamp="when")
    conv = load_conversation(write(tmp_path, "chat.csv", content), columns=cols)
    assert texts(conv) == [("session_1", "Ana", "Hello; world"), ("session_1", "Ben", "Two\nlines")]
    assert conv.sessions[0].timestamp == "2024-05-01T10:00" and conv.format == "csv"


def test_tsv_with_session_column_and_header_synonyms(tmp_path):
    content = "Session_ID\tAuthor\tMessage\tCreated_At\n1\tAna\thi\t\n2\tBen\tbye\tnot a date\n"
    conv = load_conversation(write(tmp_path, "t.tsv", content))
    assert [s.id for s in conv.sessions] == ["1", "2"]
    assert conv.sessions[1].timestamp is None and conv.sessions[1].timestamp_text == "not a date"
    assert any("not a date" in w and "line 3" in w for w in conv.warnings)


# ---------------------------------------------------------------- transcripts


def test_transcript_with_session_headings_dates_and_continuations():
    conv = load_conversation(FIXTURES / "transcript.md")
    assert conv.format == "transcript" and conv.speakers == ["Noor", "Sam"]
    assert [(s.id, s.timestamp) for s in conv.sessions] == [
        ("session_1", "2024-03-05T00:00"), ("session_2", "2024-03-12T00:00"), ("session_3", None)]
    assert conv.sessions[0].utterances[2].text == "Messy! The wheel kept spinning\nfaster than I expected."
    assert len(conv.sessions[0].utterances) == 4  # blank lines inside a headed session are not breaks
    assert conv.sessions[1].utterances[0].timestamp == "2024-03-12T18:05"
    assert conv.sessions[2].timestamp_text == "sometime in spring"
    assert any("sometime in spring" in w and "line 15" in w for w in conv.warnings)


def test_transcript_blank_lines_and_date_lines(tmp_path):
    blank = "Ana: hi\nBen: hello\n\nAna: back again\nBen: welcome\n"
    conv = load_conversation(write(tmp_path, "b.txt", blank))
    assert [len(s.utterances) for s in conv.sessions] == [2, 2]
    spaced = "Ana: hi\n\nBen: hello\n\nAna: bye\n"
    conv = load_conversation(write(tmp_path, "s.txt", spaced))
    assert [len(s.utterances) for s in conv.sessions] == [3] and any("spacing" in w for w in conv.warnings)
    dated = "[2023-05-08]\nAna: yesterday I ran\n[9 May 2023]\nBen: nice\nmore words\n"
    conv = load_conversation(write(tmp_path, "d.log", dated))
    assert [s.timestamp for s in conv.sessions] == ["2023-05-08T00:00", "2023-05-09T00:00"]
    assert conv.sessions[1].utterances[0].text == "nice\nmore words"
    clock = "## Session 1 - 8 May 2023\n[9:05 pm] Ana: late\n[25:99] Ben: odd\r\n"
    conv = load_conversation(write(tmp_path, "c.txt", clock))
    assert [u.timestamp for u in conv.utterances()] == ["2023-05-08T21:05", None]
    assert any("'25:99' at line 3" in w for w in conv.warnings)


# ---------------------------------------------------------------- ChatGPT export


def test_chatgpt_export_follows_current_branch_and_skips_system_and_tools():
    convs = load_conversations(FIXTURES / "chatgpt_export.json")
    assert [c.id for c in convs] == ["c-garden"]  # the empty chat is skipped with a warning
    conv = convs[0]
    assert conv.format == "chatgpt" and conv.metadata["title"] == "Planning the garden"
    assert [(u.speaker, u.metadata["message_id"]) for u in conv.utterances()] == [
        ("user", "n2"), ("assistant", "n3"), ("user", "n5")]
    assert conv.utterances()[2].text == "Great, I planted two of them today."
    assert conv.sessions[0].timestamp == "2024-03-05T12:00"  # create_time, read as UTC
    assert any("c-empty" in w for w in conv.warnings)
    assert load_conversation(FIXTURES / "chatgpt_export.json", conversation="Planning the garden").id == "c-garden"
    with pytest.raises(InputError, match="c-empty.*no utterances"):
        load_conversation(FIXTURES / "chatgpt_export.json", conversation="c-empty")


# ---------------------------------------------------------------- encodings, limits, warnings


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"], ids=["utf8-bom", "utf16-bom"])
def test_bom_encodings(tmp_path, encoding):
    path = write(tmp_path, "e.txt", "Zoë: ça va?\nLéa: très bien\n".encode(encoding))
    assert texts(load_conversation(path))[0] == ("session_1", "Zoë", "ça va?")


def test_load_bytes_for_uploads():
    conv = load_bytes(b"speaker,text\nAna,hi\n", "upload.csv")[0]
    assert conv.source == "upload.csv" and conv.format == "csv"
    with pytest.raises(InputError, match=r"upload\.bin.*PNG"):
        load_bytes(b"\x89PNG\r\n\x1a\n....", "upload.bin")


def test_chatgpt_export_zip_as_downloaded(tmp_path):
    path = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(FIXTURES / "chatgpt_export.json", "export/conversations.json")
        zf.writestr("export/chat.html", "<html></html>")
    conv = load_conversation(path)
    assert conv.id == "c-garden" and conv.source == f"{path}/export/conversations.json"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notes.txt", "Ana: hi")
    with pytest.raises(InputError, match="ZIP archive without conversations.json"):
        load_conversations(path)


def test_long_utterance_truncated_with_warning(tmp_path):
    path = write(tmp_path, "l.json", json.dumps([{"speaker": "A", "text": "x" * 50}]))
    conv = load_conversation(path, limits=LoadLimits(max_utterance_chars=10))
    assert conv.utterances()[0].text == "x" * 10 and conv.utterances()[0].metadata["truncated_from_chars"] == 50
    assert any("$[0].text" in w and "max_utterance_chars" in w for w in conv.warnings)


def test_duplicate_ids_are_renamed_deterministically(tmp_path):
    records = [{"speaker": "A", "text": "a", "id": "u1"}, {"speaker": "B", "text": "b", "id": "u1"},
               {"speaker": "A", "text": "c", "id": "u1"}]
    conv = load_conversation(write(tmp_path, "d.json", json.dumps(records)))
    assert [u.id for u in conv.utterances()] == ["u1", "u1#2", "u1#3"]
    assert any("'u1' repeated at $[1]" in w and "(and 1 more" in w for w in conv.warnings)


def test_huge_single_line_is_fast(tmp_path):
    path = write(tmp_path, "big.json", '[{"speaker": "A", "text": "' + "word " * 2_000_000 + '"}]')
    start = time.perf_counter()
    conv = load_conversation(path)
    assert time.perf_counter() - start < 5
    assert len(conv.utterances()[0].text) == 20_000


# ---------------------------------------------------------------- bad inputs: one clear error each

LOCOMO_MINI = {"sample_id": "conv-1", "conversation": {
    "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
    "session_2": [{"speaker": "B", "dia_id": "D2:1", "text": "yo"}, {"speaker": "A", "dia_id": "D2:2", "text": 7}]},
    "qa": []}
LME_MINI = {"question_id": "q1", "question": "?", "answer": "x", "haystack_session_ids": ["s1"],
            "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00"],
            "haystack_sessions": [[{"role": "user", "content": "hi", "has_answer": True}]]}


def test_single_locomo_sample_and_single_longmemeval_instance(tmp_path):
    sample = {**LOCOMO_MINI, "conversation": {**LOCOMO_MINI["conversation"], "session_2": [
        {"speaker": "B", "dia_id": "D2:1", "text": "", "blip_caption": "a photo of a bike"}]},
        "qa": [{"question": "?", "answer": 3, "evidence": ["D2:1", "D:1", "D9:9"], "category": 1}]}
    conv = load_conversation(write(tmp_path, "one.json", json.dumps(sample)))
    assert conv.format == "locomo" and conv.id == "conv-1"
    assert [s.timestamp for s in conv.sessions] == ["2023-05-08T13:56", None]
    assert conv.utterance_index()["D2:1"].display_text() == "[shares an image: a photo of a bike]"
    q = conv.questions[0]
    assert (q.answer, q.category, q.evidence, q.metadata["malformed_evidence"]) == ("3", "1", ["D2:1", "D9:9"], ["D:1"])
    assert any("'D9:9', which is not in the dialogue" in w for w in conv.warnings)
    assert any("session_2 has no session_2_date_time" in w for w in conv.warnings)
    instance = {**LME_MINI, "haystack_dates": ["2023/05/01 (Mon) 10:00"]}
    conv = load_conversation(write(tmp_path, "inst.json", json.dumps(instance)))
    assert conv.format == "longmemeval" and conv.id == "q1" and conv.questions[0].evidence == ["s1:1"]


def chat_export(**changes) -> list:
    conv = {"id": "c1", "current_node": "b", "mapping": {
        "a": {"message": None, "parent": None, "children": ["b"]},
        "b": {"parent": "a", "children": [], "message": {"author": {"role": "user"},
                                                        "content": {"content_type": "text", "parts": ["hi"]}}}}}
    conv.update(changes)
    return [conv]


def _dump(obj) -> str:
    return json.dumps(obj)


# (id, file name, content, load options, expected place, expected words in the message)
BAD_INPUTS = [
    ("empty-file", "e.json", "", {}, "e.json", "is empty"),
    ("whitespace-only", "w.txt", " \n\t\n", {}, "w.txt", "is empty"),
    ("nul-bytes", "n.txt", b"Ana: hi\x00there", {}, "byte 7", "binary"),
    ("utf16-without-bom", "u.txt", "Ana: hi".encode("utf-16-le"), {}, "byte 1", "UTF-16 without a byte-order mark"),
    ("png-image", "p.json", b"\x89PNG\r\n\x1a\n\x00\x00", {}, "p.json", "PNG image"),
    ("zip-damaged", "export.zip", b"PK\x03\x04rest", {}, "export.zip", "damaged or unsupported ZIP archive"),
    ("pdf", "doc.txt", b"%PDF-1.7\n", {}, "doc.txt", "PDF"),
    ("latin-1", "l.txt", "Ana: café\n".encode("latin-1"), {}, "line 1, byte 8", "not valid UTF-8"),
    ("json-truncated", "t.json", '[{"speaker": "A", "text": "hi"},\n {"speaker": "B", "te', {}, "line 2, column",
     "truncated"),
    ("json-syntax", "s.json", '[\n {"speaker": "A", "text": "hi"}\n {"speaker": "B"}\n]', {}, "line 3, column 2",
     "Expecting ',' delimiter"),
    ("json-deep-nesting", "d.json", "[" * 200_000, {}, "line 1, column 65", "max_depth"),
    ("json-deep-inside-record", "d2.json", '[{"speaker": "A", "text": "[[[[",\n "x": ' + "[" * 70 + "]" * 70 + "}]",
     {}, "line 2, column", "nested deeper than 64"),
    ("json-huge-number", "h.json", '[{"speaker": "A", "text": 1' + "9" * 5000 + "}]", {}, "line 1, column 27",
     "5001 digits"),
    ("json-scalar", "s.json", "42", {}, "($)", "single int"),
    ("json-empty-list", "l.json", "[]", {}, "($)", "empty list"),
    ("json-unknown-layout", "u.json", '[{"foo": 1}]', {}, "($[0])", "unrecognized JSON layout"),
    ("speaker-number", "r.json", _dump([{"speaker": 5, "text": "hi"}]), {}, "$[0].speaker", "found a number (5)"),
    ("text-null", "r.json", _dump([{"speaker": "A", "text": "a"}, {"speaker": "A", "text": None}]), {},
     "$[1].text", "found null"),
    ("text-object", "r.json", _dump({"messages": [{"role": "A", "content": {"x": 1}}]}), {}, "$.messages[0].content",
     "found an object"),
    ("record-not-object", "r.json", _dump([{"speaker": "A", "text": "a"}, "oops"]), {}, "$[1]", "found a string"),
    ("record-without-text", "r.json", _dump([{"speaker": "A", "text": "a"}, {"speaker": "B"}]), {}, "$[1]",
     "no text field"),
    ("empty-speaker", "r.json", _dump([{"speaker": " ", "text": "a"}]), {}, "$[0].speaker", "speaker is empty"),
    ("only-empty-texts", "r.json", _dump([{"speaker": "A", "text": ""}]), {}, "r.json", "no utterances"),
    ("locomo-text-int", "lo.json", _dump([LOCOMO_MINI]), {}, "$[0].conversation.session_2[1].text", "found a number"),
    ("locomo-session-not-list", "lo.json",
     _dump([{**LOCOMO_MINI, "conversation": {"speaker_a": "A", "session_1": "x"}}]), {},
     "$[0].conversation.session_1", "expected a list of turns"),
    ("locomo-no-sessions", "lo.json", _dump({**LOCOMO_MINI, "conversation": {"speaker_a": "A"}}), {},
     "($.conversation)", "session_<N>"),
    ("locomo-bad-question", "lo.json", _dump([{**LOCOMO_MINI, "conversation": {"session_1": [
        {"speaker": "A", "text": "hi"}]}, "qa": [{"answer": 1}]}]), {}, "$[0].qa[0].question", "found nothing"),
    ("locomo-unknown-id", "lo.json", _dump([LOCOMO_MINI]), {"conversation": "conv-9"}, "lo.json",
     "no conversation 'conv-9'; available: conv-1"),
    ("lme-dates-mismatch", "lme.json", _dump([LME_MINI]), {}, "$[0].haystack_dates", "2 entries for 1"),
    ("lme-content-list", "lme.json", _dump({**LME_MINI, "haystack_dates": None, "haystack_sessions": [
        [{"role": "user", "content": ["a"]}]]}), {}, "$.haystack_sessions[0][0].content", "found a list"),
    ("chatgpt-dangling-current", "conversations.json", _dump(chat_export(current_node="zz")), {},
     "$[0].current_node", "not a node of mapping"),
    ("chatgpt-parent-loop", "conversations.json", _dump(chat_export(mapping={
        "a": {"message": None, "parent": "b", "children": ["b"]},
        "b": {"message": None, "parent": "a", "children": ["a"]}})), {}, '$[0].mapping.a.parent', "loop"),
    ("chatgpt-parts-not-list", "conversations.json", _dump(chat_export(mapping={
        "b": {"parent": None, "children": [], "message": {"author": {"role": "user"}, "content": {"parts": "hi"}}}})),
     {}, "$[0].mapping.b.message.content.parts", "expected a list of text parts"),
    ("jsonl-bad-line", "x.jsonl", '{"speaker": "A", "text": "a"}\n{"speaker": "B", "text": "b"}\n{"speaker": ,}\n',
     {}, "line 3, column 13", "one JSON value per line"),
    ("jsonl-speaker-null", "x.jsonl", '{"speaker": "A", "text": "a"}\n{"speaker": null, "text": "b"}\n', {},
     "line 2: $.speaker", "found null"),
    ("jsonl-line-not-object", "x.jsonl", '{"speaker": "A", "text": "a"}\n[1, 2]\n', {}, "line 2: $", "found a list"),
    ("csv-no-speaker-column", "c.csv", "name_of_thing,text\nA,hi\n", {}, "line 1 (header)", "no speaker field"),
    ("csv-field-count", "c.csv", "speaker,text\nA,hi\nB,hi,extra\n", {}, "line 3", "3 fields; expected 2"),
    ("csv-unclosed-quote", "c.csv", 'speaker,text\nA,"hi\nB,there\n', {}, "line 2", "never closed"),
    ("csv-header-only", "c.csv", "speaker,text\n", {}, "line 1", "no rows"),
    ("csv-empty-speaker", "c.csv", "speaker,text\nA,hi\n,there\n", {}, "line 3, column 'speaker'", "speaker is empty"),
    ("transcript-prose", "notes.txt", "Dear diary, today was long\nand nothing happened.\n", {}, "line 1",
     "expected 'Name: text'"),
    ("transcript-text-before-turn", "t.md", "## Session 1\nAna: hi\n## Session 2\njust words\n", {}, "line 4",
     "not a turn"),
    ("unknown-format", "data.bin", "\n\nhello world\nfoo bar\n", {}, "line 3", "unknown format"),
    ("unknown-fmt-option", "r.json", _dump([{"speaker": "A", "text": "a"}]), {"fmt": "xml"}, "r.json",
     "unknown format 'xml'"),
    ("long-utterance-error", "r.json", _dump([{"speaker": "A", "text": "x" * 30}]),
     {"limits": LoadLimits(max_utterance_chars=10, on_long_utterance="error")}, "$[0].text", "max_utterance_chars"),
    ("too-many-utterances", "r.json", _dump({"turns": [{"speaker": "A", "text": "x"}] * 3}),
     {"limits": LoadLimits(max_utterances=2)}, "$.turns[2]", "max_utterances"),
    ("too-many-records", "r.json", _dump([{"speaker": "A", "text": "x"}] * 3),
     {"limits": LoadLimits(max_utterances=2)}, "($)", "3 items"),
    ("too-many-lines", "r.jsonl", '{"speaker": "A", "text": "x"}\n' * 3,
     {"limits": LoadLimits(max_utterances=2)}, "line 3", "max_utterances"),
    ("too-many-containers", "r.json", "[" + ",".join(["[]"] * 10_100) + "]",
     {"limits": LoadLimits(max_utterances=1)}, "r.json", "10,101 objects and lists"),
    ("file-too-large", "r.json", _dump([{"speaker": "A", "text": "x"}]), {"limits": LoadLimits(max_file_bytes=10)},
     "r.json", "max_file_bytes"),
    ("unreadable-date-type", "r.json", _dump([{"speaker": "A", "text": "x", "timestamp": {"d": 1}}]), {},
     "$[0].timestamp", "expected a date"),
]


@pytest.mark.parametrize("name,content,options,place,words", [c[1:] for c in BAD_INPUTS],
                         ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_gets_one_clear_error(tmp_path, name, content, options, place, words):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as caught:
        load_conversations(path, **options)
    message = str(caught.value)
    assert str(path) in message and place in message and words in message, message
    assert "\n" not in message and "Traceback" not in message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="nope.json: file not found"):
        load_conversations(tmp_path / "nope.json")
    with pytest.raises(InputError, match="is a directory"):
        load_conversations(tmp_path)


# ---------------------------------------------------------------- the real benchmark files


@requires_locomo()
def test_locomo_real_file():
    convs = load_conversations(LOCOMO)
    assert len(convs) == 10 and sum(c.n_utterances() for c in convs) == 5882
    assert sum(len(c.questions) for c in convs) == 1986
    conv = next(c for c in convs if c.id == "conv-26")
    assert conv.format == "locomo" and conv.speakers == ["Caroline", "Melanie"]
    assert len(conv.sessions) == 19  # the 16 date keys without a session_<N> list are ignored
    first = conv.sessions[0]
    assert (first.id, first.timestamp, first.timestamp_text) == ("session_1", "2023-05-08T13:56", "1:56 pm on 8 May, 2023")
    index = conv.utterance_index()
    assert index["D1:5"].metadata["image_caption"] and "img_url" in index["D1:5"].metadata
    assert "shares an image" in index["D1:5"].display_text()
    assert conv.questions[1].answer == "2022" and conv.questions[1].category == "2"
    adversarial = [q for q in conv.questions if q.category == "5"]
    assert adversarial and all("adversarial_answer" in q.metadata for q in adversarial)
    malformed = [q for c in convs for q in c.questions if "malformed_evidence" in q.metadata]
    assert len(malformed) >= 4 and all(":" in e and e.startswith("D") for q in malformed for e in q.evidence)
    assert "event_summary" in conv.metadata
    one = load_conversation(LOCOMO, conversation="conv-30")
    assert one.id == "conv-30" and one.questions[0].id == "conv-30-q0"


@pytest.mark.skipif(not LONGMEMEVAL.is_file(), reason="LongMemEval oracle file not present")
def test_longmemeval_real_file():
    start = time.perf_counter()
    convs = load_conversations(LONGMEMEVAL)
    assert time.perf_counter() - start < 8
    assert len(convs) == 500 and all(c.format == "longmemeval" for c in convs)
    conv = convs[0]
    assert conv.speakers == ["user", "assistant"] and len(conv.questions) == 1
    q = conv.questions[0]
    assert q.id == conv.id and q.question_date and q.category
    times = [s.timestamp for s in conv.sessions]
    assert times == sorted(times)
    index = conv.utterance_index()
    assert q.evidence and all(index[e].metadata["has_answer"] is True for e in q.evidence)
    assert set(q.metadata["answer_session_ids"]) <= {s.id for s in conv.sessions}
    assert all(u.id.startswith(u.session_id + ":") for u in conv.utterances())
    assert isinstance(next(c for c in convs if c.questions[0].answer and c.questions[0].answer.isdigit()).questions[0].answer, str)
    assert load_conversation(LONGMEMEVAL, conversation=convs[7].id).id == convs[7].id

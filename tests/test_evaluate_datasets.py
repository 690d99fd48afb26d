"""The runner on LoCoMo- and LongMemEval-shaped files (small invented ones, and a real LoCoMo slice when present)."""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import LOCOMO, requires_locomo
from evaluate_fixtures import answer_of, first_user, prompt_name

from gravity_engine.build import ensure_stores
from gravity_engine.errors import StoreError
from gravity_engine.eval.evaluate import EvalSettings, ResultsFile, build_report, plan_evaluation, run_evaluation
from gravity_engine.eval.evaluate.stats import score_table
from gravity_engine.llm import OpenAIClient
from gravity_engine.prompts import judge_longmemeval
from gravity_engine.prompts.base import read_block
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.openai_server import ScriptedOpenAIServer
from gravity_engine.testing.pytest_plugin import local_llm_config

# Invented LoCoMo-format sample: categories 1, 2, 4 and an adversarial 5.
_LOCOMO = [{
    "sample_id": "toy-1",
    "conversation": {
        "speaker_a": "Rosa", "speaker_b": "Omar",
        "session_1_date_time": "1:00 pm on 3 March, 2023",
        "session_1": [
            {"speaker": "Rosa", "dia_id": "D1:1", "text": "I started learning the cello last week."},
            {"speaker": "Omar", "dia_id": "D1:2", "text": "Nice! I adopted a cat named Pixel yesterday."},
        ],
        "session_2_date_time": "6:00 pm on 20 April, 2023",
        "session_2": [
            {"speaker": "Rosa", "dia_id": "D2:1", "text": "My cello teacher is called Mr. Hale."},
            {"speaker": "Omar", "dia_id": "D2:2", "text": "Pixel knocked over my coffee and I also got a parrot."},
        ],
    },
    "qa": [
        {"question": "What pets does Omar have?", "answer": "cat, parrot", "evidence": ["D1:2", "D2:2"], "category": 1},
        {"question": "When did Omar adopt Pixel?", "answer": "2 March 2023", "evidence": ["D1:2"], "category": 2},
        {"question": "Who is Rosa's cello teacher?", "answer": "Mr. Hale", "evidence": ["D2:1"], "category": 4},
        {"question": "What is Rosa's violin teacher called?", "adversarial_answer": "Mr. Hale", "evidence": ["D2:1"],
         "category": 5},
    ],
}]
_LOCOMO_ANSWERS = {"What pets does Omar have?": "parrot, cat", "When did Omar adopt Pixel?": "2 March 2023",
                   "Who is Rosa's cello teacher?": "Mr. Hale", "What is Rosa's violin teacher called?": "Not mentioned"}

# Invented LongMemEval-format instances: one temporal-reasoning question and one abstention question.
_LME = [
    {"question_id": "t1", "question_type": "temporal-reasoning", "question": "How many days before my trip did I buy boots?",
     "answer": "3 days", "question_date": "2023/05/30 (Tue) 10:00",
     "haystack_session_ids": ["s1", "s2"], "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/04 (Thu) 09:00"],
     "haystack_sessions": [[{"role": "user", "content": "I bought hiking boots today.", "has_answer": True},
                            {"role": "assistant", "content": "Great choice for the trip."}],
                           [{"role": "user", "content": "Off on my hiking trip today!", "has_answer": True},
                            {"role": "assistant", "content": "Have fun."}]],
     "answer_session_ids": ["s1", "s2"]},
    {"question_id": "t2_abs", "question_type": "single-session-user", "question": "What colour are my boots?",
     "answer": "You did not mention the colour of your boots.", "question_date": "2023/05/30 (Tue) 10:00",
     "haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/01 (Mon) 09:00"],
     "haystack_sessions": [[{"role": "user", "content": "I bought hiking boots today.", "has_answer": True},
                            {"role": "assistant", "content": "Great choice."}]],
     "answer_session_ids": ["s1"]},
]


def _question(request) -> str:
    return answer_of(request)[0]


def locomo_router(request):
    if prompt_name(request) == "judge":
        text = first_user(request)
        gold, answer = re.search(r"<gold_answer>\n(.*?)\n</gold_answer>\n<generated_answer>\n(.*)\n</generated_answer>", text, re.S).groups()
        if "does not contain this information" in gold:
            ok = "not mentioned" in answer.lower()
        else:
            ok = sorted(p.strip() for p in answer.split(",")) == sorted(p.strip() for p in gold.split(","))
        return {"reasoning": "scripted", "label": "CORRECT" if ok else "WRONG"}
    return _LOCOMO_ANSWERS.get(_question(request), "I don't know")


@pytest.fixture
def server(allow_local_llm):
    servers = []

    def start(router):
        srv = ScriptedOpenAIServer(router=router).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.close()


def _clients(srv):
    cfg = local_llm_config(srv, cache=False)
    return OpenAIClient(cfg), OpenAIClient(cfg)


def test_locomo_categories_f1_and_adversarial_apart(tmp_path, server):
    path = tmp_path / "toy_locomo.json"
    path.write_text(json.dumps(_LOCOMO))
    srv = server(locomo_router)
    s = EvalSettings(dataset="locomo", path=path, out=tmp_path / "res", stores=tmp_path / "stores", variants=["baseline"])
    with pytest.raises(StoreError, match="no anchor store for toy-1; build it first"):
        run_evaluation(s, *_clients(srv), embedder=FakeEmbedder())  # evaluating never builds
    assert ensure_stores(plan_evaluation(s).conversations_to_build(), s.stores, FakeEmbedder()) == ["toy-1"]
    summary = run_evaluation(s, *_clients(srv), embedder=FakeEmbedder())
    assert (tmp_path / "stores" / "toy-1" / "anchors.json").is_file()
    rows = {r.category: r for r in ResultsFile(summary.results_path).rows()}
    assert set(rows) == {"1", "2", "4", "5"} and all(r.judge_correct for r in rows.values())
    assert rows["1"].f1 == 1.0 and rows["5"].f1 == 1.0 and rows["5"].abstention and rows["5"].gold is None
    assert rows["2"].category_label == "2 temporal" and rows["1"].category_label == "1 multi-hop"
    assert rows["4"].evidence_recall == 1.0  # the toy is tiny: the host's top 10 hold everything
    judge_texts = [first_user(r) for r in srv.chat_requests() if prompt_name(r) == "judge"]
    assert any("A misleading answer would be: Mr. Hale" in t for t in judge_texts)
    (line,) = score_table(rows.values())
    assert line.overall.n == 3 and line.abstention.n == 1  # category 5 is outside J
    rep = build_report([s.out], tmp_path / "report", plots=False)
    assert "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial" in rep.markdown
    skipped = run_evaluation(s.model_copy(update={"include_adversarial": False, "out": tmp_path / "res2"}),
                             *_clients(srv), embedder=FakeEmbedder())
    assert skipped.rows_written == 3


def test_longmemeval_per_type_judge_abstention_and_question_date(tmp_path, server):
    path = tmp_path / "toy_lme.json"
    path.write_text(json.dumps(_LME))

    def router(request):
        if prompt_name(request) == "judge_longmemeval":
            text = first_user(request)
            answer = read_block(text, "generated_answer")
            assert read_block(text, "gold_answer")  # the gold text reaches the judge, in its own section
            system = request["messages"][0]["content"]
            if "cannot be answered" in system:
                return {"reasoning": "abstains", "verdict": "yes" if "not available" in answer else "no"}
            assert "off by one" in system  # temporal-reasoning rule
            return {"reasoning": "off by one is fine", "verdict": "yes" if answer.strip() in ("3 days", "4 days") else "no"}
        user = request["messages"][-1]["content"]
        assert "Question date: 2023-05-30" in user
        return "4 days" if "boots?" in user and "How many" in user else "That is not available in our chats."

    srv = server(router)
    s = EvalSettings(dataset="longmemeval", path=path, out=tmp_path / "res", stores=tmp_path / "stores",
                     variants=["baseline", "full"])
    built = ensure_stores(plan_evaluation(s).conversations_to_build(), s.stores, FakeEmbedder())
    assert sorted(built) == ["t1", "t2_abs"]  # one store per instance
    summary = run_evaluation(s, *_clients(srv), embedder=FakeEmbedder())
    rows = ResultsFile(summary.results_path).rows()
    assert len(rows) == 4 and all(r.judge_correct for r in rows) and all(r.judge_label == "yes" for r in rows)
    assert {r.judge_prompt for r in rows} == {judge_longmemeval.PROMPT.id}
    lines = {ln.variant: ln for ln in score_table(rows)}
    assert lines["full"].macro == 1.0 and lines["full"].abstention.n == 1
    assert {r.category_label for r in rows} == {"TR", "SSU"}


@pytest.fixture(scope="session")
def conv26_stores(tmp_path_factory, embedder):
    """conv-26's classic anchors, built once per test session with the real embedder."""
    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversations

    stores = tmp_path_factory.mktemp("locomo_stores")
    conv = load_conversations(LOCOMO, conversation="conv-26")[0]
    build_store(conv, stores / "conv-26", backend="classic", embedder=embedder)
    return stores


@requires_locomo()
def test_locomo_slice_of_20_questions_two_variants_under_a_minute(tmp_path, conv26_stores, embedder, server):
    def router(request):
        if prompt_name(request) == "judge":
            gold, answer = re.search(r"<gold_answer>\n(.*?)\n</gold_answer>\n<generated_answer>\n(.*)\n</generated_answer>", first_user(request), re.S).groups()
            return {"reasoning": "scripted", "label": "CORRECT" if answer.strip() == gold.strip() else "WRONG"}
        return "I don't know"

    srv = server(router)
    started, cpu_started = time.perf_counter(), time.process_time()
    s = EvalSettings(dataset="locomo", path=LOCOMO, conversation="conv-26", out=tmp_path / "res", stores=conv26_stores,
                     variants=["baseline", "full"], limit=20, concurrency=4)
    summary = run_evaluation(s, *_clients(srv), embedder=embedder)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert summary.rows_written == 40 and summary.answer_errors == 0
    # Timing is reported, not asserted (timed tests are flaky on shared cores; benchmarks/evaluate.py measures it).
    print(f"20 questions x 2 variants: {elapsed:.1f} s wall, {cpu:.1f} s CPU")
    rows = ResultsFile(summary.results_path).rows()
    assert {r.variant for r in rows} == {"baseline", "full"} and all(r.f1 is not None for r in rows if r.gold)
    assert all(r.judge_correct is False for r in rows)  # "I don't know" is never the gold text
    assert any(r.injected_tokens > 0 for r in rows if r.variant == "full")
    assert sum(1 for r in srv.chat_requests() if answer_of(r)) == 40

"""The judges follow the benchmarks' published criteria (in our own words), default to each benchmark's own
judge model, and ``--judge-prompt FILE`` plugs in any published judge's exact text. LLM paths run the real
``openai`` client against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from evaluate_fixtures import QUESTIONS, router, write_conversation, write_store
from typer.testing import CliRunner

from gravity_engine.cli import app
from gravity_engine.errors import ConfigError, InputError
from gravity_engine.build import ensure_stores
from gravity_engine.eval.evaluate import EvalSettings, ResultsFile, plan_evaluation, run_evaluation
from gravity_engine.eval.evaluate.judge import default_judge_model, load_judge_prompt, read_verdict
from gravity_engine.eval.evaluate.results import read_run_info
from gravity_engine.eval.evaluate.runner import make_eval_clients
from gravity_engine.eval.evaluate.stats import score_table
from gravity_engine.llm import OpenAIClient
from gravity_engine.prompts import PROMPTS, judge_longmemeval
from gravity_engine.prompts.base import read_block
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.openai_server import ScriptedOpenAIServer
from gravity_engine.testing.pytest_plugin import local_llm_config

runner = CliRunner()

LME_TYPES = ["single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
             "temporal-reasoning", "knowledge-update"]


def _lme_system(qtype: str, abstention: bool = False) -> str:
    return judge_longmemeval.PROMPT.render({"question": "q", "gold": "g", "answer": "a", "question_type": qtype,
                                            "abstention": abstention})[0]["content"]


# --- the criteria ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("qtype", LME_TYPES)
def test_longmemeval_judge_accepts_intermediate_steps_that_reach_the_answer(qtype):
    system = _lme_system(qtype)
    assert "intermediate steps" in system and "lead to the correct final answer, say yes" in system
    assert "never states the answer" not in system  # version 2 said no to shown steps


@pytest.mark.parametrize("qtype, rule", [
    ("single-session-user", "something the user said"),
    ("single-session-assistant", "something the assistant itself said"),
    ("multi-session", "combines information from several sessions"),
    ("temporal-reasoning", "off by one from the correct number still counts as correct"),
    ("knowledge-update", "the latest value is the correct answer"),
    ("single-session-preference", "rubric"),
])
def test_longmemeval_judge_has_a_rule_per_question_type(qtype, rule):
    assert rule in _lme_system(qtype)
    others = [t for t in LME_TYPES if t != qtype]
    assert all(rule not in _lme_system(t) for t in others)  # each rule only for its own type


def test_longmemeval_abstention_questions_are_right_when_the_response_says_it_cannot_answer():
    system = _lme_system("single-session-user", abstention=True)
    assert "cannot be answered" in system and "recognises that it cannot be answered" in system
    assert "makes up an answer" in system


def test_default_judge_model_is_each_benchmarks_own():
    assert default_judge_model("longmemeval") == "gpt-4o" == judge_longmemeval.DEFAULT_MODEL
    assert default_judge_model("locomo") == "gpt-4o-mini" and default_judge_model("custom") == "gpt-4o-mini"


def test_locomo_judge_has_the_published_protocols_leniency():
    system = PROMPTS["judge"].render({"question": "q", "gold": "7 May 2023", "answer": "last Sunday"})[0]["content"]
    assert "touches on the same topic as the gold answer" in system
    assert "relative time reference" in system and "points at the same date or period as the gold answer" in system
    assert "same date or period in any format" in system


# --- the LongMemEval judge's request over HTTP ----------------------------------------------------------

_LME = [  # invented for this test
    {"question_id": "d1", "question_type": "temporal-reasoning", "question": "How many days after the concert did I "
     "sell my violin?", "answer": "5 days", "question_date": "2024/03/30 (Sat) 10:00",
     "haystack_session_ids": ["s1", "s2"], "haystack_dates": ["2024/03/02 (Sat) 20:00", "2024/03/07 (Thu) 09:00"],
     "haystack_sessions": [[{"role": "user", "content": "The concert tonight went well.", "has_answer": True},
                            {"role": "assistant", "content": "Congratulations!"}],
                           [{"role": "user", "content": "I sold my violin today.", "has_answer": True},
                            {"role": "assistant", "content": "A big step."}]],
     "answer_session_ids": ["s1", "s2"]},
]
STEPS_ANSWER = "The concert was on 2 March and you sold the violin on 7 March: 7 - 2 = 5 days."


def test_longmemeval_judge_request_carries_the_type_rules_and_gpt_4o(tmp_path, allow_local_llm, monkeypatch):
    def lme_router(request):
        if request.get("response_format", {}).get("json_schema", {}).get("name") == "judge_longmemeval":
            answer = read_block(request["messages"][-1]["content"], "generated_answer")
            return {"reasoning": "scripted", "verdict": "yes" if answer == STEPS_ANSWER else "no"}
        return STEPS_ANSWER

    path = tmp_path / "lme.json"
    path.write_text(json.dumps(_LME))
    with ScriptedOpenAIServer(router=lme_router, models=["gpt-4o", "gravity-echo"]) as srv:
        monkeypatch.setenv("GRAVITY_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
        answer_llm, judge_llm = make_eval_clients(cache=False, dataset="longmemeval")
        settings = EvalSettings(dataset="longmemeval", path=path, out=tmp_path / "res", stores=tmp_path / "stores",
                                variants=["baseline"], concurrency=1)
        ensure_stores(plan_evaluation(settings).conversations_to_build(), settings.stores, FakeEmbedder())
        summary = run_evaluation(settings, answer_llm, judge_llm, embedder=FakeEmbedder())
        judged = [r for r in srv.chat_requests() if r.get("response_format")]
    assert len(judged) == 1 and judged[0]["model"] == "gpt-4o"
    system = judged[0]["messages"][0]["content"]
    assert "off by one" in system and "lead to the correct final answer, say yes" in system
    assert "Question type: temporal-reasoning" in judged[0]["messages"][1]["content"]
    (row,) = ResultsFile(summary.results_path).rows()
    assert row.judge_correct is True and row.judge_model == "gpt-4o" and row.judge_prompt == judge_longmemeval.PROMPT.id
    assert read_run_info(settings.out).judge_model == "gpt-4o"


# --- a published judge plugged in verbatim --------------------------------------------------------------

TEMPLATE = """Grade a response against a correct answer.
Category: {question_type}
Question: {question}
Correct answer: {gold}
Response: {answer}
Is the response correct? Reply as JSON, e.g. {{"verdict": "yes"}}, or with yes or no only."""


def _custom_judge_router(request):
    messages = request["messages"]
    if len(messages) == 1 and messages[0]["content"].startswith("Grade a response against a correct answer."):
        lines = dict(line.split(": ", 1) for line in messages[0]["content"].splitlines() if ": " in line)
        return "Yes." if lines["Response"].strip().lower() == lines["Correct answer"].strip().lower() else "no"
    return router(request)


def test_judge_prompt_file_round_trip_through_the_cli(tmp_path, allow_local_llm, monkeypatch):
    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    template = tmp_path / "my_judge.txt"
    template.write_text(TEMPLATE, encoding="utf-8")
    out = tmp_path / "res"
    with ScriptedOpenAIServer(router=_custom_judge_router) as srv:
        monkeypatch.setenv("GRAVITY_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
        result = runner.invoke(app, ["evaluate", "custom", str(conv), "--stores", str(tmp_path / "stores"), "--out",
                                     str(out), "--variants", "baseline,full", "--no-cache", "--judge-prompt",
                                     str(template), "--concurrency", "1"])
        requests = srv.chat_requests()
    assert result.exit_code == 0, result.output
    prompt_id = load_judge_prompt(template).id
    assert prompt_id.startswith("judge_custom@") and f"judge prompt: {prompt_id} (from {template})" in result.output
    # The exact text reaches the judge, filled in; the reply's verdict is read from free text.
    expected = TEMPLATE.format(question_type="single-hop", question=QUESTIONS["q1"][0], gold="the library",
                               answer="the library")
    assert expected in [r["messages"][0]["content"] for r in requests if len(r["messages"]) == 1]
    assert '{"verdict": "yes"}' in expected
    rows = ResultsFile(out / "results.jsonl").rows()
    assert len(rows) == 12 and {r.judge_prompt for r in rows} == {prompt_id} and not any(r.judge_error for r in rows)
    assert {r.judge_label for r in rows} == {"Yes", "no"}
    lines = {ln.variant: ln for ln in score_table(rows)}
    assert (lines["baseline"].overall.correct, lines["full"].overall.correct) == (3, 3)
    assert read_run_info(out).prompt_versions["judge"] == prompt_id
    assert read_run_info(out).settings["judge_prompt"] == str(template)


@pytest.mark.parametrize("text, message", [
    ("Q: {question} A: {answer} R: {response}", "unknown placeholder(s) {response}"),
    ("Q: {question} A: {answer}", "missing placeholder(s) {gold}"),
    ("Q: {} G: {} A: {}", "unnamed placeholder {}"),
    ('Q: {question} G: {gold} A: {answer} as {"label": "CORRECT"}', "write braces that belong to the text doubled"),
    ("Q: {question} G: {gold} A: {answer} }", "Single '}' encountered"),
    ("Q: {question.upper} G: {gold} A: {answer}", "{question.upper} is not a placeholder"),
    ("   \n", "the judge prompt is empty"),
], ids=["unknown", "missing", "positional", "json-braces", "lone-brace", "attribute", "empty"])
def test_bad_judge_prompt_is_a_clear_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "judge.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_judge_prompt(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_unreadable_judge_prompt_files(tmp_path):
    binary = tmp_path / "judge.bin"
    binary.write_bytes(b"\xff\xfe\x00{question}")
    with pytest.raises(InputError, match="not UTF-8"):
        load_judge_prompt(binary)
    with pytest.raises(InputError, match="cannot read the judge prompt"):
        load_judge_prompt(tmp_path / "nowhere.txt")


def test_bad_judge_prompt_stops_the_cli_before_any_request(tmp_path):
    conv, _ = write_conversation(tmp_path / "data")
    bad = tmp_path / "judge.txt"
    bad.write_text("{question} {answer}", encoding="utf-8")
    result = runner.invoke(app, ["evaluate", "custom", str(conv), "--out", str(tmp_path / "o"), "--judge-prompt",
                                 str(bad), "--dry-run"])
    assert result.exit_code == 2 and f"{bad}: missing placeholder(s) {{gold}}" in result.output
    assert "Traceback" not in result.output


def test_judge_prompt_version_follows_the_text(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(TEMPLATE, encoding="utf-8")
    b.write_text(TEMPLATE + " ", encoding="utf-8")
    assert load_judge_prompt(a).id != load_judge_prompt(b).id  # a changed judge never reuses cached verdicts
    assert load_judge_prompt(a).id == load_judge_prompt(a).id


@pytest.mark.parametrize("reply, verdict", [
    ("Yes.", (True, "Yes")), ("no", (False, "no")), ("CORRECT", (True, "CORRECT")), ("WRONG", (False, "WRONG")),
    ('{"label": "CORRECT"}', (True, "CORRECT")), ('Sure: {"verdict": "no"}', (False, "no")),
    ("The response is incorrect because it names another city.", (False, "incorrect")),
    ("I cannot tell.", None),
], ids=["yes", "no", "correct", "wrong", "json-label", "json-verdict", "incorrect", "none"])
def test_read_verdict(reply, verdict):
    assert read_verdict(reply) == verdict


def test_a_results_folder_keeps_one_judge(tmp_path, allow_local_llm):
    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    template = tmp_path / "my_judge.txt"
    template.write_text(TEMPLATE, encoding="utf-8")
    settings = EvalSettings(dataset="custom", path=conv, out=tmp_path / "res", stores=tmp_path / "stores",
                            variants=["baseline"], concurrency=1)
    with ScriptedOpenAIServer(router=_custom_judge_router) as srv:
        clients = (OpenAIClient(local_llm_config(srv, cache=False)), OpenAIClient(local_llm_config(srv, cache=False)))
        run_evaluation(settings, *clients)
        # Adding a variant later with the same judge resumes; another judge prompt would mix two judges.
        more = run_evaluation(settings.model_copy(update={"variants": ["baseline", "full"]}), *clients)
        assert more.rows_written == 6
        with pytest.raises(ConfigError, match=r"was judged with judge@3 by gravity-echo; this run would judge with "
                                              r"judge_custom@\w+ by gravity-echo"):
            run_evaluation(settings.model_copy(update={"judge_prompt": template, "variants": ["+E"]}), *clients)
        other_model = OpenAIClient(local_llm_config(srv, cache=False, model="gpt-4o"))
        with pytest.raises(ConfigError, match="by gpt-4o"):
            run_evaluation(settings, clients[0], other_model)

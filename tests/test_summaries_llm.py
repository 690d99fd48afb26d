"""+Sum: with an endpoint the summaries are the model's (summarize_batch, once per batch, kept beside the
store); without one they are extractive and say so in the trace, the CLI and the variant label."""

from __future__ import annotations

import json

import pytest
from evaluate_fixtures import CONVERSATION_ID, router, write_conversation, write_store
from typer.testing import CliRunner

from gravity_engine.cli import app
from gravity_engine.errors import LLMError
from gravity_engine.eval.evaluate import EvalSettings, ResultsFile, run_evaluation
from gravity_engine.eval.evaluate.results import read_run_info
from gravity_engine.hosts import get_host
from gravity_engine.llm import OpenAIClient
from gravity_engine.prompts import summarize_batch
from gravity_engine.prompts.base import read_block
from gravity_engine.query import ask
from gravity_engine.query.summaries import SUMMARIES_FILE, summaries_kind, variant_label
from gravity_engine.store import AnchorStore
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.openai_server import Reply, ScriptedOpenAIServer
from gravity_engine.testing.pytest_plugin import local_llm_config

QUESTION = "When did Felix plant tomatoes?"


def _is_summary(request) -> bool:
    return request["messages"][0]["content"].startswith("You summarize a part of a dialogue")


def summary_router(request):
    if _is_summary(request):
        lines = read_block(request["messages"][-1]["content"], "conversation").splitlines()
        return f"MODEL SUMMARY of {len(lines)} turns starting {json.loads(lines[0])[0]}."
    return router(request)


@pytest.fixture
def store_dir(tmp_path):
    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    return tmp_path / "stores" / CONVERSATION_ID


def _host():
    return get_host("dense", embedder=FakeEmbedder(), use_cache=False)


def test_with_an_endpoint_sum_asks_the_model_once_per_batch_and_keeps_the_summaries(store_dir, allow_local_llm):
    with ScriptedOpenAIServer(router=summary_router) as srv:
        client = OpenAIClient(local_llm_config(srv, cache=False))
        store = AnchorStore.load(store_dir)
        result = ask(store, _host(), QUESTION, "+Sum", llm=client)
        asked = [r for r in srv.chat_requests() if _is_summary(r)]
        # One call per batch (the toy's two sessions are one batch each), then read from beside the store.
        assert len(asked) == 2
        (block,) = result.trace.blocks
        assert block.title == "Conversation Summaries (model-written by gravity-echo)"
        assert "MODEL SUMMARY of 4 turns starting S" in block.text
        assert "MODEL SUMMARY" in result.messages_with[-1]["content"]
        saved = json.loads((store_dir / SUMMARIES_FILE).read_text())
        assert saved["prompt"] == summarize_batch.PROMPT.id and saved["model"] == "gravity-echo"
        # Another process, another client without any LLM cache: nothing is asked again.
        again = ask(AnchorStore.load(store_dir), _host(), QUESTION, "+Sum",
                    llm=OpenAIClient(local_llm_config(srv, cache=False)))
        assert len([r for r in srv.chat_requests() if _is_summary(r)]) == 2
        assert again.trace.blocks[0].text == block.text
    # Offline afterwards, the stored model summaries are used and named as such.
    offline = ask(AnchorStore.load(store_dir), _host(), QUESTION, "+Sum")
    assert offline.trace.blocks[0].title == "Conversation Summaries (model-written by gravity-echo)"


def test_offline_sum_is_labelled_extractive(store_dir):
    store = AnchorStore.load(store_dir)
    result = ask(store, _host(), QUESTION, "+Sum")
    (block,) = result.trace.blocks
    assert block.title == "Conversation Summaries (extractive)"
    assert '"title": "Conversation Summaries (extractive)"' in result.trace.to_json()
    assert summaries_kind(store) == "extractive" and variant_label("+Sum", store) == "+Sum (extractive)"
    assert variant_label("full", store) == "full"
    assert not (store_dir / SUMMARIES_FILE).exists()


def test_cli_ask_shows_which_summaries(store_dir):
    result = CliRunner().invoke(app, ["ask", str(store_dir), QUESTION, "--variant", "+Sum", "--no-prompt"])
    assert result.exit_code == 0, result.output
    assert "Injected blocks: Conversation Summaries (extractive)" in result.output


def test_stale_or_damaged_summaries_on_file_are_not_used(store_dir, allow_local_llm):
    with ScriptedOpenAIServer(router=summary_router) as srv:
        client = OpenAIClient(local_llm_config(srv, cache=False))
        ask(AnchorStore.load(store_dir), _host(), QUESTION, "+Sum", llm=client)
    path = store_dir / SUMMARIES_FILE
    data = json.loads(path.read_text())
    path.write_text(json.dumps(data | {"prompt": "summarize_batch@1"}))  # written by an older prompt
    assert summaries_kind(AnchorStore.load(store_dir)) == "extractive"
    path.write_text("{not json")
    assert summaries_kind(AnchorStore.load(store_dir)) == "extractive"


def test_a_failing_summary_is_a_clear_error_and_nothing_is_kept(store_dir, allow_local_llm):
    def failing(request):
        if _is_summary(request):
            return Reply.error(400, "model not found")
        return router(request)

    with ScriptedOpenAIServer(router=failing) as srv:
        with pytest.raises(LLMError, match=r"\+Sum: 2 of 2 batch summaries failed .*model not found"):
            ask(AnchorStore.load(store_dir), _host(), QUESTION, "+Sum",
                llm=OpenAIClient(local_llm_config(srv, cache=False)))
    assert not (store_dir / SUMMARIES_FILE).exists()


def test_evaluate_sum_uses_the_answer_models_summaries(tmp_path, store_dir, allow_local_llm):
    conv = tmp_path / "data" / f"{CONVERSATION_ID}.jsonl"
    with ScriptedOpenAIServer(router=summary_router) as srv:
        cfg = local_llm_config(srv, cache=False)
        settings = EvalSettings(dataset="custom", path=conv, out=tmp_path / "res", stores=tmp_path / "stores",
                                variants=["baseline", "+Sum"], concurrency=1)
        summary = run_evaluation(settings, OpenAIClient(cfg), OpenAIClient(cfg))
        assert len([r for r in srv.chat_requests() if _is_summary(r)]) == 2
    rows = [r for r in ResultsFile(summary.results_path).rows() if r.variant == "+Sum"]
    assert len(rows) == 6 and all("MODEL SUMMARY" in r.injected_context for r in rows)
    assert read_run_info(settings.out).prompt_versions["summarize_batch"] == summarize_batch.PROMPT.id


def test_summaries_written_through_another_store_object_reach_a_cached_query(store_dir, allow_local_llm):
    # The app keeps one GravityQuery per store; summaries written via another loaded copy (another session,
    # or the CLI) must replace the extractive ones it cached.
    from gravity_engine.query.pipeline import GravityQuery

    gq = GravityQuery(AnchorStore.load(store_dir), FakeEmbedder())
    first = ask(gq.store, _host(), QUESTION, "+Sum", gravity=gq)
    assert first.trace.blocks[0].title.endswith("(extractive)")
    with ScriptedOpenAIServer(router=summary_router) as srv:
        other = AnchorStore.load(store_dir)
        ask(other, _host(), QUESTION, "+Sum", llm=OpenAIClient(local_llm_config(srv, cache=False)), gravity=gq)
    later = ask(gq.store, _host(), QUESTION, "+Sum", gravity=gq)
    assert later.trace.blocks[0].title == "Conversation Summaries (model-written by gravity-echo)"
    assert "MODEL SUMMARY" in later.trace.blocks[0].text

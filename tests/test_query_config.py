"""The query settings: options grouped by step, named without their group, typed in as text, documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from query_fixtures import make_store

from gravity_engine.errors import ConfigError
from gravity_engine.query.config import FULL, OPTION_GROUP, PAPER, Budget, QueryConfig

QUESTION = "When did Caroline go to the LGBTQ support group?"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "query-settings.md"


def test_options_live_in_the_group_of_their_step_and_are_named_without_it():
    config = FULL.with_(line_sigma=0.3, host_k=4, total=800, R=2, modules=("events",))
    assert config.lines.line_sigma == 0.3 and config.fusion.host_k == 4 and config.budget.total == 800
    assert config.temporal.temporal_slots == 2 and config.selection.modules == ("events",)
    assert FULL.lines.line_sigma == 0.25  # presets are frozen; with_ copies
    assert QueryConfig(K_E=5, variant="x").selection.K_E == 5  # the constructor routes the same way
    assert set(config.options()) == set(OPTION_GROUP)
    changed = {k for k, v in config.options().items() if v != FULL.options()[k]}
    assert changed == {"line_sigma", "host_k", "total", "temporal_slots", "modules"}


def test_every_default_is_written_once_and_one_budget_caps_the_anchors():
    assert FULL.budget == Budget()
    assert Budget().anchor_cap() == Budget().anchor_budget  # ask: the host's k, anchors on top
    assert Budget(total=1000, anchor_share=0.3).anchor_cap() == 300  # an equal budget: a share of it
    assert Budget(total=1000, additive=True).anchor_cap() == 400
    assert PAPER.budget.anchor_cap() is None  # the method: K limits only


@pytest.mark.parametrize("text, problem", [
    ("line_sigma=abc", "line_sigma='abc': Input should be a valid number"),
    ("K_E=2.5", "K_E='2.5': Input should be a valid integer"),
    ("sigma=7", "sigma='7': Input should be less than or equal to 1"),
    ("fusion_method=max", "fusion_method='max': Input should be 'rrf' or 'slots'"),
    ("sigma", "write it as NAME=VALUE"),
    ("temporal=off", "temporal is a group of options; name one of them: temporal_preservation, temporal_slots"),
    ("fusion=rrf", "fusion_method"),
    ("K_X=1", "unknown option(s) K_X"),
])
def test_typed_settings_become_their_type_or_say_what_is_wrong(text, problem):
    config = FULL.with_typed(["line_sigma=0.3", "memory_floor=none", "modules=entities, events", "rerank=off",
                              "R=2", "fusion_method=rrf"])
    assert (config.lines.line_sigma, config.lines.memory_floor, config.selection.modules) == \
        (0.3, None, ("entities", "events"))
    assert not config.selection.rerank and config.temporal.temporal_slots == 2
    assert config.fusion.fusion_method == "rrf"
    with pytest.raises(ConfigError) as err:
        FULL.with_typed([text])
    assert problem in str(err.value) and "\n" not in str(err.value)


def test_the_settings_page_lists_every_option_with_its_default():
    text = DOCS.read_text(encoding="utf-8")
    for name, group in OPTION_GROUP.items():
        default = FULL.options()[name]
        assert f"| `{group}` | `{name}` | `{default!r}` |" in text, name


def test_ask_takes_options_from_the_command_line(tmp_path, fake_embedder):
    from gravity_engine.cli import query_cmds  # noqa: F401 - registers ask
    from gravity_engine.cli.app import app

    make_store(fake_embedder).save(tmp_path / "toy")
    trace = tmp_path / "trace.json"
    result = CliRunner().invoke(app, ["ask", str(tmp_path / "toy"), QUESTION, "--host", "bm25", "--set",
                                      "line_sigma=0.4", "--set", "K_E=1", "--trace", str(trace), "--no-prompt"])
    assert result.exit_code == 0, result.output
    config = json.loads(trace.read_text())["config"]
    assert config["line_sigma"] == 0.4 and config["K_E"] == 1 and config["mode"] == "anchors"
    bad = CliRunner().invoke(app, ["ask", str(tmp_path / "toy"), QUESTION, "--set", "K_E=lots"])
    assert bad.exit_code != 0 and "K_E='lots'" in bad.output and "Traceback" not in bad.output

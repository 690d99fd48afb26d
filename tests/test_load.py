"""The load benchmark's client (benchmarks/load.py) against a real shared app: it speaks Streamlit's websocket
protocol well enough to sign in, open pages and get a playground answer, and it reports what goes wrong instead
of timing it. No timings are asserted (the benchmark prints them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app_services import auth
from gravity_engine.testing.app_server import AppServer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
load = pytest.importorskip("load")  # benchmarks/load.py
PASSWORD = "load-test-password"


def test_the_protocol_client_signs_in_opens_pages_and_gets_an_answer(tmp_path):
    home = tmp_path / "home"
    auth.set_password("user0", PASSWORD, home / "users.json")
    with AppServer(home, env={"GRAVITY_AUTH": "password"}) as server:
        stranger = load.Session(server.url)
        first = stranger.run()
        assert any("Sign in to Gravity Studio" in t for t in first.texts)
        with pytest.raises(load.RunError, match="sign-in refused"):
            load.sign_in_second_step(stranger, "user0", "not the password")
        stranger.close()

        s = load.Session(server.url)
        s.run()
        load.sign_in_second_step(s, "user0", PASSWORD)
        assert {"graph", "playground", "evaluation"} <= set(s.pages)
        assert any("Entity graph" in t for t in s.run("graph").texts)
        s.run("playground")
        assert load.ask(s, load.QUESTIONS[0]).seconds > 0
        # A run that never ends is an error with its reason, counted apart from the times.
        tally = load.Tally()
        assert load.timed(tally, "slow", s.run, "playground", timeout=0.001) is None
        assert tally.times["slow"] == [] and "no end of the run" in tally.errors["slow"][0]
        s.close()
    assert "Traceback" not in server.log()


def test_percentiles():
    assert load.pct([1.0], 95) == 1.0
    assert load.pct([float(i) for i in range(1, 101)], 50) == pytest.approx(50.5, abs=0.6)
    assert load.pct([float(i) for i in range(1, 101)], 95) == pytest.approx(95, abs=1)

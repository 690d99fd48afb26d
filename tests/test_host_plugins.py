"""A third party adds a host with a package of its own: pip installs a throwaway package into a temporary folder,
and with that folder on the path its entry points are listed by `gravity hosts`, made by `get_host`, and its
good host passes the conformance suite (tests/test_host_conformance.py) run in a child process. The package
also registers a host without the query_independent flag and one whose module does not exist: both are shown
for what they are, and neither takes the others down."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "gravity-wordprobe"
version = "0.0.1"

[project.entry-points."gravity_engine.hosts"]
wordprobe = "gravity_wordprobe:WordProbeHost"
halfhost = "gravity_wordprobe:HalfHost"
ghosthost = "gravity_wordprobe.nothere:GhostHost"
"""

# Word overlap over utterances: a real, if small, memory system written only against the public surface.
MODULE = '''
"""Word-overlap retrieval over utterances: a host from a package of its own."""

import re

from gravity_engine.hosts.base import Memory
from gravity_engine.hosts.memories import conversation_memories, format_memory_list


def _words(text):
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class WordProbeHost:
    """Ranks utterances by the words they share with the query."""

    name = "wordprobe"
    description = "Word overlap over utterances (a throwaway plugin)"
    aliases = ("probe",)
    query_independent = False

    def __init__(self, min_shared=1):
        self.min_shared = min_shared
        self.memories = []

    def ingest(self, conversation):
        self.memories = conversation_memories(conversation, "utterance")

    def search(self, query, k=10):
        asked = _words(query)
        scored = [(len(asked & _words(m.text)), i) for i, m in enumerate(self.memories)]
        scored = sorted((s for s in scored if s[0] >= self.min_shared), key=lambda s: (-s[0], s[1]))[:k]
        return [self.memories[i].model_copy(update={"score": float(n)}) for n, i in scored]

    def format_memories(self, memories):
        return format_memory_list(memories)


class HalfHost:
    """Written before the flag existed: it does not say whether its results depend on the query."""

    name = "halfhost"

    def ingest(self, conversation):
        pass

    def search(self, query, k=10):
        return []

    def format_memories(self, memories):
        return ""
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """The throwaway package, installed by pip into a folder of its own (no index, no build isolation: offline)."""
    src = tmp_path_factory.mktemp("wordprobe_src")
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "gravity_wordprobe").mkdir()
    (src / "gravity_wordprobe" / "__init__.py").write_text(textwrap.dedent(MODULE))
    target = tmp_path_factory.mktemp("wordprobe_site")
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                          "--no-build-isolation", "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=300, cwd=src)
    assert out.returncode == 0, out.stderr[-3000:]
    assert list(target.glob("gravity_wordprobe-0.0.1.dist-info/entry_points.txt"))
    return target


def _run(plugin_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin_path), str(ROOT)]),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=timeout)


def test_gravity_hosts_lists_the_plugins_hosts_beside_the_built_ins(plugin_path):
    out = _run(plugin_path, "-m", "gravity_engine", "hosts")
    assert out.returncode == 0, out.stderr[-3000:]
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line.strip()}
    assert re.match(r"wordprobe\s+installed\s+Word overlap over utterances", lines["wordprobe"])
    assert "from gravity-wordprobe" in lines["wordprobe"] and "also: probe" in lines["wordprobe"]
    assert "installed" in lines["dense"] and "from " not in lines["dense"]
    assert re.match(r"ghosthost\s+broken\s+cannot load gravity_wordprobe\.nothere:GhostHost", lines["ghosthost"])
    names = [line.split()[0] for line in out.stdout.split("\n\n")[0].splitlines()]
    assert names.index("mcp") < names.index("ghosthost") < names.index("halfhost") < names.index("wordprobe")


def test_the_plugins_host_is_made_by_name_and_a_host_without_the_flag_is_refused(plugin_path):
    script = textwrap.dedent("""
        from gravity_engine.errors import ConfigError
        from gravity_engine.hosts import get_host
        from gravity_engine.eval.measure_hosts import parse_hosts

        host = get_host("probe", min_shared=2)
        print("MADE", type(host).__module__, host.min_shared)
        print("SPEC", [s.host for s in parse_hosts("wordprobe")[0]])
        for name in ("halfhost", "ghosthost"):
            try:
                get_host(name)
            except ConfigError as err:
                print("REFUSED", name, err)
    """)
    out = _run(plugin_path, "-c", script)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "MADE gravity_wordprobe 2" in out.stdout
    assert "SPEC ['wordprobe']" in out.stdout
    assert re.search(r"REFUSED halfhost .*does not implement the Host protocol.*missing query_independent",
                     out.stdout), out.stdout
    assert re.search(r"REFUSED ghosthost .*registered but unusable: cannot load", out.stdout), out.stdout


def test_the_plugins_host_passes_the_conformance_suite(plugin_path):
    out = _run(plugin_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_host_conformance.py",
               "-k", "wordprobe or every_registered", timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    passed = re.search(r"(\d+) passed", out.stdout)
    assert passed and int(passed.group(1)) == 6, out.stdout[-2000:]  # five per-host tests and the coverage one
    assert "skipped" not in out.stdout and "failed" not in out.stdout

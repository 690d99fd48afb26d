"""The house's one rule: each layer imports only the layers below it, and no modules import each other in a loop.

Read from the source with the standard library (``ast``): every import counts, those inside functions too, so a
cycle cannot hide behind a late import. docs/architecture.md draws the layers and says what each holds.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bottom first. A module belongs to the entry that names it or a package holding it; the library's own package
# (its __init__, which holds the version) names only itself, so a new top-level module must be placed here.
LAYERS = [
    ("model", "gravity_engine gravity_engine.anchors gravity_engine.anchor_keys gravity_engine.conversation gravity_engine.errors "
              "gravity_engine.timeparse gravity_engine.datecheck gravity_engine.vocabulary gravity_engine.fileio "
              "gravity_engine.threads gravity_engine.paths gravity_engine.text gravity_engine.lines "
              "gravity_engine.memories gravity_engine.places gravity_engine.merging"),
    ("llm, loaders", "gravity_engine.llm gravity_engine.loaders gravity_engine.prompts gravity_engine.embed"),
    ("store", "gravity_engine.store gravity_engine.edits"),
    ("extract", "gravity_engine.extract"),
    ("build", "gravity_engine.build gravity_engine.scale"),
    ("hosts", "gravity_engine.hosts"),
    ("query", "gravity_engine.query"),
    ("eval", "gravity_engine.eval"),
    ("curate", "gravity_engine.curate gravity_engine.comentions"),
    ("app services", "gravity_engine.viz app_services"),
    ("faces", "gravity_engine.cli gravity_engine.__main__ gravity_engine.testing app_pages app"),
]


def _modules() -> dict[str, Path]:
    files = [*(ROOT / "gravity_engine").rglob("*.py"), *(ROOT / "app_services").rglob("*.py"),
             *(ROOT / "app_pages").rglob("*.py"), ROOT / "app.py"]
    return {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p for p in files}


def _layer(module: str) -> int:
    for rank, (_, names) in enumerate(LAYERS):
        if any(module == n or (n != "gravity_engine" and module.startswith(n + ".")) for n in names.split()):
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                out.add(name)
    return out


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def test_every_module_has_a_layer_and_imports_none_above_its_own():
    upward = [f"{a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})"
              for a, targets in sorted(_graph().items()) for b in sorted(targets) if _layer(b) > _layer(a)]
    assert not upward, "imports that run up a layer:\n" + "\n".join(upward)


def test_measuring_and_evaluating_never_build():
    """The commands ask the build layer for missing stores first; evaluation only reads stores. (Training may run
    a pure step of the build, such as consolidation; nothing that writes a store.)"""
    store_makers = ("gravity_engine.build", "gravity_engine.build.pipeline", "gravity_engine.build.stores")
    builds = [f"{a} imports {b}" for a, targets in sorted(_graph().items()) if a.startswith("gravity_engine.eval")
              for b in sorted(targets) if b in store_makers or b.startswith("gravity_engine.scale")]
    assert not builds, "evaluation reaching the build layer:\n" + "\n".join(builds)


def test_no_modules_import_each_other_in_a_loop():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components, each of two or more modules a cycle
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(", ".join(c) for c in cycles)


def test_the_check_sees_a_late_import_that_runs_up(tmp_path):
    """The rule is only as good as its reading: an import inside a function is an arrow too."""
    known = {"gravity_engine.store": tmp_path / "store.py", "gravity_engine.curate.edits": tmp_path / "edits.py"}
    known["gravity_engine.store"].write_text("def load():\n    from .curate.edits import apply\n    return apply\n")
    imports = _imports("gravity_engine.store", known["gravity_engine.store"], known)
    assert imports == {"gravity_engine.curate.edits"}
    assert _layer("gravity_engine.curate.edits") > _layer("gravity_engine.store")


def test_no_function_is_over_80_lines_outside_the_classic_extractor():
    """Long functions are where a change goes wrong unseen; the classic extractor's rules are the learned
    extractor's to reshape (issue 28)."""
    long = []
    for module, path in _modules().items():
        if module.startswith("gravity_engine.extract.classic"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80:
                long.append(f"{path.relative_to(ROOT)}: {node.name}, {node.end_lineno - node.lineno + 1} lines")
    assert not long, "functions over 80 lines:\n" + "\n".join(long)

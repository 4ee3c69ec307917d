"""The library's rooms follow the data flow (issue 48): no module imports a later stage, no
import cycle, no room holds most of the library. Imports are read from the source (lazy ones
inside functions too), so a cycle that only a late import keeps from failing still counts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

SRC = REPO / "src" / "modelvar"
#: the rooms in the order data flows; a module may import its own room and the ones before it.
#: Utilities (modules at the top of the package) come first; the entry points last.
LAYERS = (
    ("labels", "names", "seeding", "source_code", "table_files", "timing", "run_watch", "extras",
     "__init__"),
    ("data",),
    ("study",),
    ("models",),
    ("metrics",),
    ("simulation",),
    ("pipeline",),
    ("findings",),
    ("calibration",),
    ("plots",),
    ("planning",),
    ("running",),
    ("jobs",),
    ("cli", "__main__"),
)
ROOM_OF = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


def module_name(path: Path, root: Path = SRC) -> str:
    parts = ("modelvar", *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = SRC) -> dict[str, Path]:
    return {module_name(p, root): p for p in root.rglob("*.py")}


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modelvar modules a module imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != name}


def room(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def graph(root: Path = SRC) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                  if ROOM_OF[room(b)] > ROOM_OF[room(a)])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph with more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_room_has_a_place_in_the_data_flow():
    assert {room(m) for m in modules()} <= set(ROOM_OF)


def test_no_module_imports_a_later_stage():
    assert upward_imports(graph()) == []


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_no_room_holds_a_fifth_of_the_library():
    lines = {}
    for name, path in modules().items():
        lines[room(name)] = lines.get(room(name), 0) + len(path.read_text().splitlines())
    total = sum(lines.values())
    assert {r: n for r, n in lines.items() if n > 0.2 * total} == {}


def test_planning_is_under_15_percent_and_imports_nothing_of_the_running_room():
    """Issue 69: the workflow machinery (code versions, recipes, locks, the config's command
    line, Snakemake's log) lives in ``modelvar.running``, after the planner; planning decides
    what runs and stays a small share of the library."""
    edges = graph()
    lines = {}
    for name, path in modules().items():
        lines[room(name)] = lines.get(room(name), 0) + len(path.read_text().splitlines())
    assert lines["planning"] <= 0.15 * sum(lines.values()), lines["planning"]
    assert {f"{m} -> {t}" for m, targets in edges.items() if room(m) == "planning"
            for t in targets if room(t) == "running"} == set()


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_planner_imports_no_findings():
    """Issue 68: what the planner needs of a sequential study (its state, the stopping rule,
    the prior, the blocks' lines) lives in modelvar.study, below both; the planner reaches
    neither the findings nor their calibration, by any path."""
    edges = graph()
    found = {f"{m} -> {t}" for m in edges if room(m) == "planning"
             for t in reachable(edges, m) if room(t) in ("findings", "calibration")}
    assert found == set()


def test_the_guard_sees_a_cycle_and_an_upward_import(tmp_path):
    """The checks above can fail: a copy of the library with hparams importing the registry
    (the cycle of before), the figure registry importing the plots and the planner's rounds
    the findings' report."""
    import shutil

    copy = tmp_path / "modelvar"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "embedded"))
    hparams = copy / "models" / "hparams.py"
    hparams.write_text(hparams.read_text() + "\n\ndef _spec(name):\n"
                       "    from modelvar.models.registry import spec\n    return spec(name)\n")
    figures = copy / "study" / "figures.py"
    figures.write_text(figures.read_text() + "\n\ndef _load():\n"
                       "    from modelvar.plots import study\n    return study\n")
    rounds = copy / "planning" / "rounds.py"
    rounds.write_text(rounds.read_text() + "\n\ndef _lines(blocks):\n"
                      "    from modelvar.findings.report import blocks_html\n"
                      "    return blocks_html(blocks)\n")
    edges = graph(copy)
    assert any("modelvar.models.hparams" in cycle for cycle in cycles(edges))
    assert "modelvar.study.figures -> modelvar.plots.study" in upward_imports(edges)
    assert "modelvar.findings.report" in reachable(edges, "modelvar.planning.rounds")


def test_every_public_name_resolves():
    """The packages users import say what they offer (``__all__``), and every name there
    loads."""
    import importlib

    for package in ("modelvar.data", "modelvar.study", "modelvar.models", "modelvar.metrics",
                    "modelvar.pipeline", "modelvar.planning", "modelvar.simulation"):
        module = importlib.import_module(package)
        assert module.__all__, package
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_rules_glue_stays_small():
    """Issue 69: rules/common.smk holds the Snakemake glue only (the load, the wildcard
    constraints, the `get_*` input functions and helpers keyed by rule name); what it does lives
    in modelvar.running."""
    lines = len((REPO / "rules" / "common.smk").read_text().splitlines())
    assert lines <= 450, lines


def test_the_functions_module_reads_as_no_rule_to_snakemakes_lint():
    """`snakemake --lint` (a CI stage) calls a snakefile with both ``rule …:`` and ``def …:``
    text "mixed rules and functions", by regular expression, docstrings included: the one
    file of functions (rules/common.smk) must never hold "rule" followed on the line by a
    colon (a docstring's "a rule that reads … (``inputs``:" failed CI twice)."""
    text = (REPO / "rules" / "common.smk").read_text()
    found = re.findall(r".*rule .+?:.*", text)
    assert not found, f"rules/common.smk reads as a rule to snakemake --lint: {found}"
    assert re.search(r"def .+?:", text)  # the other half of the lint's test

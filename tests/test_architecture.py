"""The package's shape (issue 20): one package per question, layers that point one way,
no import circles, classical code without PyMC. Imports are read with ``ast`` (every
``import`` statement, at module level or inside a function, except those under
``if TYPE_CHECKING:``), so the test needs no import of the package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bayesmeta"

#: Layers, bottom to top. A module may import its own layer or lower ones, never higher.
LAYERS: dict[str, int] = {
    # foundations: the data (readers, schema, datasets and their simulator) and the option
    # objects with the keyword vocabulary, which import nothing of bayesmeta's
    "bayesmeta._version": 0, "bayesmeta.data": 0, "bayesmeta.simulate": 0,
    "bayesmeta.options": 0, "bayesmeta.vocabulary": 0,
    # shared machinery
    "bayesmeta.convergence": 1, "bayesmeta.summaries": 1,
    "bayesmeta.results": 1, "bayesmeta.sampling": 1, "bayesmeta._adaptive": 1, "bayesmeta.plots": 1,
    "bayesmeta.text": 1, "bayesmeta._ordinal": 1, "bayesmeta._interval": 1,
    # one package per question
    "bayesmeta.reliability": 2, "bayesmeta.agreement": 2, "bayesmeta.raters": 2,
    "bayesmeta.validity": 2, "bayesmeta.correlation": 2, "bayesmeta.reference_free": 2,
    "bayesmeta.corroboration": 2, "bayesmeta.unit_tests": 2, "bayesmeta.compare": 2,
    "bayesmeta.judges": 2, "bayesmeta.wmt": 2,
    # on top: the report, the public API (``bayesmeta/__init__.py``, re-exports only), the CLI
    "bayesmeta.report": 3, "bayesmeta": 4, "bayesmeta.cli": 5,
}
#: The topic packages: each a folder.
TOPICS = ["reliability", "agreement", "raters", "validity", "correlation", "reference_free",
          "corroboration", "unit_tests", "judges", "wmt"]
#: Modules that build or read a PyMC model (PyMC imported inside their functions).
BAYESIAN = {
    "bayesmeta.reliability.true_score", "bayesmeta.reliability._true_score_build",
    "bayesmeta.reliability._true_score_derived", "bayesmeta.reliability.d_study",
    "bayesmeta.raters.model", "bayesmeta.raters._model_build",
    "bayesmeta.raters._model_derived", "bayesmeta.validity.ordinal_cfa",
    "bayesmeta.validity._cfa_build", "bayesmeta.validity._cfa_derived",
    "bayesmeta.validity._cfa_setup", "bayesmeta.validity._ghk",
    "bayesmeta.correlation.model", "bayesmeta.correlation._model_build",
    "bayesmeta.correlation._model_result",
    "bayesmeta.validity.joint_model", "bayesmeta.validity._joint_build",
    "bayesmeta.validity._joint_start", "bayesmeta.validity._joint_checks",
    "bayesmeta.validity._joint_correlated",
    "bayesmeta.validity.modular",
}
#: Entry points that dispatch to a classical estimator or a Bayesian model by an option.
DISPATCHERS = {"bayesmeta.validity.factor_analysis", "bayesmeta.validity.variance",
               "bayesmeta.validity.residuals"}
HEAVY = ("pymc", "pytensor", "arviz", "nutpie", "jax", "numpyro")


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every runtime import statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                for a in child.names:
                    full = f"{child.module}.{a.name}"
                    found.append((full if full in MODULES else child.module, top))
            inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                           | ast.ClassDef | ast.Lambda)
            visit(child, inner)

    visit(tree, True)
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        targets = {_resolve(n) for n, _ in _imports(path) if n.split(".")[0] == "bayesmeta"}
        graph[mod] = {t for t in targets if t != mod}
    return graph


GRAPH = _graph()


def _layer(mod: str) -> int | None:
    if mod == "bayesmeta":
        return LAYERS[mod]
    while mod != "bayesmeta":
        if mod in LAYERS:
            return LAYERS[mod]
        mod = mod.rsplit(".", 1)[0]
    return None


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(GRAPH.get(m, ()))
    return seen


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in MODULES if m != "bayesmeta" and _layer(m) is None)
    assert unplaced == [], f"modules outside the layers: {unplaced}"


def test_every_topic_is_one_folder():
    for topic in TOPICS:
        assert (PACKAGE / topic / "__init__.py").is_file(), topic
    flat = {p.stem for p in PACKAGE.glob("*.py")}
    assert flat <= {"__init__", "_adaptive", "_interval", "_ordinal", "_version", "cli", "compare",
                    "convergence", "options", "plots", "results", "sampling", "simulate",
                    "summaries", "vocabulary"}, sorted(flat)
    folders = sorted(p.name for p in PACKAGE.iterdir()
                     if p.is_dir() and (p / "__init__.py").is_file())
    assert folders == sorted([*TOPICS, "data", "report", "text"]), folders


def test_no_import_circles():
    """No module reaches itself through imports (the graph is a DAG)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(GRAPH.get(m, ())):
            if state.get(t) == 1:
                cycle = [*stack[stack.index(t):], t]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_no_arrow_points_up():
    upward = []
    for mod, targets in GRAPH.items():
        if mod == "bayesmeta":
            continue
        for t in targets:
            if _layer(t) > _layer(mod):
                upward.append(f"{mod} (layer {_layer(mod)}) -> {t} (layer {_layer(t)})")
    assert upward == [], "\n".join(sorted(upward))


@pytest.mark.parametrize("entry", ["bayesmeta.correlation.comparison", "bayesmeta.report",
                                   "bayesmeta.reliability.classical",
                                   "bayesmeta.validity.concurrent"])
def test_data_path_never_climbs_back(entry):
    """What ``bm.correlations`` (or the report, ...) loads lies at its own layer or below:
    never the public package, never the report or the CLI from an analysis."""
    reached = _closure(entry)
    assert "bayesmeta" not in reached
    assert all(_layer(m) <= _layer(entry) for m in reached), sorted(
        m for m in reached if _layer(m) > _layer(entry))


def test_classical_code_never_imports_pymc():
    """Classical modules import no PyMC, ArviZ, PyTensor, nutpie or JAX, not even inside a
    function, and no Bayesian model module."""
    bad = []
    for mod, path in MODULES.items():
        if (_layer(mod) != 2 or mod in BAYESIAN or mod in DISPATCHERS
                or mod == "bayesmeta.compare" or MODULES[mod].name == "__init__.py"):
            continue
        for name, _ in _imports(path):
            if name.split(".")[0] in HEAVY or _resolve(name) in BAYESIAN:
                bad.append(f"{mod} imports {name}")
    assert bad == [], "\n".join(bad)


def test_no_heavy_import_at_module_level():
    """PyMC, ArviZ, PyTensor, nutpie, JAX and matplotlib are imported inside functions only."""
    bad = [f"{mod} imports {name}" for mod, path in MODULES.items()
           for name, top in _imports(path)
           if top and name.split(".")[0] in (*HEAVY, "matplotlib")]
    assert bad == [], "\n".join(bad)


def test_import_bayesmeta_loads_no_pymc_arviz_or_matplotlib():
    code = ("import sys, bayesmeta; print(','.join(m for m in ('pymc', 'pytensor', 'arviz', "
            "'nutpie', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""

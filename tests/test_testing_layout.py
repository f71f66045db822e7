"""pemath.testing's layout holds: a shared core that imports no encoding, encodings that import no other
encoding, and no import cycle among the oracle's modules (lazy imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "pemath" / "testing"


def _module(path: Path) -> str:
    parts = path.relative_to(PKG.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module of pemath.testing that ``path`` imports (at module level or inside a function)."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{target}.{alias.name}"
                candidates = [full, target]
                out.update(c for c in candidates if c.startswith("pemath.testing") and _exists(c))
    out.discard(mod)
    return out


def _exists(mod: str) -> bool:
    rel = Path(*mod.split(".")[2:]) if mod.count(".") >= 2 else Path()
    return (PKG / rel).with_suffix(".py").exists() or (PKG / rel / "__init__.py").exists()


MODULES = {_module(p): p for p in PKG.rglob("*.py")}


def test_the_core_imports_no_encoding_and_encodings_import_no_other():
    for mod, path in MODULES.items():
        deps = _imports(path)
        if mod.startswith("pemath.testing._core"):
            assert not {d for d in deps if d.startswith(("pemath.testing._rope", "pemath.testing._tables"))}, mod
        if mod.startswith("pemath.testing._rope"):
            assert not {d for d in deps if d.startswith("pemath.testing._tables")}, mod
        if mod.startswith("pemath.testing._tables"):
            assert not {d for d in deps if d.startswith("pemath.testing._rope")}, mod


def test_no_import_cycle_among_the_oracles_modules():
    graph = {m: {d for d in _imports(p) if d in MODULES and not d.endswith(("testing", "_core", "_rope", "_tables"))}
             for m, p in MODULES.items() if m != "pemath.testing"}
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in graph.get(m, ()):
            assert state.get(d) != 1, "import cycle: " + " -> ".join(stack + [m, d])
            if d not in state:
                visit(d, stack + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


def test_the_layout_test_sees_imports():
    """The checks above can fail: the asserts module's imports are found."""
    deps = _imports(PKG / "_rope" / "asserts.py")
    assert "pemath.testing._core.arrays" in deps and "pemath.testing._rope.diagnose" in deps

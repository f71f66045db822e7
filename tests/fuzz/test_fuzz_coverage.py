"""Every public callable of pemath is fuzzed: new functions cannot escape the fuzz registry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tests.fuzz as fuzz_pkg

from ._fuzz import COVERED

#: The modules whose ``__all__`` is the public API.
PUBLIC_MODULES = (
    "pemath",
    "pemath.rope",
    "pemath.rope.xpos",
    "pemath.rope.axial",
    "pemath.scaling",
    "pemath.sinusoidal",
    "pemath.alibi",
    "pemath.t5",
    "pemath.pedagogy",
    "pemath.positions",
    "pemath.testing",
    "pemath.testing.pipelines",
    "pemath.testing.strategies",
    "pemath.testing.golden",
    "pemath.models",
    "pemath.claims",
    "pemath.symbolic",
)

#: Public callables that take no user input worth fuzzing, with the reason.
EXEMPT = {
    "all_claims": "takes no argument",
    "bases": "takes no argument (pemath.testing.strategies.bases)",
    "RopeConfig": "a frozen record drawn by strategies.rope_configs (fuzzed); its kwargs() feed rope.apply (fuzzed)",
    "Outcome": "a result record built by run_claim; its consumers (table, narrate, to_json, ...) are fuzzed",
    "RopeRecovery": "a result record built by recover_rope (fuzzed)",
    "ConformanceReport": "a result record built by check_rope_kernel (fuzzed)",
    "ConformanceRow": "a row of a ConformanceReport, built by check_rope_kernel (fuzzed)",
    "Model": "a registry record built by pemath.models.get (fuzzed); its spec() is from_hf_config (fuzzed)",
    "CheckFailure": "an exception class",
    "Skip": "an exception class",
    "gguf_architectures": "takes no argument (the table read from llama.cpp's source)",
    "registry_version": "takes no argument (a digest of the registered claims)",
    "ProofFailure": "an exception class",
}


def _is_exception(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def public_callables() -> dict[str, object]:
    """``{qualified name: object}`` of every public function and class (submodules walked, not listed)."""
    out: dict[str, object] = {}
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj) or _is_exception(obj) or name in EXEMPT:
                continue
            out[f"{modname}.{name}"] = obj
    from pemath import cli  # the command line: its entry point takes argv

    out["pemath.cli.main"] = cli.main
    return out


def _registered() -> set[str]:
    for info in pkgutil.iter_modules(fuzz_pkg.__path__):
        if info.name.startswith("test_fuzz_"):
            importlib.import_module(f"tests.fuzz.{info.name}")
    return set(COVERED)


def test_every_public_callable_is_fuzzed():
    covered = _registered()
    public = public_callables()
    # a name re-exported by another module counts as covered under either name
    by_object: dict[int, set[str]] = {}
    for qual, obj in public.items():
        by_object.setdefault(id(obj), set()).add(qual)
    missing = sorted(q for q, obj in public.items() if not (by_object[id(obj)] & covered))
    assert not missing, (
        f"public callables without a fuzz test: {missing}; add a Spec for each to tests/fuzz "
        "(and @covers it) or, if it takes no user input, to EXEMPT with the reason"
    )


def test_registry_names_exist():
    """Every name a fuzz test claims to cover is a real public callable (no stale entries)."""
    public = public_callables()
    stale = sorted(_registered() - set(public))
    assert not stale, f"fuzz tests cover names that are not public callables: {stale}"

"""The ``pemath`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pemath",
        description="The mathematical reference for transformer positional encodings.",
    )
    parser.add_argument("--version", action="version", version=f"pemath {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    prove = sub.add_parser(
        "prove",
        help="decide every claim (symbolic proofs, numeric and high-precision cross-checks) and report",
    )
    prove.add_argument("ids", nargs="*", metavar="ID", help="claim ids or families to run (default: all)")
    prove.add_argument("--json", action="store_true", help="print a JSON array instead of the table")
    prove.add_argument("--list", action="store_true", help="list the claim ids and exit")
    prove.add_argument("--narrate", action="store_true", help="print each derivation step by step")
    prove.add_argument("--latex", action="store_true", help="with --narrate: formulas as LaTeX; with --json: each step's LaTeX too (display: a record for --recheck has none)")
    prove.add_argument("--no-checks", action="store_true", help="run the symbolic proofs only")
    prove.add_argument("--recheck", action="store_true",
                       help="then re-decide every decided step from its stored formula alone, in a fresh Python "
                            "process that loads no claim code (python -m pemath.symbolic.recheck RECORD.json)")
    from . import _cli_diagnose

    _cli_diagnose.add_parser(sub)
    freqs = sub.add_parser(
        "inv-freq",
        help="print RoPE's inverse frequencies: of a config.json or a registered model, or of a head dim and base",
    )
    freqs.add_argument("--config", metavar="CONFIG",
                       help="a Hugging Face config.json, or a registered model's name (pemath.models.names())")
    freqs.add_argument("--layer-type", help="with --config: the layer type, for configs whose layer types differ")
    freqs.add_argument("--layer", type=int, help="with --config: the layer (0-based), for models that mix RoPE and "
                                                 "NoPE layers")
    freqs.add_argument("--layout", choices=("half", "interleaved"),
                       help="with --config of a model type pemath has not checked: its apply function's pairing")
    freqs.add_argument("--seq-len", type=int, help="the sequence length, for scalings driven by it (dynamic NTK)")
    freqs.add_argument("--head-dim", type=int, help="without --config: the rotary dimension")
    freqs.add_argument("--base", type=float, help="without --config: the base (default 10000)")
    return parser


def _select(parser: argparse.ArgumentParser, ids: Sequence[str]) -> list:
    from . import claims

    every = claims.all_claims()
    if not ids:
        return every
    chosen = []
    for want in ids:
        hits = [c for c in every if c.id == want or c.family == want or c.id.startswith(want + ".")]
        if not hits:
            import difflib

            names = sorted({c.id for c in every} | {c.family for c in every})
            close = difflib.get_close_matches(want, names, n=3, cutoff=0.5)
            hint = (f"did you mean {' or '.join(map(repr, close))}?" if close else
                    "`pemath prove --list` lists them")
            parser.error(f"unknown claim id or family {want!r}; {hint}")
        chosen += [c for c in hits if c not in chosen]
    # a claim's record needs the records of the claims it uses (the re-checker finds its references there): each
    # runs too, before the first claim that uses it
    out: list = []

    def add(c: Any) -> None:
        for used in c.uses:
            add(claims.get(used))
        if c not in out:
            out.append(c)

    for c in chosen:
        add(c)
    return out


def _prove(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import claims

    from .claims.report import terminal_width

    selected = _select(parser, args.ids)
    if args.list:
        wid, wkind = max(len(c.id) for c in selected), max(len(c.kind) for c in selected)
        for c in selected:
            print(f"{c.id:<{wid}}  {c.kind:<{wkind}}  {c.title}")
        return 0
    outcomes = []
    for c in selected:
        o = claims.run_claim(c, checks=not args.no_checks)
        outcomes.append(o)
        if args.narrate and not args.json:
            print(claims.narrate(o, latex=args.latex, width=terminal_width()), flush=True)
            print()
    code = claims.exit_code(outcomes)
    if args.json:
        print(claims.to_json(outcomes, latex=args.latex))
    else:
        print(claims.table(outcomes))
        print()
        print(claims.summary_line(outcomes))
        from .claims.report import checker_line, uses_line

        print(checker_line(outcomes))
        print(uses_line(outcomes))
        import textwrap

        from .claims.report import LEGEND

        print(textwrap.fill(LEGEND, width=terminal_width(), subsequent_indent="  "))
    if args.recheck:
        code = max(code, _recheck(claims.to_json(outcomes, latex=False), quiet=args.json))
    return code


def _recheck(record: str, *, quiet: bool) -> int:
    """Write the record to a temporary file and re-decide it in a fresh interpreter (isolated mode)."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "record.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(record)
        run = subprocess.run([sys.executable, "-I", "-m", "pemath.symbolic.recheck", "--registered-only", path],
                             capture_output=True, text=True, check=False)
    out = (run.stdout + run.stderr).strip()
    print(out, file=sys.stderr if quiet else sys.stdout, flush=True)
    return 0 if run.returncode == 0 else 1


def _inv_freq(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import os

    from . import rope

    try:
        if args.config is not None:
            if args.head_dim is not None or args.base is not None:
                parser.error("inv-freq: give --config, or --head-dim with --base; not both")
            if os.path.exists(args.config) or args.config.endswith(".json"):
                spec = rope.from_hf_config(args.config, layer_type=args.layer_type, layer=args.layer,
                                           layout=args.layout)
                source = args.config
            else:
                from . import models

                if args.layout is not None:
                    parser.error("inv-freq: --layout goes with a config.json; a registered model's layout is known")
                spec = models.get(args.config).spec(args.layer_type, layer=args.layer)
                source = f"registered model {args.config}"
            if isinstance(spec, rope.NoRope):
                print(f"# {source}: layer {args.layer} applies no RoPE ({spec.reason}): no frequencies")
                return 0
        else:
            if args.head_dim is None:
                parser.error("inv-freq: give --config CONFIG (a config.json or a registered model) or --head-dim")
            for flag, value in (("--layer-type", args.layer_type), ("--layer", args.layer), ("--layout", args.layout)):
                if value is not None:
                    parser.error(f"inv-freq: {flag} goes with --config")
            spec = rope.Spec("half", base=10000.0 if args.base is None else args.base, rotary_dim=args.head_dim)
            source = f"head dim {args.head_dim}, base {spec.base!r}"
        freq = rope.inv_freq(spec=spec, seq_len=args.seq_len)
    except (TypeError, ValueError, OSError) as exc:
        from ._cli_diagnose import as_flags

        parser.error(f"inv-freq: {as_flags(str(exc))}")
    print(f"# {source}: {spec!r}")
    print(f"# i  theta_i (float64; {len(freq)} pairs)")
    for i, f in enumerate(freq):
        print(f"{i:4d}  {float(f)!r}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    if argv is not None and (
        isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)) or not all(isinstance(a, str) for a in argv)
    ):
        raise TypeError(f"argv must be None or a list of strings, got {argv!r}")
    from ._pipes import quiet_on_closed_pipe

    return quiet_on_closed_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "prove":
        return _prove(parser, args)
    if args.command == "diagnose":
        from . import _cli_diagnose

        try:
            return _cli_diagnose.run(args)
        except _cli_diagnose.InputError as exc:
            print(f"pemath diagnose: error: {exc}", file=sys.stderr)
            return 2
    if args.command == "inv-freq":
        return _inv_freq(parser, args)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

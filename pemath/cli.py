"""The ``pemath`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
    prove.add_argument("--latex", action="store_true", help="with --narrate: formulas as LaTeX")
    prove.add_argument("--no-checks", action="store_true", help="run the symbolic proofs only")
    from . import _cli_diagnose

    _cli_diagnose.add_parser(sub)
    freqs = sub.add_parser("inv-freq", help="print RoPE inverse frequencies for a Hugging Face rope config")
    freqs.add_argument("--head-dim", type=int, required=True)
    freqs.add_argument("--base", type=float, default=10000.0)
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
            known = ", ".join(c.id for c in every)
            parser.error(f"unknown claim id or family {want!r}; known ids: {known}")
        chosen += [c for c in hits if c not in chosen]
    return chosen


def _prove(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from . import claims

    selected = _select(parser, args.ids)
    if args.list:
        for c in selected:
            print(f"{c.id:32s} {c.kind:16s} {c.title}")
        return 0
    outcomes = []
    for c in selected:
        o = claims.run_claim(c, checks=not args.no_checks)
        outcomes.append(o)
        if args.narrate and not args.json:
            print(claims.narrate(o, latex=args.latex), flush=True)
            print()
    if args.json:
        print(claims.to_json(outcomes))
    else:
        print(claims.table(outcomes))
        print()
        print(claims.summary_line(outcomes))
    return claims.exit_code(outcomes)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is not None and (
        isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)) or not all(isinstance(a, str) for a in argv)
    ):
        raise TypeError(f"argv must be None or a list of strings, got {argv!r}")
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
        from . import rope

        try:
            freq = rope.inv_freq(args.head_dim, base=args.base)
        except (TypeError, ValueError) as exc:
            parser.error(str(exc))
        for i, f in enumerate(freq):
            print(f"{i:4d}  {f!r}")
        return 0
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

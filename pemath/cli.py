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
    freqs = sub.add_parser("inv-freq", help="print RoPE inverse frequencies for a Hugging Face rope config")
    freqs.add_argument("--head-dim", type=int, required=True)
    freqs.add_argument("--base", type=float, default=10000.0)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
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

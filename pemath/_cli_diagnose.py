"""``pemath diagnose``: the oracle's report on saved arrays, from the command line.

A kernel's input and output saved to disk (``.npz`` with keys ``x``, ``actual`` and
optionally ``positions``; or one ``.npy`` / ``.pt`` file each), and the RoPE they should
satisfy (a ``config.json``, a registered model name, or ``--layout`` and friends) give
:func:`pemath.testing.assert_rope_close`'s verdict and report. Anything wrong with the
input (a missing file, missing keys, shapes that do not fit, an unknown model) is one
line naming what is wrong and what is expected, never a traceback.
"""

from __future__ import annotations

import argparse
import re
import difflib
import os
from typing import Any

import numpy as np

_KEYS = {"x": ("x", "input", "q", "inputs"), "actual": ("actual", "y", "out", "output", "result"),
         "positions": ("positions", "position_ids", "pos")}
_DTYPES = ("float32", "float16", "bfloat16", "float64")


from .rope.spec import NoRope, Spec


class InputError(Exception):
    """A one-line problem with what the user gave."""


#: the library's keyword names as this command line's flags, for messages that tell the user what to pass
_FLAGS = {"layer_type": "--layer-type", "layer": "--layer", "layout": "--layout", "seq_len": "--seq-len"}


def as_flags(message: str) -> str:
    """A library message for the command line: ``layer=`` becomes ``--layer``, ``layout='half'`` ``--layout half``."""
    def flag(m: re.Match) -> str:
        value = m.group(2)
        return _FLAGS[m.group(1)] + ("" if value is None else " " + value.strip("'\""))

    return re.sub(r"\b(layer_type|layer|layout|seq_len)=('[^']*'|\"[^\"]*\"|\w+)?", flag, message)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diagnose",
        help="check a saved RoPE kernel output against pemath and print the oracle's report",
        description="Check a RoPE kernel's saved output against pemath's reference and print the report "
                    "(exit 0: within the derived tolerance; 1: it differs; 2: the input is unusable).",
    )
    p.add_argument("arrays", nargs="?", metavar="ARRAYS.npz",
                   help="an .npz (or a torch .pt dict) holding x, actual and optionally positions")
    p.add_argument("--x", metavar="FILE", help="the kernel's input (.npy or .pt), instead of ARRAYS")
    p.add_argument("--actual", metavar="FILE", help="the kernel's output (.npy or .pt), instead of ARRAYS")
    p.add_argument("--positions", metavar="FILE", help="the positions (.npy or .pt); default: 0, 1, 2, ... along "
                   "the sequence axis (--seq-axis)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--config", metavar="CONFIG.json", help="the model's Hugging Face config.json")
    how.add_argument("--model", metavar="NAME", help="a model registered in pemath.models (e.g. llama-3.1-8b)")
    p.add_argument("--layout", choices=("half", "interleaved"), help="the layout (required without a config or "
                   "model; with one, only for a model type pemath does not know)")
    p.add_argument("--base", type=float, help="the RoPE base, without a config or model (default 10000)")
    p.add_argument("--rotary-dim", type=int, help="features rotated, without a config or model (default: all)")
    p.add_argument("--layer-type", help="which layer type's RoPE (Gemma 3, ModernBERT configs)")
    p.add_argument("--layer", type=int, help="which layer's RoPE (0-based), for models that mix RoPE and NoPE layers")
    p.add_argument("--seq-len", type=int, help="the sequence length a length-dependent scaling uses "
                   "(default: the largest position + 1, as Hugging Face does)")
    p.add_argument("--seq-axis", type=int, default=-2,
                   help="the sequence axis of x for the default positions (default -2: (..., seq, dim))")
    p.add_argument("--dtype", choices=_DTYPES, help="the dtype the kernel computed in, when the saved output was "
                   "widened (bfloat16 saved as float32, say); its values must be exact in it")
    p.add_argument("--gguf", metavar="MODEL.gguf", help="instead of arrays: compare the RoPE this GGUF implies "
                   "(llama.cpp's rules) with the one of --config or --model, and print each difference (exit 0: "
                   "they agree; 1: they differ; 2: unusable input). Needs pip install 'pemath[gguf]'")
    p.add_argument("--n-ctx", type=int, help="with --gguf: the context llama.cpp runs with (LongRoPE files choose "
                   "their factors by it)")


def run(args: argparse.Namespace) -> int:
    from .testing import assert_rope_close

    if args.gguf is not None:
        return _run_gguf(args)

    x, actual, positions, source = _arrays(args)
    spec = _spec(args)
    positions, note = _fit_positions(positions, x, args.seq_axis, spec)
    if args.dtype is not None:
        actual = _narrow(actual, args.dtype)
    if args.seq_len is not None:
        if args.seq_len < 1:
            raise InputError(f"--seq-len must be a positive integer, got {args.seq_len}")
        seq_len = args.seq_len
    else:  # HF's length for the length-dependent scalings: the largest position + 1
        seq_len = max(int(np.max(positions)) + 1, 1)
    header = (f"pemath diagnose: {source}: x {_describe(x)}, actual {_describe(actual)}; {note}\n"
              f"spec: {spec!r}, seq_len {seq_len}")
    try:
        assert_rope_close(actual, x, positions, spec=spec, seq_len=seq_len)
    except AssertionError as exc:
        print(header)
        print(str(exc))
        return 1
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(str(exc).splitlines()[0]) from exc
    except MemoryError as exc:
        raise InputError(f"the arrays are too large for this machine's memory ({exc})") from exc
    print(header)
    print("PASS: the output is RoPE of x at these positions within the derived tolerance")
    return 0


def _run_gguf(args: argparse.Namespace) -> int:
    """``--gguf``: the GGUF's RoPE (llama.cpp's rules) against the config's, difference by difference."""
    from . import models, rope

    if args.arrays or args.x or args.actual or args.positions:
        raise InputError("--gguf compares a GGUF with a config; it takes no arrays")
    if not (args.config or args.model):
        raise InputError("--gguf needs the model's config: --config CONFIG.json or --model NAME")
    unused = [flag for flag, value in (("--base", args.base), ("--rotary-dim", args.rotary_dim),
                                       ("--layer-type", args.layer_type), ("--seq-len", args.seq_len),
                                       ("--dtype", args.dtype)) if value is not None]
    if unused or args.seq_axis != -2:
        raise InputError(f"--gguf reads the RoPE from the file and the config; {', '.join(unused or ['--seq-axis'])} "
                         "would not be used: leave it out (--layer, --n-ctx and --layout apply)")
    try:
        config = models.get(args.model).config if args.model else args.config
        lines = rope.gguf_differences(args.gguf, config, n_ctx=args.n_ctx, layer=args.layer, layout=args.layout)
        g = rope.from_gguf(args.gguf, n_ctx=args.n_ctx, layer=args.layer)
    except ImportError as exc:
        raise InputError(str(exc)) from exc
    except (TypeError, ValueError, KeyError, OSError) as exc:
        raise InputError(as_flags(str(exc).splitlines()[0]).replace("n_ctx", "--n-ctx")) from exc
    print(f"pemath diagnose: {args.gguf} against {args.model or args.config}")
    print(f"the GGUF, as llama.cpp {rope.LLAMA_CPP['commit'][:12]} reads it: {_short(g)}")
    if not lines:
        print("AGREE: the GGUF's RoPE is the config's (pairing, dims, base, every frequency, attention factor, "
              "softmax scale, sections" + ("" if args.n_ctx is not None else
                                           "; at the original context and, where the config's RoPE depends on the "
                                           "length, at its extended one") + ")")
        return 0
    for line in lines:
        print(f"DIFFERS: {line}")
    return 1


def _short(spec: Any) -> str:
    """A Spec as the report shows it: per-pair frequency factors summarised, not listed."""
    from .scaling import LongRoPE

    s = getattr(spec, "scaling", None)
    if isinstance(s, LongRoPE) and np.array_equal(np.asarray(s.short_factor), np.asarray(s.long_factor)):
        f = np.asarray(s.short_factor)
        what = (f"per-pair frequency factors from the file ({f.size} values, {f.min():g} to {f.max():g}; "
                f"llama.cpp divides each pair's angle by its factor)")
        return repr(spec.replace(scaling=None)).rstrip(")") + f", scaling={what})"
    return repr(spec)


# --------------------------------------------------------------------------- reading the arrays


def _describe(a: Any) -> str:
    from ._dtypes import name

    return f"{name(a.dtype)} {tuple(a.shape)}"


def _load(path: str, what: str) -> Any:
    """An array, or a dict of arrays, from .npz/.npy/.pt."""
    if not os.path.exists(path):
        raise InputError(f"{what}: no such file: {path}")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".pt" or ext == ".pth":
            try:
                import torch
            except ImportError:
                raise InputError(f"{what}: reading {path} needs torch (pip install torch); or save the arrays "
                                 "with numpy.savez") from None
            return torch.load(path, map_location="cpu", weights_only=True)
        if ext in (".npz", ".npy"):
            out = np.load(path, allow_pickle=False)
            return dict(out) if ext == ".npz" else out
    except InputError:
        raise
    except Exception as exc:  # a corrupt or foreign file
        raise InputError(f"{what}: cannot read {path}: {type(exc).__name__}: {exc}") from exc
    raise InputError(f"{what}: {path} is neither .npz, .npy nor .pt")


def _pick(found: dict, key: str, path: str) -> Any:
    for k in _KEYS[key]:
        if k in found:
            return found[k]
    if key == "positions":
        return None
    close = difflib.get_close_matches(key, list(found), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise InputError(f"{path} holds {sorted(found)}; expected an array named {key!r}{hint} "
                     f"(or one of {', '.join(map(repr, _KEYS[key][1:]))})")


def _array(value: Any, what: str) -> Any:
    from . import _compat

    if isinstance(value, np.ndarray) and value.dtype.kind == "V" and value.dtype.itemsize == 2:
        raise InputError(f"{what} was saved as raw 2-byte records (a bfloat16 array through numpy.save): save it as "
                         "float32 and pass --dtype bfloat16")
    if not _compat.is_array(value):
        raise InputError(f"{what} must be an array, got {type(value).__name__}")
    return value


def _single(found: Any, what: str, path: str) -> Any:
    """The one array of a file given for one argument (an archive holding exactly one is accepted)."""
    if isinstance(found, dict):
        if len(found) != 1:
            raise InputError(f"{what}: {path} holds {sorted(found)}; expected one array (a .npy or .pt file)")
        found = next(iter(found.values()))
    return _array(found, what.lstrip("-"))


def _arrays(args: argparse.Namespace) -> tuple[Any, Any, Any, str]:
    if args.arrays is not None:
        if args.x or args.actual:
            raise InputError("give either ARRAYS or --x and --actual, not both")
        found = _load(args.arrays, "ARRAYS")
        if not isinstance(found, dict):
            raise InputError(f"{args.arrays} holds one array; expected x, actual and optionally positions "
                             "(numpy.savez(path, x=..., actual=..., positions=...)), or use --x and --actual")
        x = _array(_pick(found, "x", args.arrays), "x")
        actual = _array(_pick(found, "actual", args.arrays), "actual")
        positions = _pick(found, "positions", args.arrays)
        if args.positions:
            positions = _single(_load(args.positions, "--positions"), "--positions", args.positions)
        source = args.arrays
    else:
        if not (args.x and args.actual):
            raise InputError("give ARRAYS (an .npz with x, actual and optionally positions) or both --x and --actual")
        x = _single(_load(args.x, "--x"), "--x", args.x)
        actual = _single(_load(args.actual, "--actual"), "--actual", args.actual)
        positions = _single(_load(args.positions, "--positions"), "--positions", args.positions) \
            if args.positions else None
        source = f"{args.x}, {args.actual}"
    if positions is not None:
        positions = _array(positions, "positions")
    if tuple(x.shape) != tuple(actual.shape):
        raise InputError(f"actual has shape {tuple(actual.shape)} but x has shape {tuple(x.shape)}; the kernel's "
                         "output must have its input's shape")
    if len(x.shape) < 2:
        raise InputError(f"x must have a sequence axis and a feature axis, got shape {tuple(x.shape)}")
    if 0 in tuple(x.shape):
        raise InputError(f"x is empty (shape {tuple(x.shape)}): there is nothing to check")
    return x, actual, positions, source


def _narrow(actual: Any, dtype: str) -> Any:
    from ._dtypes import name

    if name(actual.dtype) == dtype:
        return actual
    from ._dtypes import unit_roundoff

    if unit_roundoff(dtype) < unit_roundoff(actual.dtype):
        raise InputError(f"--dtype {dtype} is wider than the saved output ({name(actual.dtype)}): --dtype names the "
                         "narrower dtype a widened output was computed in")
    from ._compat import to_numpy

    a = np.asarray(to_numpy(actual.float() if hasattr(actual, "float") and name(actual.dtype) == "bfloat16"
                            else actual))
    if dtype == "bfloat16":
        import ml_dtypes

        low = a.astype(ml_dtypes.bfloat16)
    else:
        low = a.astype(dtype)
    same = np.array_equal(low.astype(np.float64), a.astype(np.float64), equal_nan=True)
    if not same:
        raise InputError(f"--dtype {dtype}: actual holds values that are not {dtype} numbers (it was not computed "
                         f"in {dtype}, or was rounded differently)")
    return low


# --------------------------------------------------------------------------- the spec and the positions


def _spec(args: argparse.Namespace) -> Any:
    from . import models, rope

    direct = args.base is not None or args.rotary_dim is not None
    if args.config or args.model:
        if direct:
            raise InputError("--base and --rotary-dim describe the RoPE without a config; with --config or --model "
                             "they come from the config")
        try:
            if args.model:
                return models.get(args.model).spec(layer_type=args.layer_type, layer=args.layer)
            return rope.from_hf_config(args.config, layer_type=args.layer_type, layer=args.layer, layout=args.layout)
        except FileNotFoundError:
            raise InputError(f"--config: no such file: {args.config}") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"--config: {args.config} is not a UTF-8 JSON file ({exc.reason})") from None
        except (TypeError, ValueError, OSError) as exc:
            raise InputError(as_flags(str(exc).splitlines()[0])) from exc
    if args.layer is not None:
        raise InputError("--layer goes with --config or --model")
    if args.layout is None:
        raise InputError("say which RoPE: --config CONFIG.json, --model NAME, or --layout half|interleaved "
                         "(with --base and --rotary-dim)")
    try:
        return rope.Spec(layout=args.layout, base=10000.0 if args.base is None else args.base,
                         rotary_dim=args.rotary_dim)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc).splitlines()[0]) from exc


def _fit_positions(positions: Any, x: Any, seq_axis: int, spec: Any) -> tuple[Any, str]:
    """Positions that broadcast against x.shape[:-1], and how they were read."""
    lead = tuple(x.shape[:-1])
    if isinstance(spec, NoRope):
        spec = Spec("half")  # positions are read as for any single-axis RoPE; the layer then leaves x unchanged
    if spec.axial_dims is not None and positions is None:
        raise InputError(f"an axial spec needs saved positions with {len(spec.axial_dims)} coordinates per token "
                         "(shape (..., n_axes)); none were saved")
    comp = len(spec.mrope_section) if spec.mrope_section is not None else 0
    if positions is None:
        if not -len(lead) - 1 <= seq_axis < len(lead) or seq_axis in (-1, len(lead)):
            raise InputError(f"--seq-axis {seq_axis} is not an axis of x's leading shape {lead}")
        axis = seq_axis % (len(lead) + 1)
        n = lead[axis]
        shape = [1] * len(lead)
        shape[axis] = n
        default = np.arange(n).reshape(shape)
        if comp:  # text tokens: every M-RoPE component is the same position
            return np.stack([default] * comp), f"text positions 0 .. {n - 1} along axis {axis} (none saved)"
        return default, f"positions 0 .. {n - 1} along axis {axis} (none saved)"
    from ._compat import to_numpy

    p = np.asarray(to_numpy(positions))
    if p.dtype.kind not in "iuf":
        raise InputError(f"positions must be integers or reals, got dtype {p.dtype}")
    if p.dtype.kind == "f" and not np.all(np.isfinite(p)):
        raise InputError(f"positions must be finite, got {int(np.sum(~np.isfinite(p)))} NaN or infinite value(s)")
    if p.size == 0:
        raise InputError(f"positions are empty (shape {p.shape})")
    if spec.axial_dims is not None:
        n = len(spec.axial_dims)
        try:
            if p.ndim < 1 or p.shape[-1] != n:
                raise ValueError
            np.broadcast_shapes(p.shape[:-1], lead)
        except ValueError:
            raise InputError(f"an axial spec takes positions of shape (..., {n}) broadcasting against x.shape[:-1] = "
                             f"{lead}, got shape {p.shape}") from None
        return p, f"axial positions {p.shape} as saved"
    inner = p.shape[1:] if comp else p.shape
    if comp and (p.ndim < 1 or p.shape[0] != comp):
        raise InputError(f"an M-RoPE spec takes positions with a leading axis of {comp} components "
                         f"(HF's position_ids of shape ({comp}, batch, seq)), got shape {p.shape}")
    tries = []
    if len(inner) == 2 and len(lead) == 3:  # HF position_ids (batch, seq) against 4-D x: read as HF means them
        b, s = inner
        if lead[0] == b and lead[2] == s:
            tries.append(((b, 1, s), "HF position_ids (batch, seq) against x (batch, heads, seq, dim)"))
        if lead[0] == b and lead[1] == s:
            tries.append(((b, s, 1), "HF position_ids (batch, seq) against x (batch, seq, heads, dim)"))
    tries.append((inner, "as saved"))
    for shape, how in tries:
        try:
            np.broadcast_shapes(shape, lead)
        except ValueError:
            continue
        out = p.reshape(((comp,) if comp else ()) + shape)
        return out, f"positions {p.shape} {how}"
    raise InputError(f"positions of shape {p.shape} do not fit x of shape {tuple(x.shape)}: they must broadcast "
                     f"against x.shape[:-1] = {lead} (or be HF position_ids (batch, seq) for a 4-D x)")

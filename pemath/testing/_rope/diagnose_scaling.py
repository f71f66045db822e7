"""The named diagnoses of a scaling: each spec's scaling replaced by what real code got wrong about it.

Each entry is a bug reported in public trackers: Llama
3.1 treated as linear scaling; YaRN's ramp bounds rounded (or not) against the config's
``truncate``, its ramp computed from ``max_position_embeddings``, an explicit
``attention_factor`` ignored, ``mscale`` used without ``mscale_all_dim``; LongRoPE in
the other regime; dynamic NTK's base computed once at the maximum length.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._core.report import fmt

__all__ = ["scaling_variants"]


def _yarn(y: Any, **over: Any) -> Any:
    """A copy of the YaRN scaling ``y`` with some of its parameters changed."""
    from ...scaling import YaRN

    kw = {"factor": y.factor, "original_max_position": y.original_max_position, "beta_fast": y.beta_fast,
          "beta_slow": y.beta_slow, "mscale": y.mscale, "mscale_all_dim": y.mscale_all_dim,
          "attention_factor": y._attention_factor, "truncate": y.truncate, "ramp": y.ramp}
    kw.update(over)
    return YaRN(kw.pop("factor"), kw.pop("original_max_position"), **kw)


def scaling_variants(scaling: Any, seq_len: int | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(label, overrides of rope.apply's spec fields and seq_len)`` for the scaling's known misreadings."""
    from ... import scaling as sc

    if isinstance(scaling, sc.Llama3):
        yield (f"Llama 3.1 scaling treated as linear (every frequency divided by {fmt(scaling.factor)}, where "
               "the high frequencies must stay and only a band is smoothed)", {"scaling": sc.Linear(scaling.factor)})
    elif isinstance(scaling, sc.YaRN):
        t = scaling.truncate
        yield (f"YaRN's ramp bounds {'left unrounded' if t else 'rounded to integers'} (truncate={not t}; the spec "
               f"has truncate={t})", {"scaling": _yarn(scaling, truncate=not t)})
        longer = int(round(scaling.original_max_position * scaling.factor))
        yield (f"YaRN's ramp computed from max_position_embeddings={longer} instead of "
               f"original_max_position_embeddings={scaling.original_max_position}",
               {"scaling": _yarn(scaling, original_max_position=longer)})
        if scaling._attention_factor is not None:
            plain = _yarn(scaling, attention_factor=None)
            yield (f"the config's attention_factor={fmt(scaling.attention_factor)} ignored (YaRN's default "
                   f"{fmt(plain.attention_factor)} used instead)", {"scaling": plain})
        if scaling.mscale and scaling.mscale_all_dim:
            alone = _yarn(scaling, mscale_all_dim=None, attention_factor=_mscale(scaling.factor, scaling.mscale))
            yield (f"get_mscale(factor, mscale) = {fmt(alone.attention_factor)} used alone, without dividing by "
                   "get_mscale(factor, mscale_all_dim)", {"scaling": alone})
    elif isinstance(scaling, sc.LongRoPE):
        orig = scaling.original_max_position
        if seq_len is None or seq_len <= orig:
            yield (f"LongRoPE's long factors where the sequence (seq_len {seq_len}) is within "
                   f"original_max_position_embeddings={orig} (the regime chosen from the allocated context, not "
                   "max(position_ids) + 1)", {"seq_len": orig + 1})
        else:
            yield (f"LongRoPE's short factors beyond original_max_position_embeddings={orig} (seq_len {seq_len})",
                   {"seq_len": orig})
    elif isinstance(scaling, sc.DynamicNTK):
        top = int(round(scaling.factor * scaling.original_max_position))
        if seq_len is None or seq_len < top:
            yield (f"dynamic NTK's base computed once at the maximum length {top} (a static base under a dynamic "
                   f"name) instead of at seq_len {seq_len}", {"seq_len": top})


def _mscale(factor: float, m: float) -> float:
    from ...scaling.yarn import _mscale as mscale

    return mscale(factor, m)

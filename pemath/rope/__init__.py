"""Rotary position embedding (RoPE): numeric reference in every layout and convention."""

from .apply import apply, cos_sin, inv_freq

__all__ = ["inv_freq", "apply", "cos_sin"]

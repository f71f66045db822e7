"""The ``pemath-models`` directive: the model registry as a table, generated at build time.

Every row comes from :mod:`pemath.models` (the registry shipped as package data),
:func:`pemath.rope.from_hf_config` and :mod:`pemath.testing.golden` (the golden file of each
RoPE model, with its number of cases): nothing in the table is typed by hand.
"""

from __future__ import annotations


def _fmt(v: float) -> str:
    return f"{v:g}"


def _scaling(s) -> str:
    if s is None:
        return "none"
    name = type(s).__name__
    fields = {"Linear": ("factor",), "DynamicNTK": ("factor", "original_max_position"),
              "YaRN": ("factor", "original_max_position"), "Llama3": ("factor", "original_max_position",
                                                                      "low_freq_factor", "high_freq_factor"),
              "LongRoPE": ("original_max_position",)}.get(name, ())
    inner = ", ".join(f"{k}={_fmt(getattr(s, k)) if isinstance(getattr(s, k), float) else getattr(s, k)}"
                      for k in fields)
    return f"``{s.rope_type}`` ({inner})" if inner else f"``{s.rope_type}``"


def _golden(name: str) -> str:
    """The model's golden file, ``golden.load(name)``, and its number of cases; ``(none)`` for none."""
    from pemath.testing import golden

    if name not in golden.names():
        return "(none)"
    cases = len(golden.load(name)["cases"])
    return f"``v{golden.FORMAT_VERSION}/{name}.json`` ({cases} case{'s' if cases != 1 else ''})"


def rows() -> list[list[str]]:
    from pemath import models

    out = []
    for name in models.names():
        m = models.get(name)
        src = "reconstructed" if m.reconstructed else "copy of the file"
        if m.encoding != "rope":
            what = (f"ALiBi, {m.alibi().num_heads} heads" if m.encoding == "alibi" else
                    "T5 buckets ({0.num_buckets}, max distance {0.max_distance})".format(m.t5()))
            out.append([f"``{name}``", m.hf_id, what, "", "", "", "", _golden(name), src])
            continue
        for lt in m.layer_types or (None,):
            s = m.rope_spec(lt)
            layout = s.layout if s.out_layout is None else f"{s.layout} in, {s.out_layout} out"
            extra = []
            if s.mrope_section:
                extra.append(f"M-RoPE {list(s.mrope_section)}{' interleaved' if s.mrope_interleaved else ''}")
            if s.softmax_scale != 1.0:
                extra.append(f"softmax scale ×{s.softmax_scale:.4f}")
            if s.query_scaling_beta is not None:
                extra.append(f"query scaling β={s.query_scaling_beta:g}")
            if m.nope_layers:
                nope = list(m.nope_layers)
                extra.append(f"no RoPE on layers {', '.join(map(str, nope[:3]))}, ..., {nope[-1]} ({len(nope)} of "
                             f"{len(m.layers())})")
            label = f"``{name}``" + (f" ({lt})" if lt else "")
            out.append([label, m.hf_id, layout, _fmt(s.base), f"{s.rotary_dim} / {s.head_dim}",
                        _scaling(s.scaling), "; ".join(extra), _golden(name), src])
    return out


HEADER = ["model", "Hugging Face id", "layout / encoding", "base", "rotary / head dim", "scaling",
          "beyond the rotation", "golden file", "source"]


def setup(app):
    # docutils is imported here, so the tests can import rows() with the test extra alone
    from docutils.parsers.rst import Directive

    from _rst import list_table, parsed

    class ModelsTable(Directive):
        has_content = False

        def run(self):
            return parsed(self, list_table([HEADER, *rows()], (":class: pemath-wide",)))

    app.add_directive("pemath-models", ModelsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

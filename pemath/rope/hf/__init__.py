"""Hugging Face configurations as RoPE Specs: read (the family table), or measured from transformers' code.

* :mod:`.parameters`: ``from_hf``, one ``rope_parameters`` / ``rope_scaling`` dict;
* :mod:`.select`: ``from_hf_config`` and ``layers``, a whole ``config.json``, per layer: from the table, or measured;
* :mod:`.config`: the family table's reading of a config (and the generic one, with ``layout=``);
* :mod:`.families`: what each checked ``model_type``'s code fixes that its config does not say;
* :mod:`.probe`: runs a model's own transformers code on probes (torch and transformers needed);
* :mod:`.measure`: reads what the probes saw as per-layer Specs (NumPy only).
"""

from .parameters import from_hf
from .select import from_hf_config, layers

__all__ = ["from_hf", "from_hf_config", "layers"]

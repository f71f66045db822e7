"""Every model type of the installed transformers, measured: which have RoPE, which pemath derives, refuses, and why.

Run in an environment with torch and transformers (``pip install -e '.[hf]'``)::

    python3 benchmarks/hf_measure_survey.py [--json out.json] [model_type ...]

For each model type whose config class builds from its defaults, runs
:func:`pemath.rope.hf.measure.measure` (the model's own code on probes, see
``pemath/rope/hf/probe.py``) and prints one line: the time, the layers with RoPE /
without, where the answer came from (family table checked against the code, the generic
reading of the config verified by the code, explicit measured frequencies), or the refusal
and its reason. Then the totals. Model types in pemath's family table must agree with the
measurement on every layer; a disagreement is printed as MISMATCH and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings


def _isolated(mt: str, timeout: int):
    """measure({"model_type": mt}) in a forked child (a model that exhausts memory or time takes only the child)."""
    import multiprocessing as mp

    from pemath.rope.hf.measure import MeasurementMismatch, measure

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", measure({"model_type": mt})))
        except MeasurementMismatch as exc:
            send.send(("error", "MISMATCH", str(exc)))
        except Exception as exc:  # noqa: BLE001
            send.send(("error", "refused", f"{type(exc).__name__}: {str(exc)[:300]}"))

    proc = ctx.Process(target=child)
    proc.start()
    try:
        got = recv.recv() if recv.poll(timeout) else ("error", "refused", f"TimeoutError: over {timeout} s")
    except EOFError:  # the child died before answering (killed for memory, say)
        got = None
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    if got is None or (proc.exitcode not in (0, None) and got[0] == "ok"):
        got = ("error", "refused", f"the probe process died (exit {proc.exitcode})")
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("types", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per model type")
    args = ap.parse_args()
    import torch
    import transformers
    from transformers import CONFIG_MAPPING

    from pemath.rope import NoRope
    from pemath.rope.hf.families import FAMILIES
    torch.set_num_threads(2)
    warnings.simplefilter("ignore")
    transformers.logging.set_verbosity_error()
    types = args.types or sorted(CONFIG_MAPPING.keys())
    rows, counts = [], collections.Counter()

    for mt in types:
        t0 = time.perf_counter()
        try:
            CONFIG_MAPPING[mt]()
        except Exception as exc:  # noqa: BLE001
            rows.append({"model_type": mt, "status": "config does not build from defaults",
                         "why": f"{type(exc).__name__}: {str(exc)[:120]}"})
            counts["config does not build from defaults"] += 1
            print(f"{mt:32s}        config does not build from its defaults", flush=True)
            continue
        outcome = _isolated(mt, args.timeout)
        if outcome[0] == "error":
            _, status, why = outcome
        else:
            m = outcome[1]
            rope = sum(1 for s in m.specs if s is not None and not isinstance(s, NoRope))
            nope = sum(1 for s in m.specs if isinstance(s, NoRope))
            refused = len(m.refusals)
            sources = collections.Counter(m.source.values())
            if refused:
                status, why = ("has RoPE, refused" if rope else "refused: measured, not explained"), \
                    next(iter(m.refusals.values()))
            elif rope:
                status, why = "derived", ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))
            else:
                status, why = "no RoPE (measured)", f"{nope} layers without RoPE"
        if status == "refused":
            status = ("not RoPE (ALiBi or T5)" if "not RoPE" in why else
                      "refused: the probe cannot run this model")
        dt = time.perf_counter() - t0
        counts[status] += 1
        if status.startswith("derived") and mt in FAMILIES:
            counts["agrees with the family table"] += 1
        rows.append({"model_type": mt, "status": status, "why": why, "seconds": round(dt, 2),
                     "in_table": mt in FAMILIES})
        print(f"{mt:32s} {dt:6.1f}s {status}: {why[:160]}", flush=True)
    print("\ntotals:", dict(counts))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"transformers": transformers.__version__, "counts": counts, "rows": rows}, fh, indent=1)
    return 1 if counts["MISMATCH"] else 0


if __name__ == "__main__":
    sys.exit(main())

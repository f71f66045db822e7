"""The command line reads well: quiet on a closed pipe, aligned lists, suggestions, plain numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pemath import cli, models, rope
from pemath.claims import all_claims, run_claim, summary_line


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "pemath.cli", *args], capture_output=True, text=True, **kw)


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "pemath.cli", "prove", "--json", "--no-checks", "sinusoidal"],
    [sys.executable, "proofs/t5.py"],
])
def test_a_closed_pipe_ends_quietly(command):
    """The reader goes away before the output comes (``| head -0``): no BrokenPipeError traceback, status 141
    (128 + SIGPIPE). The pipe is closed before the command writes, so every run meets the closed pipe (a
    reader that first took a line could close after all the output already fitted in the pipe's buffer)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=300)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert proc.returncode == 141


def test_list_is_aligned_and_counts_read_well():
    out = _run("prove", "--list")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert len(lines) == len(all_claims())
    kind = {c.id: c.kind for c in all_claims()}  # the registry's order may differ between processes
    starts = {line.index(kind[line.split()[0]], len(line.split()[0])) for line in lines}
    assert len(starts) == 1, "the kind column does not start at one place"
    one = run_claim(all_claims()[0], checks=False)
    assert summary_line([one]).startswith("1 claim: ")


def test_a_mistyped_claim_id_gets_the_closest_ones():
    out = _run("prove", "rope.relativ")
    assert out.returncode == 2 and "did you mean 'rope.relative'" in out.stderr
    out = _run("prove", "zzzzzz")
    assert out.returncode == 2 and "pemath prove --list" in out.stderr and "known ids" not in out.stderr


def test_inv_freq_from_a_registered_model_and_a_config_file(tmp_path):
    out = _run("inv-freq", "--config", "llama-3.1-8b")
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if not line.startswith("#")]
    want = rope.inv_freq(spec=models.get("llama-3.1-8b").spec())
    assert [float(r[1]) for r in rows] == want.tolist()  # plain float64 numbers, exactly
    assert "np.float64" not in out.stdout and "Llama3(factor=8.0" in out.stdout
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(models.get("qwen2.5-7b-instruct").config)))
    out = _run("inv-freq", "--config", str(path))
    assert out.returncode == 0 and float(out.stdout.splitlines()[3].split()[1]) == \
        rope.inv_freq(spec=rope.from_hf_config(str(path)))[1]
    out = _run("inv-freq", "--config", "llama-3.1-8", )
    assert out.returncode == 2 and "did you mean 'llama-3.1-8b'" in out.stderr
    out = _run("inv-freq", "--config", "llama-3.1-8b", "--head-dim", "64")
    assert out.returncode == 2 and "not both" in out.stderr
    out = _run("inv-freq")
    assert out.returncode == 2 and "--config CONFIG" in out.stderr


def test_main_returns_status_codes_in_process(capsys):
    assert cli.main(["inv-freq", "--head-dim", "4", "--base", "100"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["1", "0.1"]


def test_prove_groups_rows_by_family_and_prints_the_verdict_legend():
    out = _run("prove", "--no-checks", "t5", "alibi", env={**__import__("os").environ, "COLUMNS": "70"})
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines.index("[t5]") < lines.index("[alibi]")
    legend = out.stdout[out.stdout.index("verdicts:"):]
    assert "refuted = a published claim pemath found false (not a failure of pemath)" in " ".join(legend.split())
    assert max(len(line) for line in legend.splitlines()) <= 70


def test_narrate_labels_each_combined_derivation_and_wraps_at_the_width():
    from pemath.claims import get, narrate

    o = run_claim(get("rope.relative"), checks=False)
    text = narrate(o, width=60)
    heads = [line for line in text.splitlines() if line.startswith("  -- ")]
    assert "  -- RoPE relative inner product, every even rotary dim 2h and head_dim 2h + e, half layout" in heads
    assert "  -- RoPE relative inner product, d = 8, half" in heads
    assert all(len(line) <= 60 for line in text.splitlines()[1:] if not line.startswith(("       ", "  -- ")))
    data = json.loads(__import__("pemath").claims.to_json([o]))
    assert {s["section"] for s in data[0]["steps"]} >= {"RoPE relative inner product, d = 2, interleaved"}
    with pytest.raises(ValueError, match="width must be an int >= 40"):
        narrate(o, width=10)


def test_narrate_prints_no_bare_true_or_zero_for_a_decided_step():
    """A bare True or 0 adds nothing to a step's text: --narrate and the docs print no formula for such a narration
    (Step.trivial); a decided step always stores and shows the formula it decided."""
    import sympy as sp

    from pemath.claims import get, narrate
    from pemath.symbolic import Step

    o = run_claim(get("sinusoidal.shift"), checks=False)
    lines = narrate(o, width=100).splitlines()
    bodies = [ln.strip() for ln in lines if ln.startswith("       ")]
    assert "True" not in bodies and "0" not in bodies
    assert not any("0" in b and set(b) <= set("⎡⎤⎢⎥⎣⎦[]0, ") for b in bodies), "a zero matrix was printed"
    # every decided step shows the formula its certificate decided (issue 22): none is a bare True or 0
    assert not [s.text for s in o.derivation.steps if s.status == "proved" and s.trivial]
    assert all(json.loads(__import__("pemath").claims.to_json([o], latex=True))[0]["steps"][i]["latex"] is not None
               for i, s in enumerate(o.derivation.steps) if s.status == "proved")
    # what is trivial and what is not
    x = sp.Symbol("x")
    for expr in (None, True, sp.true, 0, sp.Integer(0), sp.zeros(2, 2)):
        assert Step("t", expr, "info", role="remark").trivial
    for expr in (x, sp.Eq(x, 1), sp.Integer(1), sp.eye(2), sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1, sp.false):
        assert not Step("t", expr, "info", role="remark").trivial

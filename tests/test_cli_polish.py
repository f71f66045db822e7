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
    """The reader stops after one line (``| head -1``): no BrokenPipeError traceback, status 141 (SIGPIPE)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=300)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert proc.returncode in (0, 141)


def test_list_is_aligned_and_counts_read_well():
    out = _run("prove", "--list")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert len(lines) == len(all_claims())
    starts = {line.index(c.kind, len(c.id)) for line, c in zip(lines, all_claims())}
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

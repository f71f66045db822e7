"""The README's code runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_blocks_run(code):
    exec(compile(code, str(README), "exec"), {})


def test_readme_shows_the_two_commands():
    text = README.read_text()
    assert "pemath prove" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest" in text

"""An input file corral reads whole (fan-out items, triage issues and labels) is read up to a cap,
never further: an endless pipe or a device (`/dev/zero`) is refused in one line instead of
growing corral until the machine runs out of memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator._input_files import read_input_file
from corral.tools import InvalidInput

pytestmark = pytest.mark.hostile

LIMIT = 1024


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_an_endless_input_file_is_refused_at_the_cap(source: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        read_input_file(Path(source), "items", InvalidInput, limit=LIMIT)
    assert str(refused.value) == (
        f"items file {source} is larger than 1,024 bytes; split it into smaller files"
    )


def test_an_input_file_at_the_cap_is_read_whole(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(b"\xef\xbb\xbf" + b"x" * (LIMIT - 3))
    assert read_input_file(items, "items", InvalidInput, limit=LIMIT) == "x" * (LIMIT - 3)

"""Whether a second core is idle right now, read from Linux's count of runnable threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.services._spare_core import runnable_threads, spare_core, usable_cores


def _loadavg(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "loadavg"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_a_core_is_spare_when_only_the_reader_is_runnable(tmp_path: Path) -> None:
    idle = _loadavg(tmp_path, "0.52 0.71 0.90 1/312 40213\n")
    assert spare_core(idle, cores=2)


def test_no_core_is_spare_when_as_many_threads_run_as_there_are_cores(tmp_path: Path) -> None:
    busy = _loadavg(tmp_path, "1.98 1.70 1.20 2/312 40213\n")
    assert not spare_core(busy, cores=2)
    assert spare_core(busy, cores=4)


def test_one_core_is_never_shared(tmp_path: Path) -> None:
    assert not spare_core(_loadavg(tmp_path, "0.00 0.00 0.00 1/90 7\n"), cores=1)


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"0.00 0.00 0.00\n",
        b"0.00 0.00 0.00 1 7\n",
        b"0.00 0.00 0.00 x/90 7\n",
        b"0.00 0.00 0.00 -1/90 7\n",
        b"0.00 0.00 0.00 /90 7\n",
        b"0.00 0.00 0.00 99999999999999999999/90 7\n",
        b"\xff\xfe\x00 garbage",
        b"0" * 1_000_000,
    ],
)
def test_a_run_queue_that_cannot_be_read_spares_nothing(tmp_path: Path, text: bytes) -> None:
    path = _loadavg(tmp_path, text)
    assert runnable_threads(path) is None
    assert not spare_core(path, cores=2)


def test_a_missing_run_queue_spares_nothing(tmp_path: Path) -> None:
    assert not spare_core(tmp_path / "no-such-file", cores=8)
    assert not spare_core(tmp_path, cores=8)  # a folder, not a file


def test_the_usable_cores_are_at_least_one() -> None:
    assert usable_cores() >= 1

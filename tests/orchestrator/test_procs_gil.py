"""The GIL switch interval of a fan-out's parent: short while it runs a fan-out in processes (so
the journal writer gets the GIL back at once between statements), as it was once none runs."""

from __future__ import annotations

import sys

from corral.orchestrator._procs._gil import SWITCH_INTERVAL, short_switch_interval


def test_the_parent_switches_quickly_only_while_a_fanout_in_processes_runs() -> None:
    before = sys.getswitchinterval()
    with short_switch_interval():
        with short_switch_interval():  # a second fan-out of the same service
            assert sys.getswitchinterval() <= SWITCH_INTERVAL
        assert sys.getswitchinterval() <= SWITCH_INTERVAL
    assert sys.getswitchinterval() == before

"""Where an agent's next events go: its run, its last seq and the run's last run_seq, read in
one statement as each append begins (`_sql_ops`).

Read from the journal every time, never remembered between transactions: a remembered tail
saved one statement per append, but once it disagreed with the file (a Temporal run under
load met it) an append was numbered after a gap. The statement is cheap; a wrong seq is not.
"""

from __future__ import annotations

from typing import NamedTuple


class Tail(NamedTuple):
    """Where an agent's next events go."""

    run_id: str
    last: int
    """The agent's last seq."""
    last_in_run: int
    """The run's last run_seq."""

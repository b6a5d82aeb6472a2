"""The pipelines people run on top of the fan-out: code review, batch refactoring, issue triage.

Each lives in its own subpackage with its own public surface; this package only groups them.
"""

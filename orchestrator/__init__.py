"""Many agents and the ways to run them: the CLI, the scripted model server and the demo.

Builds on `agents` (one agent) and `tools`; nothing below imports it.
"""

"""Which commands may run without asking, and which failures look like the sandbox's doing.

`is_known_safe_command` is deliberately small and conservative (Codex's idea, a shorter list):
read-only programs with no option that writes or runs something else, in simple scripts of
`&&`, `||`, `;` and `|`; any redirection, substitution or subshell makes a script unknown.
`looks_like_sandbox_denial` is Codex's keyword heuristic for offering an unsandboxed retry.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from ._sandbox import CommandResult

_PLAIN_SAFE = frozenset({"ls", "cat", "head", "tail", "wc", "grep", "pwd", "echo"})
_FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"}
)
_RG_UNSAFE = ("--pre", "--hostname-bin", "--search-zip")
_GIT_SAFE = frozenset({"status", "log", "diff", "show"})
_GIT_UNSAFE = ("--output", "--ext-diff", "--textconv", "--exec")
_SHELLS = frozenset({"bash", "sh", "dash", "zsh"})
_SCRIPT_SEPARATORS = frozenset({"&&", "||", ";", "|"})
_SCRIPT_UNSAFE = ("`", "$(", "${", "<(", ">(", "\n", "\r")
_OPERATOR_CHARS = frozenset("();<>|&")

_DENIAL_KEYWORDS = (
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "seccomp",
    "sandbox",
    "landlock",
    "failed to write file",
)
_NOT_A_DENIAL_EXIT_CODES = frozenset({0, 2, 126, 127})


def is_known_safe_command(command: Sequence[str] | str) -> bool:
    """Whether `command` (argv, or a script for `bash -c`) only reads, by a small allow-list."""
    if isinstance(command, str):
        return _is_safe_script(command)
    argv = list(command)
    if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc"):
        return _is_safe_script(argv[2])
    return _is_safe_argv(argv)


def looks_like_sandbox_denial(result: CommandResult) -> bool:
    """Whether a failed run looks like the sandbox refused something (Codex's keywords)."""
    if result.timed_out or result.exit_code in _NOT_A_DENIAL_EXIT_CODES:
        return False
    text = result.output.lower()
    return any(keyword in text for keyword in _DENIAL_KEYWORDS)


def _is_safe_script(script: str) -> bool:
    segments = _split_script(script)
    return segments is not None and all(_is_safe_argv(segment) for segment in segments)


def _split_script(script: str) -> list[list[str]] | None:
    """Simple commands of a script joined by separators; None when it does anything fancier."""
    if any(fragment in script for fragment in _SCRIPT_UNSAFE):
        return None
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SCRIPT_SEPARATORS:
            segments.append([])
        elif token and set(token) <= _OPERATOR_CHARS:
            return None  # redirection, background job or subshell
        else:
            segments[-1].append(token)
    return segments if all(segments) else None


def _is_safe_argv(argv: Sequence[str]) -> bool:
    if not argv or os.path.basename(argv[0]) != argv[0]:
        return False
    program, args = argv[0], argv[1:]
    if program in _PLAIN_SAFE:
        return True
    if program == "find":
        return not any(arg in _FIND_UNSAFE for arg in args)
    if program == "rg":
        return not _has_prefix(args, _RG_UNSAFE) and not any(_is_short_z(arg) for arg in args)
    if program == "git":
        return bool(args) and args[0] in _GIT_SAFE and not _has_prefix(args[1:], _GIT_UNSAFE)
    return False


def _is_short_z(arg: str) -> bool:
    """`-z` (search inside archives by running decompressors), alone or in a flag cluster."""
    return arg.startswith("-") and not arg.startswith("--") and "z" in arg


def _has_prefix(args: Sequence[str], prefixes: tuple[str, ...]) -> bool:
    return any(arg.startswith(prefixes) for arg in args)

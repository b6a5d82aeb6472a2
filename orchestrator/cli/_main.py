"""Entry point of the `corral` command: builds the parser and is the CLI's error boundary.

Each subcommand lives in its own module with an `add_parser(subparsers)` function that sets
`handler` (sync or async, taking the parsed namespace, returning an exit code). Errors that are
the user's mistake print one clear line and exit non-zero; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import inspect
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .._version import corral_version
from ._help import SUMMARIES, add_examples, add_summaries

if TYPE_CHECKING:
    from corral.tools import CorralError

TERMINATED = 143

# Command name -> the module that defines it. Only the module of the command being run is
# imported: the others pull in heavy libraries (the MCP SDK, embeddings, HTTP servers) that
# would slow every invocation down.
_MODULES = {
    "demo": "_demo",
    "exec": "_exec",
    "fanout": "_fanout",
    "resume": "_resume",
    "review": "_review",
    "refactor": "_refactor",
    "triage": "_triage",
    "status": "_status",
    "trace": "_trace",
    "runs": "_status",
    "export": "_status",
    "doctor": "_doctor",
    "journal": "_journal",
    "model-server": "_model_server",
    "apply-patch": "_apply_patch",
    "mcp": "_mcp",
    "mcp-server": "_mcp_server",
    "tools": "_tools",
    "skills": "_skills",
    "memory": "_memory",
    "serve": "_serve",
    "worker": "_worker",
    "trust": "_trust",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv`, only the module of the command it names is loaded, and none
    when it names no command (`corral --help` lists the commands by their summaries)."""
    parser = argparse.ArgumentParser(
        prog="corral",
        description="Asynchronous multi-agent orchestration against any OpenAI-compatible model.",
    )
    parser.add_argument("--version", action="version", version=f"corral {corral_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = _modules_for(argv)
    if argv is not None and len(modules) > 1:
        known = [name for name in _MODULES if name in SUMMARIES]
        add_summaries(sub, known)
        # A command registered without a summary is listed the slow way, by its module.
        modules = list(dict.fromkeys(m for n, m in _MODULES.items() if n not in SUMMARIES))
    for name in modules:
        importlib.import_module(f"{__package__}.{name}").add_parser(sub)
    add_examples(parser, sub)
    return parser


def _modules_for(argv: Sequence[str] | None) -> list[str]:
    words = [a for a in (argv or ()) if not a.startswith("-")]
    if words and words[0] in _MODULES:
        return [_MODULES[words[0]]]
    if not words and "--version" in (argv or ()):
        return []  # the version needs no command
    return list(dict.fromkeys(_MODULES.values()))


def console() -> NoReturn:
    """The `corral` program (`python -m corral` and the installed script): `main`, then exit.

    A command that talked to Temporal leaves the Temporal client's native (Rust) threads
    running. If one of them touches Python while the interpreter tears itself down, CPython
    aborts ("Fatal Python error: PyGILState_Release ... finalizing", exit -6) after the command
    has finished and printed its answer. Such a process therefore runs its exit handlers (the
    trace exporter's flush among them), flushes its output, and leaves without the teardown.
    """
    code = main()
    if _NATIVE_THREADS_MODULE in sys.modules:
        atexit._run_exitfuncs()
        _flush_stdout()
        with contextlib.suppress(OSError):
            sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


# The Temporal client's native part: imported with `temporalio.client`, which only the commands
# that use Temporal import (lazily); a local command never loads it.
_NATIVE_THREADS_MODULE = "temporalio.bridge.temporal_sdk_bridge"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. Output cut short by the reader (`| head`) is exit 0."""
    _spell_out_unencodable()
    try:
        code = _main(argv)
    except SystemExit:  # --help and usage errors: argparse itself ignores a closed pipe
        _flush_stdout()
        raise
    except BaseException as exc:
        if not _only_broken_pipes(exc):
            raise
        _silence_stdout()
        return 0
    _flush_stdout()
    return code


def _spell_out_unencodable() -> None:
    """Text from a journal or a model may hold a lone surrogate (`"\\ud800"` is valid JSON),
    which UTF-8 cannot carry: printed, it raised in the middle of the output, and under the C
    locale (`surrogateescape`) `\\udc9b` became the raw byte 0x9b, a terminal's CSI. Written as
    `\\ud800` instead, which in `--json` output is the same string to a JSON reader."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _main(argv: Sequence[str] | None) -> int:
    # Set before any library can: wordllama calls basicConfig(level=INFO) when imported.
    logging.basicConfig(level=logging.WARNING, format="corral: %(levelname)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_SpelledFormatter(handler.formatter))
    arguments = sys.argv[1:] if argv is None else list(argv)
    unknown = _unknown_command(arguments)
    if unknown is not None:
        print(f"corral: error: {unknown}", file=sys.stderr)
        return 2
    parser = build_parser(arguments)
    args, extras = parser.parse_known_args(arguments)
    _take_late_positional(parser, args, extras)
    from corral.tools import CorralError  # imported here: it loads every tool

    try:
        _check_home(os.environ.get("CORRAL_HOME"))
        return _run(args)
    except (CorralError, OSError, BaseExceptionGroup) as exc:
        errors = _corral_errors(exc)
        if errors is None:
            raise
        for error in errors:
            print(f"corral {args.command}: error: {_for_terminal(str(error))}", file=sys.stderr)
        return max(e.exit_code for e in errors)
    except KeyboardInterrupt:
        print(f"corral {args.command}: interrupted", file=sys.stderr)
        return 130


def _take_late_positional(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]
) -> None:
    """An optional positional written after the flags (`corral resume RUN --cd DIR "more"`, as
    the docs order them) is one argparse cannot place: a command names it with
    `set_defaults(late_positional=NAME)` and it is taken here; anything else left is an error."""
    name = getattr(args, "late_positional", None)
    if (
        name is not None
        and len(extras) == 1
        and not extras[0].startswith("-")
        and getattr(args, name) is None
    ):
        setattr(args, name, extras[0])
        return
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")


def _check_home(raw: str | None) -> None:
    """CORRAL_HOME naming a file failed deep in config loading with "config.toml: cannot be
    read: Not a directory", which does not say which setting is wrong."""
    from pathlib import Path

    from corral.tools import InvalidInput

    if raw and Path(raw).expanduser().exists() and not Path(raw).expanduser().is_dir():
        raise InvalidInput(
            f"CORRAL_HOME={raw} is a file, not a folder; point it at a folder (it is made if "
            "missing), or unset it for ~/.corral"
        )


def _unknown_command(arguments: Sequence[str]) -> str | None:
    """A misspelt command (`corral exce`), named with the nearest real one; argparse listed
    all twenty-odd commands and left the reader to find it."""
    import difflib

    if not arguments or arguments[0].startswith("-") or arguments[0] in _MODULES:
        return None
    word = arguments[0]
    near = difflib.get_close_matches(word, list(_MODULES), n=1, cutoff=0.6)
    hint = f"did you mean `corral {near[0]}`? " if near else ""
    return f"no command {word!r}; {hint}`corral --help` lists the commands"


class _SpelledFormatter(logging.Formatter):
    """Warnings name the same paths and ids errors do: spelled out the same way."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self._inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return _for_terminal(self._inner.format(record))


def _for_terminal(text: str) -> str:
    """An error names paths, ids and text from a repository or a journal someone else wrote:
    what a terminal would act on (escape sequences, bidi overrides) is spelled out, as in
    approval questions; line breaks stay."""
    from ._approval import shown_lines

    return shown_lines(text)


def _only_broken_pipes(exc: BaseException) -> bool:
    """Whether `exc` is the reader closing our output (task groups wrap it), and only that."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_broken_pipes(inner) for inner in exc.exceptions)
    return isinstance(exc, BrokenPipeError)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    # The interpreter flushes stdout at exit; into a closed pipe that prints a second error.
    # Point the descriptor at /dev/null so that flush succeeds quietly.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is not a real file (a test's capture): nothing will flush into a pipe


def _corral_errors(exc: BaseException) -> list[CorralError] | None:
    """The corral errors inside `exc` (task groups wrap them), or None if anything else is."""
    from corral.tools import CorralError

    if isinstance(exc, CorralError):
        return [exc]
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        return [_file_error(exc)]
    if isinstance(exc, BaseExceptionGroup):
        found: list[CorralError] = []
        for inner in exc.exceptions:
            errors = _corral_errors(inner)
            if errors is None:
                return None
            found.extend(errors)
        return found
    return None


def _file_error(exc: OSError) -> CorralError:
    """A file or folder the system refused, which no command turned into its own words (a
    path given on the command line, a folder that went read-only mid-run): one line naming it,
    exit 1, instead of a traceback."""
    from corral.tools import OperationFailed

    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    where = f" ({' -> '.join(paths)})" if paths else ""
    return OperationFailed(
        f"{exc.strerror or exc}{where}; check that the path exists and that you may use it"
    )


def _run(args: argparse.Namespace) -> int:
    import anyio

    handler: Any = args.handler
    result = (
        anyio.run(_until_terminated, handler, args)
        if inspect.iscoroutinefunction(handler)
        else handler(args)
    )
    return int(result or 0)


async def _until_terminated(handler: Any, args: argparse.Namespace) -> int:
    """Run `handler`; SIGTERM cancels it like Ctrl-C does, so cleanup and journaling happen."""
    import anyio

    outcome: list[int] = []
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                async for _ in signals:
                    outcome.append(TERMINATED)
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch)
        outcome.append(int(await handler(args) or 0))
        tg.cancel_scope.cancel()
    if outcome and outcome[0] == TERMINATED:
        print(f"corral {args.command}: terminated; the journal is kept", file=sys.stderr)
    return outcome[0] if outcome else TERMINATED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

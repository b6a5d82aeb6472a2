"""Hostile commands against the hardened sandbox: protected folders, corral's home, setuid bits,
host unix sockets, a limited reader, a fork bomb. Each case ran successfully before the fix.

The workspace and its neighbours live under /var/tmp (see `sandbox_support`); every case compares
the disk before and after, so a placeholder left behind would fail it too.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import pytest

from corral.tools import PermissionDenied, PermissionProfile, SandboxMode
from corral.tools._sandbox import BubblewrapSandbox, CommandResult

from .sandbox_support import PYTHON, Layout, make_layout, snapshot

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

SECRET = "corral-token-3f9a"
WW, RO = SandboxMode.WORKSPACE_WRITE, SandboxMode.READ_ONLY


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


def git(*args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True)


async def run(
    script: str, cwd: Path, profile: PermissionProfile, sandbox: BubblewrapSandbox | None = None
) -> CommandResult:
    return await (sandbox or BubblewrapSandbox()).run(
        ["bash", "-c", script], cwd=cwd, profile=profile, timeout=20, env={}, output_budget=20_000
    )


# -- protected folders inside the writable root ---------------------------------------------


def no_git(ws: Path) -> None:
    subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)


def dot_folders(ws: Path) -> None:
    for path in (".corral/config.toml", ".codex/config.toml", ".agents/skills/x/SKILL.md"):
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text("model = 'mine'\n")


def nested(ws: Path) -> None:
    git("init", "-q", str(ws / "sub"))
    git("init", "-q", str(ws / "a" / "b" / "c"))
    (ws / "pkg" / ".corral").mkdir(parents=True)
    (ws / "pkg" / ".corral" / "config.toml").write_text("model = 'mine'\n")


def separate_git_dir(ws: Path) -> None:
    git("init", "-q", f"--separate-git-dir={ws / 'gitstore'}", str(ws / "proj"))


def worktree(ws: Path) -> None:
    git("init", "-q", str(ws / "repo"))
    git("-C", str(ws / "repo"), "commit", "-q", "--allow-empty", "-m", "first")
    git("-C", str(ws / "repo"), "worktree", "add", "-q", str(ws / "wt"))


def plain(ws: Path) -> None:
    pass


PROTECTED: list[tuple[str, Callable[[Path], None], str]] = [
    (
        "new-corral-config",
        plain,
        "mkdir -p .corral && echo 'sandbox_mode = \"x\"' > .corral/c.toml",
    ),
    ("new-codex-config", plain, "mkdir -p .codex && echo x > .codex/config.toml"),
    ("new-agents-skill", plain, "mkdir -p .agents/skills/x && echo x > .agents/skills/x/SKILL.md"),
    ("new-corral-symlink", plain, "ln -s {outside} .corral"),
    ("new-corral-python", plain, "{python} -c \"import os; os.makedirs('.corral/x')\""),
    (
        "new-corral-rename-into",
        plain,
        "mkdir /tmp/m && echo x > /tmp/m/c.toml && mv -T /tmp/m .corral",
    ),
    ("git-init-hook", no_git, "git init -q . ; echo evil > .git/hooks/pre-commit"),
    ("new-git-folder", no_git, "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"),
    ("existing-corral-append", dot_folders, "echo evil >> .corral/config.toml"),
    ("existing-codex-overwrite", dot_folders, "echo evil > .codex/config.toml"),
    ("existing-skill-rewrite", dot_folders, "echo evil > .agents/skills/x/SKILL.md"),
    ("existing-corral-delete", dot_folders, "rm -rf .corral"),
    ("existing-codex-rename", dot_folders, "mv .codex moved"),
    ("existing-agents-add", dot_folders, "mkdir .agents/skills/y"),
    ("nested-hook", nested, "echo evil > sub/.git/hooks/x"),
    ("nested-fsmonitor", nested, "git -C sub config core.fsmonitor 'touch /tmp/x'"),
    ("deep-nested-config", nested, "echo evil >> a/b/c/.git/config"),
    ("nested-git-delete", nested, "rm -rf sub/.git"),
    ("nested-corral-config", nested, "echo evil > pkg/.corral/config.toml"),
    ("separate-gitdir-hook", separate_git_dir, "echo evil > gitstore/hooks/pre-commit"),
    ("separate-gitdir-pointer", separate_git_dir, "echo 'gitdir: /x' > proj/.git"),
    ("worktree-gitdir", worktree, "echo evil > repo/.git/worktrees/wt/HEAD"),
    ("worktree-pointer", worktree, "echo 'gitdir: /x' > wt/.git"),
]


@pytest.mark.parametrize(
    ("setup", "script"), [(s, c) for _, s, c in PROTECTED], ids=[i for i, _, _ in PROTECTED]
)
async def test_protected_folders_cannot_be_created_or_changed(
    setup: Callable[[Path], None], script: str, layout: Layout
) -> None:
    setup(layout.workspace)
    before = snapshot(layout.base)
    command = script.format(outside=layout.outside, python=PYTHON)
    result = await run(command, layout.workspace, layout.profile())
    assert snapshot(layout.base) == before, result.output


# -- corral's home ------------------------------------------------------------------------


def make_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "api-token").write_text(SECRET + "\n")
    (home / "journal.sqlite").write_text(f"task: {SECRET}\n")
    (home / "sub").mkdir()
    return home


@dataclass(frozen=True)
class HomeCase:
    id: str
    home: str  # relative to the user folder; the working folder is the user folder unless `cwd`
    script: str
    mode: SandboxMode = WW
    cwd: str = "."
    create: bool = True


HOME_CASES = [
    HomeCase("read-token-from-above", ".corral", "cat .corral/api-token"),
    HomeCase("delete-journal-from-above", ".corral", "rm -f .corral/journal.sqlite"),
    HomeCase("rewrite-token-from-above", ".corral", "echo stolen > .corral/api-token"),
    HomeCase("grep-tasks-from-above", ".corral", f"grep -r {SECRET} ."),
    HomeCase("read-named-home", "state", "cat state/api-token"),
    HomeCase("delete-named-home", "state", "rm -rf state"),
    HomeCase("rename-named-home", "state", "mv state gone"),
    HomeCase("read-home-read-only", "state", "cat state/api-token", mode=RO),
    HomeCase("read-home-by-path", "elsewhere/home", "cat {home}/journal.sqlite", cwd="ws"),
    HomeCase(
        "python-reads-journal",
        "state",
        "{python} -c \"print(open('state/journal.sqlite').read())\"",
    ),
    HomeCase("find-the-token", "state", "find . -name api-token -exec cat {{}} +"),
    HomeCase("read-token-from-below", ".corral", "cat ../api-token", cwd=".corral/sub"),
    HomeCase("delete-journal-from-home", ".corral", "rm -f journal.sqlite", cwd=".corral"),
    HomeCase(
        "create-missing-home", "state", "mkdir -p state && echo x > state/config.toml", create=False
    ),
    HomeCase(
        "create-missing-nested-home",
        "deep/state",
        "mkdir -p deep/state && echo x > deep/state/c",
        create=False,
    ),
]


@pytest.mark.parametrize("case", HOME_CASES, ids=[c.id for c in HOME_CASES])
async def test_corral_home_can_be_neither_read_nor_changed(case: HomeCase, layout: Layout) -> None:
    user = layout.base / "user"
    (user / "ws").mkdir(parents=True)
    home = user / case.home
    if case.create:
        make_home(home)
    profile = PermissionProfile(
        sandbox=case.mode, writable_roots=(user,) if case.mode is WW else (), hidden_roots=(home,)
    )
    before = snapshot(layout.base)
    script = case.script.format(home=home, python=PYTHON)
    try:
        result = await run(script, user / case.cwd, profile)
    except PermissionDenied as exc:
        assert "corral's home" in str(exc)
    else:
        assert SECRET not in result.output
    assert snapshot(layout.base) == before


# -- setuid and setgid --------------------------------------------------------------------


def setid_files(root: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            mode = os.lstat(Path(folder) / name).st_mode
            if mode & (stat.S_ISUID | stat.S_ISGID):
                found.append(name)
    return found


SETID = {
    "chmod-setuid-copy": "cp /bin/true x; chmod 4755 x",
    "chmod-setgid-copy": "cp /bin/true x; chmod 2755 x",
    "chmod-symbolic": "cp /bin/true x; chmod u+s,g+s x",
    "install-mode": "install -m 4755 /bin/true x",
    "open-with-mode": (
        "{python} -c \"import os; os.umask(0); os.open('x', os.O_CREAT|os.O_WRONLY, 0o6755)\""
    ),
    "mknod-regular": "{python} -c \"import os, stat; os.mknod('x', stat.S_IFREG | 0o4755)\"",
    "fchmod": (
        "{python} -c \"import os; os.fchmod(os.open('x', os.O_CREAT|os.O_WRONLY), 0o4755)\""
    ),
    "existing-file": "chmod u+s src/main.py",
    "setgid-folder": "mkdir d && chmod g+s d",
    "copy-preserving": "cp -p {outside}/suid x",
    "tar-preserving": "tar -xpf {outside}/suid.tar",
}


@pytest.fixture
def setid_sources(layout: Layout) -> Layout:
    """A setuid copy of `true` beside the workspace, and a tar archive holding one."""
    suid = layout.outside / "suid"
    suid.write_bytes(Path("/bin/true").read_bytes())
    suid.chmod(0o4755)
    with tarfile.open(layout.outside / "suid.tar", "w") as archive:
        archive.add(suid, arcname="x")
    return layout


@pytest.mark.parametrize("script", list(SETID.values()), ids=list(SETID))
async def test_nothing_written_keeps_a_setuid_or_setgid_bit(
    script: str, setid_sources: Layout
) -> None:
    layout = setid_sources
    command = script.format(outside=layout.outside, python=PYTHON)
    await run(command, layout.workspace, layout.profile())
    assert setid_files(layout.workspace) == []


# -- host unix sockets ----------------------------------------------------------------------


SOCKETS = {
    "outside-folder": ("outside/host.sock", "{base}/outside/host.sock", WW),
    "inside-workspace": ("ws/host.sock", "host.sock", WW),
    "through-a-symlink": ("outside/host.sock", "link.sock", WW),
    "read-only-profile": ("outside/host.sock", "{base}/outside/host.sock", RO),
}


@pytest.mark.parametrize(("where", "target", "mode"), list(SOCKETS.values()), ids=list(SOCKETS))
async def test_host_unix_sockets_are_unreachable_without_network(
    where: str, target: str, mode: SandboxMode, layout: Layout
) -> None:
    path = layout.base / where
    (layout.workspace / "link.sock").symlink_to(layout.base / "outside/host.sock")
    address = target.format(base=layout.base)
    code = f"import socket; socket.socket(socket.AF_UNIX).connect({address!r}); print('connected')"
    connected, result = await connect_from_sandbox(path, [PYTHON, "-c", code], layout, mode)
    assert not connected
    assert "connected" not in result.output
    assert "ConnectionRefusedError" in result.output


async def connect_from_sandbox(
    path: Path, argv: list[str], layout: Layout, mode: SandboxMode, *, network: bool = False
) -> tuple[bool, CommandResult]:
    """Listen on `path` on the host, run `argv` in the sandbox: whether anything connected."""
    connected = anyio.Event()

    async def on_connect(stream: anyio.abc.SocketStream) -> None:
        connected.set()
        await stream.aclose()

    profile = layout.profile(mode).model_copy(update={"network": network})
    listener = await anyio.create_unix_listener(path)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, on_connect)
        result = await BubblewrapSandbox().run(
            argv, cwd=layout.workspace, profile=profile, timeout=20, env={}, output_budget=10_000
        )
        tg.cancel_scope.cancel()
    return connected.is_set(), result


# -- a limited reader (a refactor worker) -----------------------------------------------------


READER = {
    "cat-sibling": "cat {outside}/keep.txt",
    "cat-relative": "cat ../outside/keep.txt",
    "list-parent": "ls {base}",
    "python-open": "{python} -c \"print(open('{outside}/keep.txt').read())\"",
    "copy-into-workspace": "cp {outside}/keep.txt stolen.txt; cat stolen.txt",
}


@pytest.mark.parametrize("script", list(READER.values()), ids=list(READER))
async def test_limited_reader_cannot_read_beside_its_roots_in_shell(
    script: str, layout: Layout
) -> None:
    profile = layout.profile().model_copy(update={"readable_roots": (layout.workspace,)})
    command = script.format(outside=layout.outside, base=layout.base, python=PYTHON)
    result = await run(command, layout.workspace, profile)
    assert "outside\n" not in result.output
    assert "outside" not in result.output.split()


# -- a fork bomb ------------------------------------------------------------------------------

BOMB = """
import os
r, w = os.pipe()
started, error = 0, ""
for _ in range(150):
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc.strerror
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # wait for the parent to exit: nothing spins
        os._exit(0)
    started += 1
print(started, error)
"""


async def test_a_fork_bomb_stops_at_the_process_limit(layout: Layout) -> None:
    sandbox = BubblewrapSandbox(max_processes=24)
    result = await sandbox.run(
        [PYTHON, "-c", BOMB],
        cwd=layout.workspace,
        profile=layout.profile(),
        timeout=20,
        env={},
        output_budget=10_000,
    )
    started, _, error = result.output.strip().partition(" ")
    assert int(started) < 24
    assert error == "Resource temporarily unavailable"

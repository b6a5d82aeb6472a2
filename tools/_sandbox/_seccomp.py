"""A seccomp filter that refuses setuid and setgid mode bits: nothing written keeps them.

Run as root, a sandboxed command owns what it writes as root, and a user namespace does not
change that (bwrap maps the inside uid back to the caller's). So every system call that sets a
file's mode (`chmod` family, `open`/`creat`/`mknod` with a creation mode) fails with EPERM when
the mode has S_ISUID or S_ISGID; `openat2` (whose mode sits behind a pointer) answers ENOSYS, so
libraries fall back to `openat`, and `io_uring` (which can open files out of sight) is refused.
Calls of a foreign ABI (32-bit or x32 on x86-64) kill the process rather than slip past.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass

_SETID_BITS = 0o6000
_EPERM, _ENOSYS = 1, 38
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
# BPF opcodes: load word at absolute offset, jump if equal / if >= / if bits set, return.
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_NR_OFFSET, _ARCH_OFFSET, _ARGS_OFFSET = 0, 4, 16
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    audit_arch: int
    # system call number -> index of its mode argument
    mode_args: dict[int, int]
    refused: tuple[int, ...]  # openat2, io_uring_setup
    x32: bool = False


_ABIS = {
    "x86_64": _Abi(
        audit_arch=0xC000003E,
        # open, creat, chmod, fchmod, mknod, openat, mknodat, fchmodat, fchmodat2
        mode_args={2: 2, 85: 1, 90: 1, 91: 1, 133: 1, 257: 3, 259: 2, 268: 2, 452: 2},
        refused=(437, 425),
        x32=True,
    ),
    "aarch64": _Abi(
        audit_arch=0xC00000B7,
        # mknodat, fchmod, fchmodat, openat, fchmodat2
        mode_args={33: 2, 52: 1, 53: 2, 56: 3, 452: 2},
        refused=(437, 425),
    ),
}


def seccomp_supported(machine: str | None = None) -> bool:
    return (machine or platform.machine()) in _ABIS


def setid_filter(machine: str | None = None) -> bytes:
    """The compiled BPF program for this machine's ABI (see the module docstring)."""
    abi = _ABIS[machine or platform.machine()]
    program = _Program()
    program.load(_ARCH_OFFSET)
    program.jump_unless_equal(abi.audit_arch, "kill")
    program.load(_NR_OFFSET)
    if abi.x32:
        program.jump_if(_JGE, _X32_SYSCALL_BIT, "kill")
    for number in abi.refused:
        program.jump_if(_JEQ, number, "enosys")
    for number, index in sorted(abi.mode_args.items()):
        program.jump_if(_JEQ, number, f"arg{index}")
    program.ret(_RET_ALLOW)
    for index in sorted(set(abi.mode_args.values())):
        program.label(f"arg{index}")
        program.load(_ARGS_OFFSET + 8 * index)  # the low half: both ABIs are little-endian
        program.jump_if(_JSET, _SETID_BITS, "eperm")
        program.ret(_RET_ALLOW)
    program.label("eperm")
    program.ret(_RET_ERRNO | _EPERM)
    program.label("enosys")
    program.ret(_RET_ERRNO | _ENOSYS)
    program.label("kill")
    program.ret(_RET_KILL_PROCESS)
    return program.assemble()


class _Program:
    """Classic BPF with forward jumps to named labels, resolved at assembly."""

    def __init__(self) -> None:
        self._code: list[tuple[int, int, str | None, str | None]] = []
        self._labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self._code.append((_LD_ABS, offset, None, None))

    def jump_if(self, op: int, value: int, target: str) -> None:
        self._code.append((op, value, target, None))

    def jump_unless_equal(self, value: int, target: str) -> None:
        self._code.append((_JEQ, value, None, target))

    def ret(self, value: int) -> None:
        self._code.append((_RET, value, None, None))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def assemble(self) -> bytes:
        out = bytearray()
        for at, (op, k, if_true, if_false) in enumerate(self._code):
            jt = self._offset(at, if_true)
            jf = self._offset(at, if_false)
            out += struct.pack("=HBBI", op, jt, jf, k)
        return bytes(out)

    def _offset(self, at: int, label: str | None) -> int:
        if label is None:
            return 0
        offset = self._labels[label] - at - 1
        if not 0 <= offset <= 255:  # pragma: no cover - the program is short by construction
            raise ValueError(f"jump to {label} out of range")
        return offset

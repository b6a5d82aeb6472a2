"""Partitioning files into write sets: disjoint and complete, folders kept, sizes balanced."""

from __future__ import annotations

import posixpath

import pytest

from corral.orchestrator.pipelines.refactor import (
    BALANCE_TOLERANCE,
    SelectedFile,
    WriteSet,
    partition,
)


def files(**folders: list[int]) -> list[SelectedFile]:
    """Files named `<folder>/f<i>.py` with the given sizes; `top` means the repository's top."""
    made = []
    for folder, sizes in folders.items():
        for i, size in enumerate(sizes):
            name = f"f{i}.py" if folder == "top" else f"{folder}/f{i}.py"
            made.append(SelectedFile(name, size))
    return made


def owners(sets: list[WriteSet]) -> dict[str, set[int]]:
    """Which sets hold files of each folder."""
    found: dict[str, set[int]] = {}
    for write_set in sets:
        for path in write_set.files:
            found.setdefault(posixpath.dirname(path), set()).add(write_set.index)
    return found


def test_every_file_lands_in_exactly_one_set() -> None:
    selected = files(a=[10, 20, 30], b=[5, 5], c=[40], top=[7])
    sets = partition(selected, 3)
    listed = [path for s in sets for path in s.files]
    assert sorted(listed) == sorted(f.path for f in selected)
    assert len(listed) == len(set(listed)), "no file is in two sets"
    assert [s.index for s in sets] == [1, 2, 3]
    assert all(s.size == sum(f.size for f in selected if f.path in s.files) for s in sets)


def test_folders_of_similar_size_stay_whole() -> None:
    sets = partition(files(api=[100, 120], core=[90, 110], docs=[50, 60, 40], web=[200]), 2)
    assert all(len(holders) == 1 for holders in owners(sets).values())
    loads = sorted(s.size for s in sets)
    assert loads == [370, 400], "the most even split that keeps every folder whole"


def test_there_are_never_more_sets_than_folders() -> None:
    sets = partition(files(a=[1, 2, 3], b=[4, 5]), 8)
    assert [s.folders for s in sets] == [("a",), ("b",)]


def test_a_folder_much_larger_than_its_share_is_split_to_balance() -> None:
    selected = files(big=[100] * 9, small=[100])
    sets = partition(selected, 2)
    assert len(sets) == 2
    assert owners(sets)["big"] == {1, 2}, "the big folder is split across both sets"
    assert len(owners(sets)["small"]) == 1
    even = sum(f.size for f in selected) / 2
    assert max(s.size for s in sets) <= BALANCE_TOLERANCE * even


def test_a_single_huge_file_is_never_split_and_does_not_split_others_needlessly() -> None:
    sets = partition(files(a=[1000], b=[10, 10], c=[10]), 2)
    assert [s.files for s in sets] == [("a/f0.py",), ("b/f0.py", "b/f1.py", "c/f0.py")]


def test_the_same_files_give_the_same_sets_in_any_order() -> None:
    selected = files(a=[30, 1, 8], b=[12, 12], c=[25], d=[3, 3, 3])
    assert partition(selected, 3) == partition(list(reversed(selected)), 3)


def test_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        partition(files(a=[1]), 0)

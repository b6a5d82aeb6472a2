"""The label set a triage chooses from, read from a YAML file with each label's description.

Two shapes are accepted: a mapping `name: description`, or a list of `{name, description}`
objects (which is also what `gh label list --json name,description` prints, since JSON is YAML).
The file is read as a node tree rather than loaded, so a label defined twice is caught with the
lines of both definitions (a plain YAML load would keep the last one silently).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..._input_files import read_input_file
from ...runs import Label, LabelSet
from ._errors import LabelsFileError

MAX_LABEL_LENGTH = 50
"""GitHub's limit on a label name."""
_SHAPE = "write `name: description` lines, or a list of {name: ..., description: ...}"
_NULL_TAG = "tag:yaml.org,2002:null"


def read_labels(path: Path) -> LabelSet:
    """The label set in the YAML file at `path`."""
    text = read_input_file(path, "labels", LabelsFileError)
    return parse_labels(text, source=str(path))


def parse_labels(text: str, *, source: str = "labels") -> LabelSet:
    """The label set of a YAML text; `source` names it in errors."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise LabelsFileError(f"{source} is not valid YAML: {_yaml_problem(exc)}") from exc
    if isinstance(root, yaml.MappingNode):
        labels = [_from_pair(key, value, source) for key, value in root.value]
    elif isinstance(root, yaml.SequenceNode):
        labels = [_from_entry(entry, source) for entry in root.value]
    else:
        raise LabelsFileError(f"{source} holds no labels; {_SHAPE}")
    if not labels:
        raise LabelsFileError(f"{source} holds no labels; {_SHAPE}")
    _refuse_duplicates(labels, source)
    return LabelSet(tuple(labels))


def _from_pair(key: yaml.Node, value: yaml.Node, source: str) -> Label:
    name = _name(key, source)
    return Label(name, _description(value, name, source), _line(key))


def _from_entry(entry: yaml.Node, source: str) -> Label:
    if not isinstance(entry, yaml.MappingNode):
        raise LabelsFileError(f"{source} line {_line(entry)}: a list entry must be {_ENTRY}")
    fields = {_scalar_text(key): (key, value) for key, value in entry.value}
    if "name" not in fields:
        raise LabelsFileError(f"{source} line {_line(entry)}: this entry has no name; {_ENTRY}")
    name = _name(fields["name"][1], source)
    described = fields.get("description")
    description = _description(described[1], name, source) if described else ""
    return Label(name, description, _line(entry))


_ENTRY = "an object like {name: bug, description: Something is broken}"


def _name(node: yaml.Node, source: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag == _NULL_TAG or not node.value.strip():
        raise LabelsFileError(f"{source} line {_line(node)}: a label name must be a plain text")
    name = str(node.value).strip()
    if len(name) > MAX_LABEL_LENGTH or "\n" in name:
        raise LabelsFileError(
            f"{source} line {_line(node)}: label {name[:60]!r} is not a usable name; "
            f"a label name is one line of at most {MAX_LABEL_LENGTH} characters"
        )
    return name


def _description(node: yaml.Node, name: str, source: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise LabelsFileError(
            f"{source} line {_line(node)}: the description of label {name!r} must be text"
        )
    return "" if node.tag == _NULL_TAG else " ".join(str(node.value).split())


def _refuse_duplicates(labels: list[Label], source: str) -> None:
    # GitHub treats label names case-insensitively, so "Bug" and "bug" are one label.
    first: dict[str, Label] = {}
    for label in labels:
        earlier = first.setdefault(label.name.casefold(), label)
        if earlier is not label:
            shown = (
                repr(label.name)
                if label.name == earlier.name
                else "/".join(repr(n) for n in (earlier.name, label.name))
            )
            raise LabelsFileError(
                f"{source}: label {shown} is defined twice, at line {earlier.line} and line "
                f"{label.line}; keep one definition"
            )


def _scalar_text(node: yaml.Node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else ""


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return f"{problem} at line {mark.line + 1}" if mark is not None else str(problem)

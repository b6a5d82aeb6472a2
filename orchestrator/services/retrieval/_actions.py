"""What a request asks to do, and what a tool does: create, read, list, update, delete or run.

Near duplicates on one server differ mostly by their verb (`get_datasource`, `update_datasource`,
`list_datasources`), and people rarely use the tool's own verb: "point the datasource at a new
url" is an update, "stop notifying bob" a removal. A short lexicon of English verbs, written
from general usage and not from any query set, files each verb under its kind of action; the
second stage weighs whether a request's kinds meet the kinds of a tool's name (`_rerank`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from ._analyzer import split_identifier, stem_words

_ACTIONS = {
    "create": "create add new make post write insert start book subscribe invite register"
    " remember attach upload generate draft submit send",
    "read": "get show read view fetch retrieve see display describe detail details inspect look"
    " open check what who info",
    "list": "list search find query browse which enumerate",
    "update": "update edit change set rename move modify point mark acknowledge assign patch"
    " replace reorder switch toggle transition resolve approve close reopen",
    "delete": "delete remove drop clear wipe unsubscribe cancel stop descope erase purge unassign"
    " detach uninstall revoke discard",
}
# Words that are verbs in a request but nouns in a tool's name ("file a bug", `read_file`;
# "log 3h", `get_logs`; "note that", quantifiers like "all") are left out: in a name they would
# claim an action the tool does not do.
# A name that claims this many kinds or more gets no credit: no real tool does three things,
# and a hostile server could otherwise name a tool with every verb to match every request.
MAX_KINDS = 3

ACTION_KINDS: tuple[str, ...] = tuple(_ACTIONS)


@cache
def _classes_by_stem() -> Mapping[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for action, verbs in _ACTIONS.items():
        for stem in stem_words(verbs.split()):
            found.setdefault(stem, set()).add(action)
    return {stem: frozenset(actions) for stem, actions in found.items()}


def action_kinds(text: str) -> frozenset[str]:
    """The kinds of action `text`'s words name ("list_pull_requests": list)."""
    table = _classes_by_stem()
    kinds: set[str] = set()
    for stem in stem_words(split_identifier(text)):
        kinds |= table.get(stem, frozenset())
    return frozenset(kinds)

"""Query expansion: words that people use for the same thing in software and operations work.

Written from general usage (what a ticket, a PR or a chargeback is called elsewhere), not from
any query set; each line is one group of interchangeable terms. A query word or phrase in a
group adds the group's other terms to the query at a lower weight (`_hybrid`), so "ticket"
finds tools that say "issue" without outranking the ones that say "ticket".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from ._thesaurus_ops import OPS_GROUPS
from ._thesaurus_work import WORK_GROUPS

_GROUPS = """
ticket, issue, bug, task
pull request, pr, merge request, mr
repository, repo, codebase
wiki, confluence, knowledge base
chat, slack, messaging
channel, conversation, room
direct message, dm, private message
message, post
chargeback, dispute
refund, money back, reimburse
payment, charge, transaction
customer, client, buyer
subscription, plan, recurring
invoice, bill, receipt
discount, coupon, promo code
price, pricing, cost
iteration, sprint
backlog, unplanned
watcher, follower, subscriber
watch, follow, subscribe
label, tag
folder, directory
file, document
delete, remove, erase, drop
create, make, new
update, edit, modify, change
list, show, enumerate
get, fetch, retrieve
search, find, lookup, query
rename, move
copy, duplicate, clone
run, execute, trigger, start
stop, cancel, halt, kill
restart, reboot
deploy, release, ship, publish
install, setup
uninstall, remove
approve, accept
merge, land
close, resolve
assign, hand
comment, remark, reply
reaction, emoji, react
star, bookmark, favorite
fork, copy
commit, changeset, revision
history, log, changelog
diff, changes, difference
unstage, reset
logs, log, output
error, failure, exception, crash
ci, continuous integration, build, pipeline, workflow, actions, checks
job, step
alert, alarm, notification
silence, mute, snooze
on call, oncall, pager
incident, outage, downtime
dashboard, chart, panel, visualization
annotation, marker, event
metric, measurement, time series
latency, delay, response time
kubernetes, k8s, cluster
pod, container
node, machine, host, server
deployment, workload, replicas
scale, replicas, resize
vm, virtual machine
database, db, postgres, sql
table, schema
migration, schema change
bucket, storage
function, lambda, serverless
secret, credential, token, password, key
permission, access, restriction, role
user, person, member, account, people
team, group
organization, org, company
screenshot, capture, image, picture
browser, web page, website
navigate, go to, visit
click, press, tap
type, enter, input, fill
form, fields
dropdown, select, option
hover, mouse over
scroll, wheel
cookie, session
url, link, address
download, fetch, save
upload, attach
attachment, file
markdown, md
time zone, timezone, tz
current time, now, clock
knowledge graph, memory, remember, recall
entity, thing, fact
observation, fact
vulnerability, cve, advisory, security alert
dependency, package, library
dependabot, vulnerable dependencies
secret scanning, leaked secret
code scanning, codeql, static analysis
traffic, requests, visits
dns, resolver, domain lookup
bgp, routing, route
ddos, attack
bot, crawler, spider
ip, ip address
asn, autonomous system
"""

_SPLIT = re.compile(r"\s*,\s*")
# Never a key: "as" is also an autonomous system, "it" also information technology.
_FUNCTION_WORDS = frozenset(
    ["a", "an", "as", "at", "be", "by", "in", "is", "it", "of", "on", "or", "to"]
)
# How many terms one matched word or phrase adds, and how many one query gets in all: a
# query (or a model's output) stuffed with thesaurus words would otherwise search for the
# whole thesaurus, and its own words would drown.
MAX_TERMS_PER_KEY = 8
MAX_EXPANSIONS = 24
MAX_PHRASE_WORDS = 5


@cache
def expansion_table() -> Mapping[str, tuple[str, ...]]:
    """Each term (lower case) and the terms it expands to: the other terms of every group it
    belongs to, and the right side of every one-directional line whose left side names it."""
    table: dict[str, list[str]] = {}
    for line in (_GROUPS + OPS_GROUPS + WORK_GROUPS).strip().splitlines():
        if not line.strip():
            continue
        left, arrow, right = line.lower().partition("=>")
        keys = _terms(left)
        targets = _terms(right) if arrow else keys
        for key in keys:
            others = table.setdefault(key, [])
            others.extend(t for t in targets if t != key and t not in others)
    return {term: tuple(others) for term, others in table.items() if others}


@cache
def thesaurus_words() -> frozenset[str]:
    """Every word of every term: real words of software work, never typos to correct (the
    embedding model's vocabulary lacks some, such as "pager", which is one edit from "page")."""
    return frozenset(w for term in expansion_table() for w in re.findall(r"[^\W_]+", term))


def expansions(text: str, table: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The terms that `text`'s words and phrases (up to five words) expand to. A word inside
    a matched phrase is not looked up alone ("on call" is the pager, not a meeting)."""
    return [term for _, terms in matched(text, table) for term in terms]


def matched(text: str, table: Mapping[str, tuple[str, ...]]) -> list[tuple[str, tuple[str, ...]]]:
    """Each word or phrase of `text` that the table knows, with the terms it adds (at most
    `MAX_TERMS_PER_KEY`, none added twice), longest phrases first."""
    words = re.findall(r"[^\W_]+", text.lower())
    covered: set[int] = set()
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    for size in range(MAX_PHRASE_WORDS, 0, -1):
        for start in range(len(words) - size + 1):
            span = range(start, start + size)
            phrase = " ".join(words[start : start + size])
            if phrase in _FUNCTION_WORDS or covered.intersection(span) or phrase not in table:
                continue
            covered.update(span)
            new = tuple(t for t in table[phrase] if t not in seen)[:MAX_TERMS_PER_KEY]
            seen.update(new)
            if new:
                found.append((phrase, new))
    return found


def _terms(side: str) -> list[str]:
    return [t for t in _SPLIT.split(side.strip()) if t]

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


@cache
def expansion_table() -> Mapping[str, tuple[str, ...]]:
    """Each term (lower case) and the other terms of every group it belongs to."""
    table: dict[str, list[str]] = {}
    for line in _GROUPS.strip().splitlines():
        terms = [t for t in _SPLIT.split(line.strip().lower()) if t]
        for term in terms:
            others = table.setdefault(term, [])
            others.extend(t for t in terms if t != term and t not in others)
    return {term: tuple(others) for term, others in table.items()}


def expansions(text: str, table: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The terms that `text`'s words and two- and three-word phrases expand to."""
    words = re.findall(r"[^\W_]+", text.lower())
    found: list[str] = []
    for size in (3, 2, 1):
        for start in range(len(words) - size + 1):
            phrase = " ".join(words[start : start + size])
            if phrase in _FUNCTION_WORDS:
                continue
            for term in table.get(phrase, ()):
                if term not in found:
                    found.append(term)
    return found

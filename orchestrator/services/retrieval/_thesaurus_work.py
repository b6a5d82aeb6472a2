"""The thesaurus of business and office work: issue trackers and wikis, chat, email, calendars,
payments and finance, CRM and marketing, files and documents, browsers, search, design,
analytics and memory.

Written from general usage of these domains, not from any query set; the line format is
`_thesaurus_ops`'s (a group, or `words => tool words` in one direction).
"""

from __future__ import annotations

WORK_GROUPS = """
user story, story, card, work item => issue, ticket
epic, initiative
sprint, iteration, cycle
backlog, icebox
descope, pull from the sprint, take out of the sprint, push to later => backlog, move
watcher, follower, subscriber, cc
subscribe me, keep me posted, notify me, keep me in the loop, loop in => watcher, watch
stop notifying me, stop sending me updates, stop emailing me, unwatch, unfollow => watcher, remove
assignee, owner, responsible
reassign, hand over, hand off, pass to => assign, assignee
reporter, creator, author, opened by
transition, status change, workflow state, move to done
priority, urgency, severity
due date, deadline, due
worklog, time spent, timesheet, hours logged, time tracking
log time, book time, log hours, book hours, track time => worklog
estimate, story points, points, sizing
link issues, related issue, blocks, blocked by, depends on, duplicate of
fix version, target version
wiki page, doc page, article, page
space, workspace, wiki space
child page, subpage, nested page, sub page
page tree, hierarchy, page hierarchy
template, boilerplate
page history, revisions, versions, previous version
page views, readers, who read, who viewed
page restrictions, page permissions, who can see, who can edit, visibility
thread, replies, conversation
channel, room, group chat
dm, direct message, private message
mention, at mention, tag someone
pin, pinned, pinned message
presence, away, online status, availability status
huddle, video call, voice call
user group, handle, alias
announcement, broadcast, notice
unread, catch up, missed messages
email, mail, e mail
inbox, mailbox
send, deliver
forward, fwd
draft, unsent
junk, spam
cc, carbon copy, bcc
meeting, event, appointment, calendar event
schedule a meeting, set up a meeting, book a meeting, put on the calendar => create, event
reschedule, move the meeting, push the meeting => update, event
availability, free busy, free time, open slot, free slot
invite, attendee, guest, participant
recurring meeting, recurring event, series
reminder, nudge, heads up
refund, reimburse, money back, give back the money, pay back
dispute, chargeback, contested charge, contest a charge
payment, charge, transaction
payout, transfer, withdrawal, disbursement, cash out, settlement
balance, funds, available cash, available balance, cash on hand
customer, payer, client, buyer, shopper
invoice, bill, billing
subscription, recurring billing, membership, plan
cancel the subscription, churn, stop billing
coupon, discount, promo, voucher, promo code
price, pricing, amount, cost
product, sku, offering, catalog item
checkout, payment link, pay page, payment page
card, credit card, debit card, payment method
tax, vat, sales tax, tax rate
currency, exchange rate, fx
revenue, sales, income, mrr, earnings
expense, spending, outgoing
ledger, accounting, bookkeeping
receipt, proof of payment
fee, commission, processing fee
free trial, trial, trial period
lead, prospect, potential customer
contact, customer contact
deal, opportunity
sales pipeline, funnel, deal stage
company, organization, business
campaign, blast, newsletter
mailing list, email list, audience, subscribers
segment, cohort
opt out, unsubscribe
conversion, signup, sign up
document, doc, file
folder, directory
open the file, read the file, show me the file, print the file, cat => read, file, contents
move, rename, mv
trash, delete, remove, rm
find files, search files, locate files, glob
grep, search in files, search text, find in files
tree, directory listing, directory structure, folder structure
file info, metadata, stat, file size
spreadsheet, sheet, excel, csv, workbook
presentation, slides, deck, slideshow
pdf, portable document
share, shared with, sharing
download, export, save as
upload, import
convert, transform, turn into
web page, webpage, site, website
navigate, go to, visit, open the url, load the page, open the page
click, press, tap, hit the button
fill in, enter text, fill out, type into
screenshot, screen capture, screengrab, capture the screen
tab, browser tab, new tab
go back, previous page
wait for, wait until
console, devtools, console errors, javascript errors
network requests, http requests, xhr, network calls
run javascript, evaluate, execute script, js
dialog, popup, alert box, modal
drag, drop, drag and drop
web search, search engine, google, look up online, search the web
scrape, crawl, fetch the page, read the url, page content
news, headlines, latest news
design, mockup, figma, frame
prototype, clickable mock
asset, icon, image
color, palette, colour
font, typography, typeface
page views, visits, traffic, hits, pageviews
visitors, unique visitors, audience
report, stats, statistics
trend, over time, trend line
most popular, ranking, leaderboard
tracking, analytics, event tracking
remember, memorize, keep in mind => memory, entity, observation
make a note, note down, store for later => memory, entity, observation
forget, erase from memory => delete, entity, observation
what do you know about, what do you remember, recall => memory, search, entity
relationship, relation, connection, link between
what time is it, current time, local time, the time now => time, current
convert the time, time in, what time in => timezone, convert
what am i working on, my tickets, assigned to me => assignee, issue, search
whats blocking, blocked on, blockers => blocked by, link issues
bump the priority, make it urgent, escalate the ticket => priority, update
close it out, mark as done, finish the ticket => transition, done, close
reopen, open it again => transition, reopen
who is working on, who has it => assignee
how long did it take, time to resolve => resolution, worklog, history
write it up, document it, write a page => create, page
find the doc, where is the page, look it up in the wiki => search, page, wiki
tell the team, let everyone know, post in => send, message, channel
ping someone, reach out to, message someone => send, message, direct message
what did i miss, summarize the channel => history, channel, message
move the meeting, push it back => update, event, reschedule
am i free, when am i free, find a time => availability, free busy, event
cancel the meeting, call off => delete, event
who paid, has it been paid, paid yet => payment, invoice, status
charge the customer, take payment, collect payment => payment, charge, create
how much do we owe, outstanding balance, unpaid => invoice, balance, open
monthly revenue, how much did we make, how much money => revenue, balance, payment
cash available, money to pay out => balance, payout
sign them up, enroll, onboard => create, customer, subscription
upgrade their plan, downgrade their plan, change plans => subscription, update, price
cancel their plan, stop their subscription => subscription, cancel
new lead, add a prospect => create, lead, contact
close the deal, won the deal, deal won => deal, update, stage
follow up with, touch base with => contact, email, task
whats on the page, read the page, what does the page say => snapshot, content, page
take a picture of the page, grab the screen => screenshot
fill in the form, submit the form => fill, form, submit
log in to the site, sign in => login, fill, click
what does the file say, whats in the file => read, file, contents
where is the file, which folder => search, file, directory
save it to disk, write it out => write, file
clean up the folder, empty the folder => delete, directory
look it up online, search online, google it => web search, search
latest news on, news about => news, search
how many visitors, how much traffic => visitors, traffic, analytics
"""

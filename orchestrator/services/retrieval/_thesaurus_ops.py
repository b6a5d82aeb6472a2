"""The thesaurus of engineering work: git hosting, CI/CD, containers and Kubernetes, cloud,
observability and on-call, databases, networking and security.

Written from general usage of these domains, not from any query set. A line `a, b, c` is a
group of interchangeable terms; a line `a, b => c, d` says that a person's words `a` or `b`
name what tools call `c` or `d`, and not the other way round (a "quick paste" is a gist, but a
tool about gists is not about pasting). `_synonyms` reads both kinds.
"""

from __future__ import annotations

OPS_GROUPS = """
gist, snippet, pastebin
quick paste, paste, code snippet, share code => gist, snippet
collaborator, contributor, member
push access, write access, commit access, commit rights, push rights => collaborator, permission
who has access, who can push, who can commit => collaborator, permission
branch, feature branch, topic branch
default branch, main branch, trunk, master branch
tag, release tag, version tag
release, version, release notes
code review, pr review, review
get eyes on, ask for a review, needs review, review request => request review, reviewer
approve, lgtm, sign off, approval
blame, annotate, authorship
who changed, who wrote, who touched => blame, commit, history
cherry pick, backport
rebase, squash
revert, undo, roll back, rollback
protected branch, branch protection, branch rule, ruleset
webhook, hook, callback url
deploy key, ssh key
personal access token, pat, api token, access token
milestone, target release
project board, kanban, board
discussion, forum thread
status check, check run, commit status, checks
artifact, build artifact, build output
runner, build agent, build machine
stargazer, star
submodule, subrepo
readme, project description
license, licence
code search, grep, search code
source file, file contents, blob
contributors, committers, authors
upstream, parent repository, origin
open source, public repo
private repo, internal repo
pipeline, build, ci run, workflow run
red build, broken build, failing build, failed build, build failed => failure, failed, error
flaky test, intermittent failure, flaky
rerun, retry, re run, run again
deploy, rollout, ship, go live, push to prod, release to production
undo the deploy, revert the deploy, roll back the release => rollback, revert, deployment
canary, gradual rollout, staged rollout, progressive delivery
environment, staging, production, prod
feature flag, feature toggle, feature switch, flag
cron, schedule, scheduled job, periodic job, cronjob
build cache, cache
replicas, replica count, instances, copies
more replicas, more instances, more copies, fewer replicas => scale, replicas
scale up, scale out, scale down, scale in => scale, replicas
pod, container, workload
namespace, tenant
deployment, rollout
bounce, kick, recycle => restart, rollout restart
crashloop, crash loop, crashloopbackoff
container logs, pod logs, stdout, console output
exec into, shell into, get a shell, ssh into => exec, shell, command
port forward, tunnel, forward a port
load balancer, lb
ingress, gateway
config map, configmap, configuration, config, settings
cordon, drain, maintenance mode
node, worker node, host, machine
container image, docker image, image
container registry, image registry, registry
helm chart, chart, helm release
manifest, yaml, spec, resource definition
resource usage, utilization, consumption, cpu, memory
kubernetes events, cluster events, events
persistent volume, volume, disk, pvc, storage
vm, virtual machine, instance, compute, ec2, droplet
bucket, object storage, s3, blob storage
serverless, lambda, cloud function, worker, edge function
region, zone, location, datacenter, data center
iam, identity and access, roles, policies
quota, limit, rate limit, throttle
cloud bill, cloud cost, spend, usage cost
dns record, cname, a record, txt record, mx record
domain, hostname, zone, domain name
cdn, edge, edge cache
purge cache, clear cache, invalidate cache, flush cache, bust the cache
firewall, security group, waf, firewall rule
ssl certificate, tls certificate, certificate, cert, https
key value, kv, kv store, key value store
message queue, queue, pubsub, pub sub
alert silence, silence, mute, snooze, suppress, quiet
stop the pager, stop paging, stop alerting, stop the alerts => silence, mute
stop notifications, shut up the alert, quiet the alert => silence, mute
pager, on call, oncall, paging, pagerduty
who is on call, on duty, on shift => oncall, on call, schedule
page someone, wake someone up, get someone on the phone => page, escalate, incident
escalation, escalation policy, escalate
acknowledge, ack, take ownership, claim
incident, outage, downtime, major incident, sev, sev1, sev2
postmortem, post mortem, incident review, retrospective, root cause analysis, rca
runbook, playbook, procedure
status page, service status, health status
uptime, availability
sla, service level agreement, response time target, breach
slo, service level objective, error budget
error rate, errors, exceptions, failures
trace, tracing, span, distributed trace
log lines, log search, logs, log query
dashboard, grafana
panel, graph, chart, widget, visualization
metric, metrics, prometheus, promql, time series
data source, datasource
alert rule, alert condition, threshold, alerting rule
contact point, notification channel, receiver, notification policy
heartbeat, health check, ping, liveness
on call schedule, rotation, shift, on call rotation
swap shift, cover my shift, take over the pager => override, schedule
database, db, datastore, data store
row, record, entry
column, field, attribute
sql, query, select statement
db index, index
schema, ddl, table structure
migration, schema change, alter table, migrate
backup, snapshot, dump
restore, recover, recovery
read replica, standby, replica
connection string, dsn, database url
slow query, query performance, explain plan, query plan
extension, plugin, add on, addon
stored procedure, rpc, database function
row level security, rls, policy
vector, embedding
supabase, postgres, postgresql
network, isp, carrier, autonomous system, asn
internet outage, connectivity loss, internet disruption, network outage
bgp hijack, route leak, bgp, routing incident
ddos, attack, layer 7 attack, flood
top domains, popular sites, domain ranking, most visited
vulnerability, vuln, cve, security hole, weakness, advisory
leaked secret, exposed secret, leaked credential, secret scanning, leaked key
dependabot, dependency alert, vulnerable dependency, outdated dependency
static analysis, code scanning, codeql, sast, lint
security scan, audit, scan
two factor, 2fa, mfa, multi factor
api key, key, token, credential, secret
block, ban, deny, blacklist, blocklist
allowlist, whitelist, allow list
audit log, activity log, access log, security log
what changed, what is different, compare versions => diff, compare
who approved, who reviewed => review, reviewer
ready to merge, good to go => merge, approve
pending reviews, waiting on review, awaiting review => review request, pull request
open prs, open pull requests, outstanding prs => pull request, list
fork it, make my own copy of the repo => fork
new repo, start a project, new project => create, repository
archive the repo, make read only => archive, repository
close the pr, abandon the pr => close, pull request
go red, turned red, went red => failed, failure
build logs, job output, ci output => job, logs
trigger a build, kick off a build, start a build, run the pipeline => trigger, workflow, run
cancel the build, abort the build, kill the build => cancel, workflow run
is it deployed, what version is live, what is running in prod => deployment, release, status
bump the version, cut a release, tag a release => release, tag, create
spin up, provision, stand up => create, instance, deploy
tear down, decommission, spin down => delete, destroy
rotate the key, rotate credentials, roll the secret => secret, key, update
resize the disk, more disk, out of disk, disk full => volume, resize, storage
out of memory, oom, oomkilled => memory, restart, crash
cpu spike, high cpu, running hot => cpu, metric, usage
what is slow, why is it slow, slowness => latency, performance, slow query
is the site down, is it down, is it up => uptime, status, health check
point the domain at, point dns at => dns record, update
who owns this service, service owner => service, team, owner
wake up the on call, page the on call => incident, escalate, page
declare an incident, open an incident, raise an incident => create, incident
resolve the incident, all clear, mitigated => resolve, incident
ack the alert, i am on it, looking into it => acknowledge
why did it page, what fired, what alerted => alert, incident
noisy alert, flapping, false alarm => alert, silence, mute
error spike, spike in errors, more errors => error rate, errors
dropped packets, packet loss => network, outage
"""

// corral's run dashboard: a run list and a run view over the JSON API and its event stream.
// Plain JavaScript, no build step. Every text from a run (model output, tool arguments, results)
// is attacker-controlled, so it only ever reaches the page as textContent, never as HTML.
"use strict";

(() => {
  const PAGE = 50;
  const ITEM_PAGE = 100;
  const LANES = 40;
  const REFRESH_MS = 400;
  const LIST_POLL_MS = 3000;
  const CLIP = 4000;
  const STREAM_KINDS = [
    "user_input", "model_item", "model_completed", "model_failed", "tool_result",
    "compaction_done", "compaction_failed", "budget_exceeded", "wall_time_up", "interrupt",
    "notify", "resume", "response_discarded", "agent_queued", "agent_started",
    "agent_finished", "item_started", "item_finished", "approval_requested",
    "approval_answered",
  ];

  const state = {
    csrf: null, content: false, view: null, runId: null, source: null, listTimer: null, refreshTimer: null,
    listPage: 0, itemPage: 0, lanePage: 0, run: null, agents: [], items: [], approvals: [],
    lanes: new Map(), lastSeq: 0, t0: null, t1: null, shown: new Map(), spawnedBy: new Map(),
    stream: { opens: 0, events: 0, ended: false, final: false },
  };
  window.corralDashboard = state; // read by the browser tests and handy in the console

  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clip(text, limit = CLIP) {
    const value = typeof text === "string" ? text : JSON.stringify(text);
    if (value === undefined) return "";
    return value.length > limit ? `${value.slice(0, limit)}… (${value.length} chars)` : value;
  }

  const money = (usd) => `$${(usd || 0).toFixed(4)}`;
  const seconds = (s) => (s >= 90 ? `${(s / 60).toFixed(1)} min` : `${(s || 0).toFixed(1)} s`);
  const when = (at) => (at ? new Date(at * 1000).toLocaleString() : "");
  const countsText = (counts) =>
    Object.entries(counts || {}).map(([k, v]) => `${v} ${k}`).join(" · ") || "–";
  const statusBadge = (status) => el("span", { class: `status status-${status}` }, status);

  function notice(text) {
    $("notice").hidden = !text;
    $("notice").textContent = text || "";
  }

  async function api(path, options = {}) {
    const headers = { Accept: "application/json" };
    if (options.method && options.method !== "GET") {
      headers["Content-Type"] = "application/json";
      if (state.csrf) headers["X-CSRF-Token"] = state.csrf;
    }
    const response = await fetch(path, { credentials: "same-origin", ...options, headers });
    if (response.status === 401) {
      location.assign("/signin");
      throw new Error("signed out");
    }
    const body = response.status === 204 ? null : await response.json();
    if (!response.ok) throw new Error((body && (body.error || body.detail)) || response.statusText);
    return body;
  }

  const runPath = (id, tail = "") => `/v1/runs/${encodeURIComponent(id)}${tail}`;

  // -- routing ---------------------------------------------------------------------------

  function route() {
    closeStream();
    clearInterval(state.listTimer);
    const match = location.hash.match(/^#\/runs\/([A-Za-z0-9_-][A-Za-z0-9._-]*)$/);
    $("list-view").hidden = Boolean(match);
    $("run-view").hidden = !match;
    if (match) showRun(match[1]);
    else showList();
  }

  // -- the run list ----------------------------------------------------------------------

  function showList() {
    state.view = "list";
    loadList();
    state.listTimer = setInterval(loadList, LIST_POLL_MS);
  }

  async function loadList() {
    const params = new URLSearchParams({ limit: PAGE, offset: state.listPage * PAGE });
    for (const [key, id] of [["q", "f-q"], ["status", "f-status"], ["kind", "f-kind"]]) {
      if ($(id).value) params.set(key, $(id).value);
    }
    let data;
    try {
      data = await api(`/v1/dashboard/runs?${params}`);
    } catch (error) {
      notice(`Cannot load the runs: ${error.message}`);
      return;
    }
    notice("");
    $("list-count").textContent = `${data.total} run${data.total === 1 ? "" : "s"}`;
    $("runs").tBodies[0].replaceChildren(...data.runs.map(runRow));
    pager($("runs-pager"), state.listPage, data.total, PAGE, (page) => {
      state.listPage = page;
      loadList();
    });
  }

  function runRow(run) {
    const link = el("a", { href: `#/runs/${encodeURIComponent(run.id)}` }, run.id);
    return el("tr", { class: run.status === "failed" ? "failed" : "", "data-run": run.id },
      el("td", {}, link), el("td", {}, run.kind), el("td", {}, statusBadge(run.status)),
      el("td", {}, countsText(run.items)), el("td", {}, countsText(run.agents)),
      el("td", {}, run.tokens), el("td", {}, money(run.cost_usd)),
      el("td", {}, seconds(run.duration_s)), el("td", {}, when(run.created_at)));
  }

  function pager(nav, page, total, size, go) {
    const pages = Math.max(1, Math.ceil(total / size));
    const prev = el("button", { type: "button", disabled: page === 0, onclick: () => go(page - 1) }, "‹");
    const next = el("button", { type: "button", disabled: page >= pages - 1, onclick: () => go(page + 1) }, "›");
    nav.replaceChildren(prev, el("span", { class: "muted" }, `page ${page + 1} of ${pages}`), next);
    nav.hidden = pages <= 1;
  }

  // -- the run view ----------------------------------------------------------------------

  async function showRun(id) {
    Object.assign(state, {
      view: "run", runId: id, run: null, agents: [], items: [], approvals: [], lanes: new Map(),
      lastSeq: 0, t0: null, t1: null, itemPage: 0, lanePage: 0, shown: new Map(),
      spawnedBy: new Map(), stream: { opens: 0, events: 0, ended: false, final: false },
    });
    $("run-title").textContent = id;
    $("inspector").hidden = true;
    await refresh();
    openStream(id);
  }

  async function refresh() {
    const id = state.runId;
    try {
      const [run, agents, items, approvals] = await Promise.all([
        api(runPath(id)), api(runPath(id, "/agents")), api(runPath(id, "/items")),
        api(runPath(id, "/approvals?state=pending")),
      ]);
      if (id !== state.runId) return;
      Object.assign(state, { run, agents: agents.agents, items: items.items, approvals: approvals.approvals });
      notice("");
    } catch (error) {
      notice(`Cannot load run ${id}: ${error.message}`);
      return;
    }
    renderRun();
  }

  function scheduleRefresh() {
    if (state.refreshTimer) return;
    state.refreshTimer = setTimeout(() => {
      state.refreshTimer = null;
      refresh();
    }, REFRESH_MS);
  }

  function renderRun() {
    const run = state.run;
    $("run-status").replaceWith(Object.assign(statusBadge(run.status), { id: "run-status" }));
    $("cancel-run").hidden = !["queued", "running"].includes(run.status);
    const report = $("report-link");
    report.hidden = !["review", "triage", "refactor"].includes(run.kind);
    report.href = runPath(state.runId, "/report");
    renderTotals();
    renderApprovals();
    renderTree();
    renderTimeline();
    renderItems();
  }

  function renderTotals() {
    const run = state.run;
    const lanes = [...state.lanes.values()];
    const failedCalls = lanes.reduce((n, lane) => n + lane.failed, 0);
    const retries = lanes.reduce((n, lane) => n + lane.retries, 0);
    const tokens = run.tokens || {};
    const figures = [
      ["Items", countsText(run.items), "item-counts"],
      ["Agents", countsText(run.agents), "agent-counts"],
      ["Tokens in / out", `${tokens.input_tokens || 0} / ${tokens.output_tokens || 0}`, "tokens"],
      ["Cost", money(run.cost_usd), "cost"],
      ["Duration", seconds(runDuration()), "duration"],
      ["Failed tool calls", failedCalls, "failed-calls"],
      ["Model retries", retries, "retries"],
      ["Events", state.lastSeq, "events"],
    ];
    $("run-totals").replaceChildren(...figures.map(([name, value, key]) =>
      el("div", { "data-figure": key }, el("dt", {}, name), el("dd", {}, value))));
    $("run-totals").dataset.items = JSON.stringify(run.items || {});
  }

  function runDuration() {
    const ats = state.agents.flatMap((a) => [a.created_at, a.updated_at]);
    return ats.length ? Math.max(...ats) - Math.min(...ats) : 0;
  }

  function renderApprovals() {
    const list = state.approvals;
    $("approvals").hidden = list.length === 0;
    $("approval-list").replaceChildren(...list.map((approval) => el("li",
      { "data-approval": approval.id },
      el("code", {}, clip(approval.command || approval.kind, 400)), " ",
      el("span", { class: "muted" }, clip(approval.reason || "", 400)), " ",
      el("button", { type: "button", class: "approve", onclick: () => answer(approval, "approve") }, "Approve"),
      " ",
      el("button", { type: "button", class: "deny", onclick: () => answer(approval, "deny") }, "Deny"))));
  }

  async function answer(approval, decision) {
    try {
      await api(`/v1/approvals/${encodeURIComponent(approval.id)}`,
        { method: "POST", body: JSON.stringify({ decision }) });
    } catch (error) {
      notice(`Could not ${decision}: ${error.message}`);
    }
    scheduleRefresh();
  }

  async function cancelRun() {
    const button = $("cancel-run");
    if (button.dataset.armed !== "yes") {
      button.dataset.armed = "yes";
      button.textContent = "Really cancel?";
      button.classList.add("danger");
      return;
    }
    button.dataset.armed = "";
    button.textContent = "Cancel run";
    button.classList.remove("danger");
    try {
      await api(runPath(state.runId, "/cancel"), { method: "POST", body: "{}" });
    } catch (error) {
      notice(`Could not cancel: ${error.message}`);
    }
    scheduleRefresh();
  }

  // -- the agent tree, rolled up without double counting -----------------------------------

  function rollUp() {
    const byId = new Map(state.agents.map((a) => [a.agent_id, { agent: a, children: [] }]));
    const roots = [];
    for (const node of byId.values()) {
      const parent = byId.get(node.agent.parent_id);
      (parent ? parent.children : roots).push(node);
    }
    const total = (node) => {
      const own = node.agent.usage || {};
      node.tokens = (own.input_tokens || 0) + (own.output_tokens || 0);
      node.cost = node.agent.cost_usd || 0;
      node.start = node.agent.created_at;
      node.end = node.agent.updated_at;
      for (const child of node.children) {
        total(child);
        node.tokens += child.tokens;
        node.cost += child.cost;
        node.start = Math.min(node.start, child.start);
        node.end = Math.max(node.end, child.end);
      }
    };
    roots.forEach(total);
    return roots;
  }

  function renderTree() {
    const roots = rollUp();
    $("agent-tree").replaceChildren(...treeList("", roots));
    state.order = [];
    const walk = (nodes) => nodes.forEach((n) => { state.order.push(n.agent.agent_id); walk(n.children); });
    walk(roots);
  }

  function treeList(key, nodes) {
    const limit = state.shown.get(key) || PAGE;
    const shown = nodes.slice(0, limit).map(treeNode);
    if (nodes.length > limit) {
      const more = el("button", { type: "button", onclick: () => {
        state.shown.set(key, limit + PAGE);
        renderTree();
      } }, `show ${Math.min(PAGE, nodes.length - limit)} more of ${nodes.length - limit}`);
      shown.push(el("li", {}, more));
    }
    return shown;
  }

  function treeNode(node) {
    const agent = node.agent;
    const lane = state.lanes.get(agent.agent_id);
    const badges = [];
    if (lane && lane.failed) badges.push(el("span", { class: "badge bad" }, `${lane.failed} failed calls`));
    if (lane && lane.retries) badges.push(el("span", { class: "badge warn" }, `${lane.retries} retries`));
    const figures = `${node.tokens} tok · ${money(node.cost)} · ${seconds(node.end - node.start)}`;
    const row = el("div", { class: "node", "data-agent": agent.agent_id, title: clip(agent.task || "", 400) },
      statusBadge(agent.status), el("span", { class: "name" }, agent.nickname || agent.agent_id),
      el("span", { class: "muted" }, agent.role || ""), el("span", { class: "figures" }, figures),
      ...badges);
    const item = el("li", {}, row);
    if (node.children.length) item.append(el("ul", {}, ...childList(agent.agent_id, node.children)));
    return item;
  }

  // Children sit under the spawn_agent call that started them, when the stream showed it.
  function childList(parentId, children) {
    const byCall = new Map();
    const direct = [];
    for (const child of children) {
      const call = state.spawnedBy.get(child.agent.agent_id);
      if (!call) direct.push(child);
      else if (byCall.has(call)) byCall.get(call).push(child);
      else byCall.set(call, [child]);
    }
    const groups = [...byCall.entries()].map(([call, nodes]) => el("li", { class: "call" },
      el("button", { type: "button", class: "link", "data-spawn-call": call.callId,
        onclick: () => inspect(call) }, `${call.name} ${call.callId}`),
      el("ul", {}, ...treeList(`${parentId}/${call.callId}`, nodes))));
    return [...groups, ...treeList(parentId, direct)];
  }

  function noteSpawn(call) {
    if (!call.ok || typeof call.result !== "string") return;
    try {
      const answer = JSON.parse(call.result);
      if (answer && typeof answer.agent_id === "string") state.spawnedBy.set(answer.agent_id, call);
    } catch (error) {
      // not a spawn answer: nothing to link
    }
  }

  // -- the timeline, built from the event stream -------------------------------------------

  function laneOf(agentId) {
    let lane = state.lanes.get(agentId);
    if (!lane) {
      lane = { spans: [], open: new Map(), mark: null, failed: 0, retries: 0 };
      state.lanes.set(agentId, lane);
    }
    return lane;
  }

  function addEvent(event) {
    const lane = laneOf(event.agent_id);
    const payload = event.payload || {};
    const at = event.at;
    state.t0 = state.t0 === null ? at : Math.min(state.t0, at);
    state.t1 = state.t1 === null ? at : Math.max(state.t1, at);
    if (lane.mark === null) lane.mark = at;
    if (event.kind === "model_item" && payload.item && payload.item.type === "function_call") {
      const item = payload.item;
      lane.open.set(item.call_id, { type: "tool", start: at, end: null, name: item.name,
        args: item.arguments, ok: true, agent: event.agent_id, callId: item.call_id });
    } else if (event.kind === "model_completed") {
      lane.spans.push({ type: "model", start: lane.mark, end: at, name: payload.model || "model" });
      lane.mark = at;
    } else if (event.kind === "model_failed") {
      lane.spans.push({ type: "retry", start: lane.mark, end: at, name: clip(payload.error, 200) });
      lane.retries += 1;
      lane.mark = at;
    } else if (event.kind === "tool_result") {
      const call = lane.open.get(payload.call_id) || { type: "tool", start: lane.mark,
        name: payload.call_id, args: "", agent: event.agent_id, callId: payload.call_id };
      lane.open.delete(payload.call_id);
      Object.assign(call, { end: at, ok: payload.success !== false, result: payload.output,
        bytes: payload.total_bytes ?? (payload.output || "").length });
      if (!call.ok) lane.failed += 1;
      if (call.name === "spawn_agent") noteSpawn(call);
      lane.spans.push(call);
      lane.mark = Math.max(lane.mark, at);
    } else if (["user_input", "resume", "agent_started", "notify"].includes(event.kind)) {
      lane.mark = at;
    }
  }

  function renderTimeline() {
    const order = (state.order || []).filter((id) => state.lanes.has(id));
    const ids = [...order, ...[...state.lanes.keys()].filter((id) => !order.includes(id))];
    const first = state.lanePage * LANES;
    const span = Math.max((state.t1 ?? 0) - (state.t0 ?? 0), 0.001);
    const names = new Map(state.agents.map((a) => [a.agent_id, a.nickname || a.agent_id]));
    $("timeline").replaceChildren(...ids.slice(first, first + LANES).map((id) =>
      el("div", { class: "lane", "data-lane": id },
        el("div", { class: "label", title: id }, names.get(id) || id),
        el("div", { class: "track" }, ...laneSpans(state.lanes.get(id)).map((s) => spanBar(s, span))))));
    pager($("timeline-pager"), state.lanePage, ids.length, LANES, (page) => {
      state.lanePage = page;
      renderTimeline();
    });
  }

  function laneSpans(lane) {
    // calls still running (or waiting for an approval) are drawn up to the latest event
    const open = [...lane.open.values()].map((call) => ({ ...call, end: state.t1, running: true }));
    return [...lane.spans, ...open];
  }

  function spanBar(span, width) {
    const left = ((span.start - state.t0) / width) * 100;
    const size = ((span.end - span.start) / width) * 100;
    let kind = span.type === "tool" ? (span.ok ? "span-tool" : "span-failed") : `span-${span.type}`;
    if (span.running) kind += " span-running";
    const bar = el("span", { class: kind, title: `${span.name} · ${seconds(span.end - span.start)}` });
    bar.style.left = `${left}%`;
    bar.style.width = `${Math.max(size, 0.2)}%`;
    if (span.type === "tool") {
      bar.dataset.call = span.callId;
      bar.addEventListener("click", () => inspect(span));
    }
    return bar;
  }

  function inspect(call) {
    $("inspector").hidden = false;
    const outcome = call.running ? "running" : call.ok ? "ok" : "failed";
    $("inspector-title").textContent = `${call.name} (${outcome})`;
    const off = "content capture is off on the server";
    const args = call.args || "";
    $("inspector-args").textContent = state.content ? clip(args) : `${args.length} characters (${off})`;
    let result = call.result === undefined || !state.content
      ? `${call.bytes ?? 0} bytes${state.content ? "" : ` (${off})`}` : clip(call.result);
    if (call.running) result = "(still running, or waiting for an approval)";
    $("inspector-result").textContent = result;
  }

  // -- the fan-out item table --------------------------------------------------------------

  function renderItems() {
    const items = state.items;
    $("items-section").hidden = items.length === 0;
    const wanted = $("item-filter").value;
    const shown = items.filter((item) => !wanted || item.status === wanted);
    const first = state.itemPage * ITEM_PAGE;
    $("items").tBodies[0].replaceChildren(...shown.slice(first, first + ITEM_PAGE).map((item) =>
      el("tr", { class: item.status === "failed" ? "failed" : "", "data-item": item.index },
        el("td", {}, item.index), el("td", {}, statusBadge(item.status)),
        el("td", {}, item.agent_id || ""),
        el("td", { class: "result" }, clip(item.error || item.result || "", 300)))));
    pager($("items-pager"), state.itemPage, shown.length, ITEM_PAGE, (page) => {
      state.itemPage = page;
      renderItems();
    });
  }

  // -- the live stream -------------------------------------------------------------------

  function openStream(id) {
    const source = new EventSource(runPath(id, "/events"));
    state.source = source;
    const conn = $("conn");
    source.onopen = () => {
      state.stream.opens += 1;
      conn.dataset.state = "live";
      conn.textContent = "live";
    };
    source.onerror = (event) => {
      if (event.data !== undefined) return finish(source, JSON.parse(event.data)); // the run crashed
      const closed = source.readyState === EventSource.CLOSED;
      conn.dataset.state = closed ? "closed" : "reconnecting";
      conn.textContent = closed ? "" : "reconnecting…";
    };
    source.addEventListener("end", (event) => finish(source, JSON.parse(event.data)));
    for (const kind of STREAM_KINDS) source.addEventListener(kind, onEvent);
  }

  function onEvent(message) {
    const event = JSON.parse(message.data);
    if (event.seq <= state.lastSeq) return; // a resumed stream never repeats, but be sure
    state.lastSeq = event.seq;
    state.stream.events += 1;
    event.kind = message.type;
    addEvent(event);
    scheduleRefresh();
  }

  async function finish(source, ending) {
    source.close(); // the run is over: no reconnects (the server answers 204 to one anyway)
    state.stream.ended = true;
    $("conn").dataset.state = "ended";
    $("conn").textContent = `run ${ending.status || "ended"}`;
    clearTimeout(state.refreshTimer);
    state.refreshTimer = null;
    await refresh();
    state.stream.final = true;
    document.body.dataset.stream = "ended";
  }

  function closeStream() {
    if (state.source) state.source.close();
    state.source = null;
    delete document.body.dataset.stream;
  }

  // -- start -----------------------------------------------------------------------------

  async function signOut() {
    try {
      await api("/signout", { method: "POST", body: "{}" });
    } finally {
      location.assign("/signin");
    }
  }

  async function start() {
    const session = await api("/v1/session");
    state.csrf = session.csrf;
    state.content = session.content === true;
    $("signout").addEventListener("click", signOut);
    $("cancel-run").addEventListener("click", cancelRun);
    $("filters").addEventListener("submit", (event) => event.preventDefault());
    for (const id of ["f-q", "f-status", "f-kind"]) {
      $(id).addEventListener("input", () => { state.listPage = 0; loadList(); });
    }
    $("item-filter").addEventListener("change", () => { state.itemPage = 0; renderItems(); });
    window.addEventListener("hashchange", route);
    route();
  }

  document.addEventListener("DOMContentLoaded", start);
})();

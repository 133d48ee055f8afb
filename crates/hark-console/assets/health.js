// The Health page: this member's view of the cluster, the watch engine's
// load over time (sampled from /metrics), and the leases counting down.

import { alarms, fromBase64, leases, leaseTimeToLive, members, metrics, status, watchStreams } from "./gateway.js";
import { bytes, el, hex, linkTo, svg, text } from "./dom.js";

/// Seconds between samples, and samples kept per plot.
const EVERY = 2;
const KEEP = 150;
/// Leases shown with their keys (each is one more request).
const LEASES_SHOWN = 100;

/// The watch engine's series, as etcd names them.
const SERIES = [
  ["etcd_debugging_mvcc_watch_stream_total", "watch streams"],
  ["etcd_debugging_mvcc_watcher_total", "watchers"],
  ["etcd_debugging_mvcc_slow_watcher_total", "slow watchers"],
  ["etcd_debugging_mvcc_pending_events_total", "pending events"],
];



/// A table that scrolls sideways in its own box on a narrow screen.
function table(headings, rows) {
  return el("div", { className: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ...headings.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { text: String(c) }))))))));
}

export class HealthPage {
  constructor(root) {
    this.cluster = el("section", { className: "cluster", "aria-label": "Cluster" });
    this.engine = el("section", { className: "engine", "aria-label": "Watch engine" });
    this.leases = el("section", { className: "leases", "aria-label": "Leases" });
    root.replaceChildren(el("div", { className: "health" }, this.cluster, this.engine, this.leases));
    this.samples = new Map(SERIES.map(([name]) => [name, []]));
    this.timers = [];
  }

  /// Draws every section once, then keeps them current until `stop`. A
  /// section that fails shows its error and the others go on.
  async show() {
    const every = (ms, draw) => {
      let busy = false;
      const tick = async () => {
        // One call at a time: a slow answer is not asked for twice.
        if (busy || this.stopped) return;
        busy = true;
        try {
          await draw();
        } finally {
          busy = false;
        }
      };
      this.timers.push(setInterval(tick, ms));
      return tick();
    };
    this.timers.push(setInterval(() => this.countDown(), 1000));
    await Promise.all([
      every(5000, () => this.section(this.cluster, "Cluster", () => this.drawCluster())),
      every(EVERY * 1000, () => this.section(this.engine, "Watch engine", () => this.sample())),
      every(15000, () => this.section(this.leases, "Leases", () => this.drawLeases())),
    ]);
  }

  stop() {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
  }

  /// Runs `draw`; on failure the section says why (a login needed goes up
  /// to the console, which asks for one).
  async section(root, title, draw) {
    try {
      await draw();
    } catch (error) {
      if (error.needsLogin) throw error;
      root.replaceChildren(el("h2", { text: title }),
        el("p", { className: "conflict", role: "alert", text: String(error.message || error) }));
    }
  }

  async drawCluster() {
    const [s, m, a] = await Promise.all([status(), members(), alarms()]);
    if (this.stopped) return;
    const leader = s.leader || "0";
    const quota = Number(s.dbSizeQuota || 0);
    const used = Number(s.dbSize || 0);
    const facts = [
      ["this member", hex(s.header?.member_id)],
      ["leader", leader === "0" ? "none (no leader)" : hex(leader)],
      ["revision", s.header?.revision || "0"],
      ["raft term", s.raftTerm || "0"],
      ["raft index", `${s.raftIndex || 0} (applied ${s.raftAppliedIndex || 0})`],
      ["version", s.version || ""],
    ];
    const fill = quota ? Math.min(1, used / quota) : 0;
    const meter = el("div", { className: "quota" },
      el("meter", { min: "0", max: String(quota || 1), value: String(used), high: String(quota * 0.8), "aria-label": "db size against quota" }),
      el("span", { className: "quota-text", text: `db ${bytes(used)} (${bytes(s.dbSizeInUse || 0)} in use) of ${quota ? bytes(quota) : "no"} quota${quota ? `, ${(fill * 100).toFixed(1)}%` : ""}` }));
    const alarmList = (a.alarms || []).map((x) => `${x.alarm || "NONE"} on ${hex(x.memberID)}`);
    const rows = (m.members || []).map((x) => [
      x.name || "(not started)",
      hex(x.ID),
      x.ID === leader ? "leader" : x.isLearner ? "learner" : "follower",
      (x.peerURLs || []).join(", "),
      (x.clientURLs || []).join(", "),
    ]);
    this.cluster.replaceChildren(
      el("h2", { text: "Cluster" }),
      el("dl", { className: "facts" }, ...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v) })])),
      meter,
      el("p", { className: alarmList.length ? "conflict alarms" : "alarms", text: alarmList.length ? `Alarms: ${alarmList.join("; ")}` : "No alarms." }),
      ...(s.errors || []).map((e) => el("p", { className: "conflict", text: e })),
      table(["member", "id", "role", "peer URLs", "client URLs"], rows));
  }

  async sample() {
    const [values, streams] = await Promise.all([metrics(), watchStreams()]);
    if (this.stopped) return;
    for (const [name] of SERIES) {
      const kept = this.samples.get(name);
      kept.push(values[name] ?? 0);
      if (kept.length > KEEP) kept.shift();
    }
    this.engine.replaceChildren(
      el("h2", { text: "Watch engine" }),
      el("div", { className: "plots" }, ...SERIES.map(([name, label]) => plot(label, this.samples.get(name)))),
      el("h3", { text: `Deepest queues (${streams.deepest.length} of ${streams.streams} streams)` }),
      streams.deepest.length
        ? table(["stream", "client", "watchers", "catching up", "held back", "queued events", "queued bytes"],
          streams.deepest.map((x) => [x.stream, x.client, x.watchers, x.unsynced, x.victims, x.queued_events, bytes(x.queued_bytes)]))
        : el("p", { className: "empty", text: "No watch streams." }));
  }

  async drawLeases() {
    const ids = ((await leases()).leases || []).map((l) => l.ID);
    const shown = await Promise.all(ids.slice(0, LEASES_SHOWN).map((id) => leaseTimeToLive(id).catch(() => null)));
    if (this.stopped) return;
    const now = Date.now();
    this.deadlines = [];
    const rows = shown.filter(Boolean).filter((l) => Number(l.TTL) > 0).map((l) => {
      const left = el("span", { className: "ttl" });
      this.deadlines.push({ left, at: now + Number(l.TTL) * 1000 });
      const keys = (l.keys || []).map(fromBase64);
      const links = el("span", {}, ...keys.slice(0, 5).flatMap((k, i) => [i ? ", " : "", el("a", { href: linkTo("keys", k), text: text(k) })]),
        keys.length > 5 ? ` and ${keys.length - 5} more` : "");
      return [hex(l.ID), left, `${l.grantedTTL}s`, links];
    });
    this.leases.replaceChildren(
      el("h2", { text: `Leases (${ids.length})` }),
      rows.length ? table(["lease", "expires in", "granted", "keys"], rows) : el("p", { className: "empty", text: "No leases." }),
      ...(ids.length > LEASES_SHOWN ? [el("p", { className: "note", text: `The first ${LEASES_SHOWN} are shown.` })] : []));
    this.countDown();
  }

  countDown() {
    const now = Date.now();
    for (const { left, at } of this.deadlines || []) {
      const seconds = Math.max(0, Math.ceil((at - now) / 1000));
      left.textContent = seconds ? `${seconds}s` : "expiring";
    }
  }
}

/// One series over time: its line, its latest and highest values.
function plot(label, values) {
  const width = 300;
  const height = 60;
  const top = Math.max(1, ...values);
  const step = width / Math.max(1, KEEP - 1);
  const offset = (KEEP - values.length) * step;
  const points = values.map((v, i) => `${(offset + i * step).toFixed(1)},${(height - 2 - (v / top) * (height - 4)).toFixed(1)}`).join(" ");
  const latest = values.length ? values[values.length - 1] : 0;
  return el("figure", { className: "plot" },
    svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${label} over the last ${(KEEP * EVERY) / 60} minutes` },
      svg("line", { x1: "0", y1: String(height - 1), x2: String(width), y2: String(height - 1), stroke: "#d5dbe0" }),
      svg("polyline", { points, fill: "none", stroke: "#0b6bcb", "stroke-width": "2" })),
    el("figcaption", {}, el("span", { className: "series", text: label }), " ",
      el("strong", { className: "latest", text: String(latest) }), el("span", { className: "muted", text: ` (max ${top === 1 && !values.some(Boolean) ? 0 : top})` })));
}

// The live watch page: a watch on a key or prefix, from now or a past
// revision, shown event by event. It resumes by itself after a dropped
// connection from the revision after the last it showed, and says when
// history it needed was compacted.

import { prefixEnd, utf8, watch } from "./gateway.js";
import { describeValue, el, linkTo, svg, text } from "./dom.js";

/// Rows kept on the page; older ones are dropped.
export const ROWS = 1000;
/// Seconds the rate sparkline spans.
const SPAN = 60;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const clip = (s, n = 200) => (s.length > n ? `${s.slice(0, n)}…` : s);
const shown = (kv) => (kv ? clip(describeValue(kv.value).text) : "");

/// An error retrying cannot mend: the watch was refused (a permission, say),
/// or the session needs a login.
class Refused extends Error {}

export class WatchPage {
  /// `fail` takes an error the page cannot handle itself (a login needed).
  constructor(root, fail) {
    this.root = root;
    this.fail = fail;
    this.stopped = false;
    this.paused = false;
    this.waiting = [];
    this.heldBack = 0;
    this.filter = "";
    this.counts = new Array(SPAN).fill(0);
    this.searchable = new WeakMap();
  }

  /// Draws the page for a key (or prefix) and starts watching from `from`
  /// (0: from now); resolves once the watch is created, or at once when
  /// there is nothing to watch yet.
  show(key, isPrefix, from) {
    this.key = key;
    this.isPrefix = isPrefix;
    const keyField = el("input", { className: "watch-key", "aria-label": "Key or prefix", spellcheck: "false", placeholder: "key or prefix" });
    keyField.value = text(key);
    const prefixBox = el("input", { type: "checkbox", className: "watch-prefix", checked: isPrefix });
    const fromField = el("input", { className: "watch-from", "aria-label": "From revision", inputmode: "numeric", placeholder: "now" });
    if (from) fromField.value = String(from);
    const form = el("form", { className: "watch-form" },
      el("label", { text: "Watch " }, keyField),
      el("label", {}, prefixBox, " every key with this prefix"),
      el("label", { text: "from revision " }, fromField),
      el("button", { type: "submit", text: "Start" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const query = new URLSearchParams();
      if (prefixBox.checked) query.set("prefix", "1");
      if (/^\d+$/.test(fromField.value.trim())) query.set("from", fromField.value.trim());
      location.hash = linkTo("watch", utf8(keyField.value), query.toString());
    });
    this.state = el("span", { className: "watch-state", role: "status" });
    this.pauseButton = el("button", { className: "pause", text: "Pause", onclick: () => this.togglePause() });
    const filter = el("input", { className: "watch-filter", "aria-label": "Filter events", placeholder: "filter" });
    filter.addEventListener("input", () => {
      this.filter = filter.value.toLowerCase();
      for (const row of this.rows.children) row.hidden = !this.matches(row);
    });
    this.rate = el("span", { className: "rate" });
    this.spark = svg("svg", { class: "sparkline", viewBox: `0 0 ${SPAN * 2} 24`, width: `${SPAN * 2}`, height: "24", role: "img", "aria-label": "events per second, last minute" });
    this.notice = el("div", { className: "notice" });
    this.rows = el("tbody");
    this.root.replaceChildren(el("section", { className: "watch" },
      form,
      el("div", { className: "watch-bar" }, this.state, this.pauseButton, filter, this.spark, this.rate),
      this.notice,
      el("div", { className: "events-wrap" }, el("table", { className: "events" },
        el("thead", {}, el("tr", {}, ...["revision", "change", "key", "value", "previous value"].map((h) => el("th", { text: h })))),
        this.rows))));
    this.ticker = setInterval(() => this.tick(), 1000);
    this.drawRate();
    if (!key.length && !isPrefix) {
      this.state.textContent = "Name a key or prefix to watch.";
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.run(from, resolve)
        .catch((error) => {
          this.state.className = "watch-state error";
          this.state.textContent = `Stopped: ${error.message || error}`;
          if (error.needsLogin) this.fail(error);
        })
        .finally(resolve);
    });
  }

  stop() {
    this.stopped = true;
    clearInterval(this.ticker);
    this.controller?.abort();
  }

  /// The watch loop: made again after a dropped connection, from the
  /// revision after the last one shown.
  async run(from, created) {
    const end = this.isPrefix ? prefixEnd(this.key) : undefined;
    const what = `${this.isPrefix ? "prefix" : "key"} ${text(this.key) || "(every key)"}`;
    let next = from;
    // Drops since the last successful create (for the back-off), and
    // whether any happened (for the message).
    let drops = 0;
    let resumed = false;
    while (!this.stopped) {
      this.controller = new AbortController();
      try {
        for await (const r of watch({ key: this.key, end, startRevision: next, prevKv: true, signal: this.controller.signal })) {
          if (r.canceled) {
            if (r.compactRevision) return this.compacted(next, r.compactRevision);
            throw new Refused(r.cancelReason || "the watch was canceled");
          }
          if (r.created) {
            if (!next) next = r.revision + 1;
            this.state.textContent = resumed
              ? `Watching ${what}: resumed from revision ${next} after a dropped connection.`
              : `Watching ${what} from revision ${next}.`;
            this.state.className = "watch-state live";
            drops = 0;
            created();
          }
          for (const event of r.events) {
            this.add(event);
            next = event.kv.modRevision + 1;
          }
          // A progress report: nothing is missing up to its revision.
          if (!r.events.length && !r.created && r.revision >= next) next = r.revision + 1;
        }
        throw new Error("the connection closed");
      } catch (error) {
        if (this.stopped) return;
        // A refusal, or an answer that needs a login, would only repeat.
        if (error instanceof Refused || error.needsLogin) throw error;
        drops += 1;
        resumed = true;
        const resume = next ? `revision ${next}` : "now";
        this.state.textContent = `Connection lost (${error.message || error}); resuming from ${resume}…`;
        this.state.className = "watch-state error";
        created();
        await sleep(Math.min(5000, 250 * 2 ** Math.min(drops, 5)));
      }
    }
  }

  compacted(wanted, compactRevision) {
    this.state.textContent = "Stopped.";
    this.state.className = "watch-state error";
    const query = (from) => new URLSearchParams({ ...(this.isPrefix ? { prefix: "1" } : {}), ...(from ? { from: String(from) } : {}) }).toString();
    this.notice.replaceChildren(el("p", { className: "conflict", role: "alert",
      text: `History before revision ${compactRevision} was compacted: the changes from revision ${wanted} to ${compactRevision - 1} can no longer be shown. ` },
    el("a", { href: linkTo("watch", this.key, query(compactRevision)), text: `Watch from revision ${compactRevision}` }),
    " or ",
    el("a", { href: linkTo("watch", this.key, query(0)), text: "from now" })));
  }

  /// One event from the watch: counted for the rate, then shown or, while
  /// paused, held back.
  add(event) {
    this.counts[SPAN - 1] += 1;
    if (this.paused) {
      // Only the newest rows would be shown anyway.
      this.waiting.push(event);
      if (this.waiting.length > ROWS) this.waiting.shift();
      this.heldBack += 1;
      this.pauseButton.textContent = `Resume (${this.heldBack} waiting)`;
      return;
    }
    this.render(event);
  }

  render(event) {
    const kv = event.kv;
    const row = el("tr", { className: event.type === "DELETE" ? "delete" : "put" },
      el("td", { text: String(kv.modRevision) }),
      el("td", { text: event.type }),
      el("td", {}, el("a", { href: linkTo("keys", kv.key), text: text(kv.key) })),
      el("td", { className: "cell-value", text: event.type === "DELETE" ? "" : shown(kv) }),
      el("td", { className: "cell-value", text: shown(event.prevKv) }));
    this.searchable.set(row, `${text(kv.key)}\n${shown(kv)}\n${shown(event.prevKv)}`.toLowerCase());
    row.hidden = !this.matches(row);
    this.rows.prepend(row);
    while (this.rows.children.length > ROWS) this.rows.lastElementChild.remove();
  }

  matches(row) {
    return !this.filter || (this.searchable.get(row) || "").includes(this.filter);
  }

  togglePause() {
    this.paused = !this.paused;
    this.heldBack = 0;
    this.pauseButton.textContent = this.paused ? "Resume (0 waiting)" : "Pause";
    if (!this.paused) {
      const waiting = this.waiting;
      this.waiting = [];
      for (const event of waiting) this.render(event);
    }
  }

  tick() {
    this.counts.shift();
    this.counts.push(0);
    this.drawRate();
  }

  drawRate() {
    const top = Math.max(1, ...this.counts);
    const points = this.counts.map((n, i) => `${i * 2},${23 - (n / top) * 22}`).join(" ");
    this.spark.replaceChildren(svg("polyline", { points, fill: "none", stroke: "currentColor", "stroke-width": "1.5" }));
    this.rate.textContent = `${this.counts[SPAN - 2] ?? 0} events/s (peak ${top === 1 && !this.counts.some(Boolean) ? 0 : top})`;
  }
}

// A key's history: every version back to the compaction, and a line diff
// between any two of them.

import { range, watch } from "./gateway.js";
import { describeValue, el } from "./dom.js";

/// Versions kept for display; older ones are counted, not shown.
export const HISTORY_LIMIT = 1000;

/// Every change to `key` up to its mod revision `upTo`, oldest first, as
/// `{ revision, type, kv }`, with `compactRevision` (0 if none). A watch
/// from revision 1 replays the key's changes; when history was compacted
/// the watch is refused with the compact revision, and is made again from
/// there, led by the key as it was at that revision (a watch from the
/// compact revision sends only the changes made at it or later).
export async function keyHistory(key, upTo) {
  let start = 1;
  let compactRevision = 0;
  const versions = [];
  let dropped = 0;
  const keep = (version) => {
    versions.push(version);
    if (versions.length > HISTORY_LIMIT) {
      versions.shift();
      dropped += 1;
    }
  };
  for (;;) {
    const controller = new AbortController();
    try {
      for await (const r of watch({ key, startRevision: start, signal: controller.signal })) {
        if (r.canceled && r.compactRevision) {
          compactRevision = r.compactRevision;
          break;
        }
        if (r.canceled) throw new Error(r.cancelReason || "the watch was canceled");
        for (const event of r.events) {
          const revision = event.kv.modRevision;
          if (versions.length && versions[versions.length - 1].revision === revision) continue;
          keep({ revision, type: event.type, kv: event.kv });
          if (revision >= upTo) return { versions, dropped, compactRevision };
        }
      }
    } finally {
      controller.abort();
    }
    if (start === compactRevision || !compactRevision) throw new Error("the history watch ended early");
    // Compacted: whatever came before is started over from the compaction.
    start = compactRevision;
    versions.length = 0;
    dropped = 0;
    let kvs;
    try {
      ({ kvs } = await range({ key, revision: compactRevision }));
    } catch (error) {
      // Compacted again meanwhile: start over.
      if (!/compacted/.test(error.message)) throw error;
      start = 1;
      continue;
    }
    if (kvs.length) keep({ revision: kvs[0].modRevision, type: "PUT", kv: kvs[0] });
    // Compacted past the version asked for: what was live at the
    // compaction is all that is left (nothing, if the key was deleted).
    if (compactRevision >= upTo) return { versions, dropped, compactRevision };
  }
}

/// A line diff (longest common subsequence): `[{ op, line }]` with op
/// " " (both), "-" (only in `a`) or "+" (only in `b`). Values longer than
/// `limit` lines on both sides compare as a whole.
export function diffLines(a, b, limit = 2000) {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length * y.length > limit * limit) {
    return [...x.map((line) => ({ op: "-", line })), ...y.map((line) => ({ op: "+", line }))];
  }
  // lengths[i][j]: the common subsequence of x[i..] and y[j..].
  const lengths = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lengths[i][j] = x[i] === y[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      out.push({ op: " ", line: x[i++] });
      j++;
    } else if (i < x.length && (j === y.length || lengths[i + 1][j] >= lengths[i][j + 1])) {
      // Removals before additions, as diff prints them.
      out.push({ op: "-", line: x[i++] });
    } else {
      out.push({ op: "+", line: y[j++] });
    }
  }
  return out;
}

const shown = (version) => (version.type === "DELETE" ? "" : describeValue(version.kv.value).text);

/// The history section for a key whose latest mod revision is `upTo`.
export async function historySection(key, upTo) {
  const { versions, dropped, compactRevision } = await keyHistory(key, upTo);
  const label = (v) => `revision ${v.revision}${v.type === "DELETE" ? " (deleted)" : ` (version ${v.kv.version})`}`;
  const pick = (name, selected) =>
    el("select", { name, "aria-label": name },
      ...versions.map((v, index) => el("option", { value: String(index), selected: index === selected, text: label(v) })));
  const from = pick("from", Math.max(0, versions.length - 2));
  const to = pick("to", versions.length - 1);
  const diff = el("pre", { className: "diff" });
  const redraw = () => {
    const a = versions[Number(from.value)];
    const b = versions[Number(to.value)];
    diff.replaceChildren(...diffLines(shown(a), shown(b)).map(({ op, line }) =>
      el("span", { className: { "+": "added", "-": "removed", " ": "same" }[op], text: `${op} ${line}\n` })));
  };
  from.addEventListener("change", redraw);
  to.addEventListener("change", redraw);
  redraw();
  const notes = [];
  if (compactRevision) notes.push(`History before revision ${compactRevision} was compacted.`);
  if (dropped) notes.push(`${dropped} older versions are not shown.`);
  const rows = versions.slice().reverse().map((v) =>
    el("tr", {},
      el("td", { text: String(v.revision) }),
      el("td", { text: v.type }),
      el("td", { text: v.type === "DELETE" ? "" : String(v.kv.version) }),
      el("td", { className: "cell-value", text: shown(v) })));
  return el("section", { className: "history", "aria-label": "History" },
    el("h3", { text: `History (${versions.length} changes)` }),
    ...notes.map((note) => el("p", { className: "note", text: note })),
    el("div", { className: "table-wrap" }, el("table", {},
      el("thead", {}, el("tr", {}, ...["revision", "change", "version", "value"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows))),
    el("h3", { text: "Diff" }),
    el("div", { className: "diff-pick" }, el("label", { text: "from " }, from), el("label", { text: " to " }, to)),
    diff);
}

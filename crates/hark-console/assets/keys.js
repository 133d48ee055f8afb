// The Keys page: the keyspace as a tree split at "/", one level loaded at a
// time, and a viewer for the selected key. Everything shown is set as text.

import { prefixSizes, range, prefixEnd, successor, toBase64, utf8, writeIf } from "./gateway.js";
import { bytes, describeValue, el, leaseHex, linkTo, text } from "./dom.js";
import { historySection } from "./history.js";

/// Keys fetched per request while listing a level.
const PAGE = 500;
/// Entries shown per level before a "more" button.
export const LEVEL_SIZE = 100;
const SLASH = 0x2f;

function startsWith(key, prefix) {
  return key.length >= prefix.length && prefix.every((b, i) => key[i] === b);
}

/// Up to `want` entries of the level under `prefix`, starting at `from`:
/// a key with no further "/" is a leaf; keys sharing the next segment and a
/// "/" make one directory. A directory's keys are stepped over within the
/// batch, and a new request starts past the directory when the batch ends
/// inside it. `next` is where the level continues, given only when a key is
/// known to be there (null at the level's end).
export async function listLevel(prefix, from, want) {
  const end = prefixEnd(prefix);
  const entries = [];
  let cursor = from;
  for (;;) {
    const { kvs, more } = await range({ key: cursor, end, keysOnly: true, limit: PAGE });
    let skipping = null;
    for (const { key } of kvs) {
      if (skipping && startsWith(key, skipping)) continue;
      if (entries.length >= want) return { entries, next: cursor };
      const slash = key.subarray(prefix.length).indexOf(SLASH);
      if (slash < 0) {
        entries.push({ key, dir: false });
        cursor = successor(key);
        skipping = null;
      } else {
        skipping = key.slice(0, prefix.length + slash + 1);
        entries.push({ key: skipping, dir: true });
        // Never null: a directory ends in "/", not 0xff.
        cursor = prefixEnd(skipping);
      }
    }
    if (!more) return { entries, next: null };
  }
}

export class KeysPage {
  constructor(root, status) {
    this.status = status;
    this.tree = el("nav", { className: "tree", "aria-label": "Keys" });
    this.viewer = el("section", { className: "viewer", "aria-live": "polite" },
      el("p", { className: "empty", text: "Select a key to see its value." }));
    root.replaceChildren(el("div", { className: "keys" }, this.tree, this.viewer));
    this.tree.addEventListener("keydown", (event) => treeKeys(this.tree, event));
  }

  /// Shows the level under `prefix` (bytes ending in "/", or empty for the
  /// whole keyspace) and, when given, the value of `key`.
  async show(prefix, key) {
    this.prefix = prefix;
    const list = el("ul", { role: "tree", "aria-label": "Keys under this prefix" });
    const heading = [];
    if (prefix.length) {
      const parent = prefix.subarray(0, prefix.subarray(0, -1).lastIndexOf(SLASH) + 1);
      heading.push(
        el("a", { href: linkTo("keys", parent), className: "up", text: "↑ up" }),
        el("h2", { className: "prefix", text: text(prefix) }),
      );
    }
    const create = el("button", { className: "new", text: "+ new key", onclick: () => this.creator() });
    this.tree.replaceChildren(...heading, create, list);
    await this.fill(list, prefix, prefix);
    if (key) {
      const named = [...list.querySelectorAll("button.leaf")].find((b) => b.title === text(key));
      await this.view(key, named || null);
    }
  }

  /// Appends one page of the level under `prefix` to `list`, from `from`.
  async fill(list, prefix, from) {
    const [{ entries, next }, sizes] = await Promise.all([
      listLevel(prefix, from, LEVEL_SIZE),
      prefixSizes(prefix).catch(() => null),
    ]);
    for (const entry of entries) list.append(this.node(prefix, entry, sizes));
    if (next) {
      const more = el("button", { className: "more", text: "more…" });
      const item = el("li", { role: "none" }, more);
      more.addEventListener("click", async () => {
        more.disabled = true;
        try {
          await this.fill(list, prefix, next);
          item.remove();
        } finally {
          more.disabled = false;
        }
      });
      list.append(item);
    }
    if (entries.length === 0 && prefix.length === 0) {
      list.append(el("li", { className: "empty", text: "No keys." }));
    }
  }

  node(prefix, entry, sizes) {
    const label = text(entry.key.subarray(prefix.length)) || "(the prefix itself)";
    const button = el("button", { className: entry.dir ? "dir" : "leaf", text: label, title: text(entry.key) });
    const item = el("li", { role: "treeitem" }, button);
    const size = entry.dir && sizes?.get(toBase64(entry.key));
    if (size) {
      // The server's counters: what lives under the folder now, and what
      // its history holds until compaction.
      item.append(el("span", {
        className: "size",
        text: `${size.keys} ${size.keys === 1 ? "key" : "keys"} · ${bytes(size.bytes)}`,
        title: `with history: ${size.revisions} revisions, ${bytes(size.historyBytes)}`,
      }));
    }
    if (entry.dir) {
      button.setAttribute("aria-expanded", "false");
      let children = null;
      button.addEventListener("click", async () => {
        if (children) {
          const open = button.getAttribute("aria-expanded") === "true";
          button.setAttribute("aria-expanded", String(!open));
          children.hidden = open;
          return;
        }
        const group = el("ul", { role: "group" });
        button.setAttribute("aria-busy", "true");
        try {
          // Shown only once loaded: a failed load leaves the directory
          // closed, to be tried again.
          await this.fill(group, entry.key, entry.key);
          children = group;
          item.append(group);
          button.setAttribute("aria-expanded", "true");
        } finally {
          button.removeAttribute("aria-busy");
        }
      });
    } else {
      button.addEventListener("click", () => this.view(entry.key, button));
    }
    return item;
  }

  select(button) {
    for (const selected of this.tree.querySelectorAll("[aria-selected=true]")) {
      selected.setAttribute("aria-selected", "false");
    }
    button?.setAttribute("aria-selected", "true");
  }

  /// Shows a key's value, its facts and what can be done with it; `notice`
  /// (an element) goes above.
  async view(key, button, notice = null) {
    this.select(button);
    // Only the latest of several quick clicks draws.
    const mine = (this.viewing = (this.viewing || 0) + 1);
    const { kvs, revision } = await range({ key });
    if (mine !== this.viewing) return;
    if (kvs.length === 0) {
      this.viewer.replaceChildren(...[notice].filter(Boolean),
        el("h2", { text: text(key) }),
        el("p", { className: "empty", text: "This key does not exist (or was deleted)." }));
      return;
    }
    const kv = kvs[0];
    const value = describeValue(kv.value);
    const facts = [
      ["created at revision", kv.createRevision],
      ["modified at revision", kv.modRevision],
      ["version", kv.version],
      // In hex, as etcdctl prints lease ids.
      ["lease", leaseHex(kv.lease)],
      ["value", `${kv.value.length} bytes, ${value.kind}`],
      ["read at revision", revision],
    ];
    const body = el("div", { className: "value-area" }, el("pre", { className: "value", text: value.text }));
    const history = el("div", { className: "history-area" });
    const actions = el("div", { className: "actions" },
      el("button", {
        className: "edit",
        text: "Edit",
        disabled: value.editable === null,
        title: value.editable === null ? "Binary values are shown, not edited, here." : null,
        onclick: () => this.editor(body, kv, value.editable),
      }),
      el("button", { className: "delete", text: "Delete", onclick: () => this.confirmDelete(body, kv) }),
      el("button", {
        className: "show-history",
        text: "History",
        onclick: async (event) => {
          event.target.disabled = true;
          history.replaceChildren(el("p", { className: "empty", text: "Loading history…" }));
          try {
            history.replaceChildren(await historySection(kv.key, kv.modRevision));
          } catch (error) {
            history.replaceChildren(el("p", { className: "conflict", role: "alert", text: String(error.message || error) }));
          } finally {
            event.target.disabled = false;
          }
        },
      }),
      el("a", { className: "watch-link", href: linkTo("watch", kv.key), text: "Watch" }));
    this.viewer.replaceChildren(...[notice].filter(Boolean),
      el("h2", {}, el("a", { href: linkTo("keys", kv.key), text: text(kv.key) })),
      el("dl", {}, ...facts.flatMap(([name, fact]) => [el("dt", { text: name }), el("dd", { text: String(fact) })])),
      actions, body, history);
  }

  /// Edits a value in place; saved only if the key still has the mod
  /// revision it was read at, so a change made meanwhile is never lost.
  editor(body, kv, original) {
    const field = el("textarea", { className: "draft", "aria-label": "New value", rows: "12", spellcheck: "false" });
    field.value = original;
    let base = kv;
    const message = el("div", { className: "message" });
    const save = el("button", { className: "save", text: "Save" });
    const cancel = el("button", { className: "cancel", text: "Cancel", onclick: () => this.view(kv.key, null) });
    save.addEventListener("click", async () => {
      save.disabled = true;
      try {
        const result = await writeIf(kv.key, base.modRevision, { put: utf8(field.value) }, { keepLease: base.lease !== "0" });
        if (result.ok) {
          await this.view(kv.key, null, el("p", { className: "saved", role: "status", text: `Saved at revision ${result.revision}.` }));
          return;
        }
        message.replaceChildren(...conflictNotice(base, result.current));
        if (!result.current) {
          // Gone: saving again creates it anew.
          base = { ...base, modRevision: 0, lease: "0" };
          save.textContent = "Create it again";
        } else {
          base = result.current;
          save.textContent = `Save over revision ${base.modRevision}`;
        }
      } finally {
        save.disabled = false;
      }
    });
    body.replaceChildren(field, el("div", { className: "actions" }, save, cancel), message);
    field.focus();
  }

  confirmDelete(body, kv) {
    const message = el("div", { className: "message" });
    const yes = el("button", { className: "confirm-delete", text: `Delete ${text(kv.key)}` });
    const no = el("button", { className: "cancel", text: "Keep it", onclick: () => this.view(kv.key, null) });
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      try {
        const result = await writeIf(kv.key, kv.modRevision, { remove: true });
        if (result.ok) {
          await this.view(kv.key, null, el("p", { className: "saved", role: "status", text: `Deleted at revision ${result.revision}.` }));
        } else {
          message.replaceChildren(...conflictNotice(kv, result.current));
          yes.remove();
        }
      } finally {
        yes.disabled = false;
      }
    });
    body.replaceChildren(
      el("p", { text: `Delete this key, as of revision ${kv.modRevision}? It will not be deleted if it changed since.` }),
      el("div", { className: "actions" }, yes, no), message);
    no.focus();
  }

  /// A form for a new key under the level shown; refused if the key exists.
  creator() {
    this.select(null);
    const name = el("input", { className: "new-key", "aria-label": "Key", spellcheck: "false" });
    name.value = text(this.prefix || new Uint8Array());
    const value = el("textarea", { className: "draft", "aria-label": "Value", rows: "8", spellcheck: "false" });
    const message = el("div", { className: "message" });
    const create = el("button", { className: "create", type: "submit", text: "Create" });
    const form = el("form", { className: "creator" },
      el("h2", { text: "New key" }),
      el("label", { text: "Key " }, name),
      el("label", { text: "Value " }, value),
      el("div", { className: "actions" }, create), message);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const key = utf8(name.value);
      if (!key.length) {
        message.replaceChildren(el("p", { className: "conflict", role: "alert", text: "A key cannot be empty." }));
        return;
      }
      create.disabled = true;
      try {
        const result = await writeIf(key, 0, { put: utf8(value.value) });
        if (result.ok) {
          location.hash = linkTo("keys", key);
          return;
        }
        message.replaceChildren(
          el("p", { className: "conflict", role: "alert", text: `Not created: ${name.value} already exists (modified at revision ${result.current?.modRevision}). ` },
            el("a", { href: linkTo("keys", key), text: "Open it" })));
      } finally {
        create.disabled = false;
      }
    });
    this.viewer.replaceChildren(form);
    name.focus();
  }
}

/// What a person sees when a write was refused because the key changed.
function conflictNotice(base, current) {
  if (!current) {
    return [el("p", { className: "conflict", role: "alert",
      text: `Not saved: the key was deleted after you opened it (at revision ${base.modRevision}). Your text is kept.` })];
  }
  return [
    el("p", { className: "conflict", role: "alert",
      text: `Not saved: the key changed at revision ${current.modRevision}, after the version you opened (revision ${base.modRevision}). Its value now is below; your text is kept.` }),
    el("pre", { className: "value theirs", text: describeValue(current.value).text }),
  ];
}

/// Arrow keys in the tree, as in a file browser: up and down move between
/// visible entries, right opens a directory, left closes it or goes up.
function treeKeys(tree, event) {
  if (!["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
  const buttons = [...tree.querySelectorAll("button.leaf, button.dir, button.more")]
    .filter((b) => !b.closest("[hidden]"));
  const at = buttons.indexOf(document.activeElement);
  if (at < 0) return;
  const current = buttons[at];
  let target = null;
  if (event.key === "ArrowDown") target = buttons[at + 1];
  else if (event.key === "ArrowUp") target = buttons[at - 1];
  else if (event.key === "Home") target = buttons[0];
  else if (event.key === "End") target = buttons[buttons.length - 1];
  else if (event.key === "ArrowRight" && current.classList.contains("dir")) {
    if (current.getAttribute("aria-expanded") !== "true") current.click();
    else target = buttons[at + 1];
  } else if (event.key === "ArrowLeft") {
    if (current.getAttribute("aria-expanded") === "true") current.click();
    else target = current.closest("ul[role=group]")?.parentElement?.querySelector(":scope > button");
  }
  event.preventDefault();
  target?.focus();
}

// The Keys page: the keyspace as a tree split at "/", one level loaded at a
// time, and a viewer for the selected key. Everything shown is set as text.

import { range, prefixEnd, successor } from "./gateway.js";

/// Keys fetched per request while listing a level.
const PAGE = 500;
/// Entries shown per level before a "more" button.
export const LEVEL_SIZE = 100;
const SLASH = 0x2f;

const decoder = new TextDecoder("utf-8");
const strict = new TextDecoder("utf-8", { fatal: true });

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "text") node.textContent = value;
    else if (name === "className") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

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

/// The console's address of a key (a value shown) or of a prefix ending in
/// "/" (its level listed): `#/keys/` and the key's bytes, percent-encoded
/// (so a key that is not UTF-8 keeps its bytes).
export function linkTo(key) {
  let out = "#/keys/";
  for (const b of key) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/// The key or prefix a `#/keys/...` address names: `%XX` is a byte, any
/// other character its UTF-8 bytes.
export function fromLink(hash) {
  const rest = hash.startsWith("#/keys/") ? hash.slice("#/keys/".length) : "";
  const bytes = [];
  for (let i = 0; i < rest.length; i++) {
    const hex = rest.slice(i + 1, i + 3);
    if (rest[i] === "%" && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...new TextEncoder().encode(rest[i]));
    }
  }
  return new Uint8Array(bytes);
}

/// How a value reads: pretty JSON, text, or a hex dump for binary.
export function describeValue(bytes) {
  let text;
  try {
    text = strict.decode(bytes);
  } catch {
    const lines = [];
    for (let i = 0; i < bytes.length; i += 16) {
      const row = Array.from(bytes.subarray(i, i + 16), (b) => b.toString(16).padStart(2, "0"));
      lines.push(`${i.toString(16).padStart(8, "0")}  ${row.join(" ")}`);
    }
    return { kind: "binary (hex)", text: lines.join("\n") };
  }
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return { kind: "JSON", text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return { kind: "text", text };
}

export class KeysPage {
  constructor(root, status) {
    this.status = status;
    this.tree = el("nav", { className: "tree", "aria-label": "Keys" });
    this.viewer = el("section", { className: "viewer", "aria-live": "polite" },
      el("p", { className: "empty", text: "Select a key to see its value." }));
    root.replaceChildren(el("div", { className: "keys" }, this.tree, this.viewer));
  }

  /// Shows the level under `prefix` (bytes ending in "/", or empty for the
  /// whole keyspace) and, when given, the value of `key`.
  async show(prefix, key) {
    const list = el("ul", { role: "tree" });
    const heading = [];
    if (prefix.length) {
      const parent = prefix.subarray(0, prefix.subarray(0, -1).lastIndexOf(SLASH) + 1);
      heading.push(
        el("a", { href: linkTo(parent), className: "up", text: "↑ up" }),
        el("h2", { className: "prefix", text: decoder.decode(prefix) }),
      );
    }
    this.tree.replaceChildren(...heading, list);
    await this.fill(list, prefix, prefix);
    if (key) await this.view(key, null);
  }

  /// Appends one page of the level under `prefix` to `list`, from `from`.
  async fill(list, prefix, from) {
    this.status.textContent = "loading…";
    const { entries, next } = await listLevel(prefix, from, LEVEL_SIZE);
    for (const entry of entries) list.append(this.node(prefix, entry));
    if (next) {
      const more = el("button", { className: "more", text: "more…" });
      const item = el("li", {}, more);
      more.addEventListener("click", async () => {
        item.remove();
        await this.fill(list, prefix, next);
      });
      list.append(item);
    }
    if (entries.length === 0 && prefix.length === 0) {
      list.append(el("li", { className: "empty", text: "No keys." }));
    }
    this.status.textContent = "";
  }

  node(prefix, entry) {
    const label = decoder.decode(entry.key.subarray(prefix.length)) || "(the prefix itself)";
    const button = el("button", { className: entry.dir ? "dir" : "leaf", text: label, title: decoder.decode(entry.key) });
    const item = el("li", { role: "treeitem" }, button);
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
        children = el("ul", { role: "group" });
        item.append(children);
        button.setAttribute("aria-expanded", "true");
        await this.fill(children, entry.key, entry.key);
      });
    } else {
      button.addEventListener("click", () => this.view(entry.key, button));
    }
    return item;
  }

  async view(key, button) {
    for (const selected of this.tree.querySelectorAll("[aria-selected=true]")) {
      selected.setAttribute("aria-selected", "false");
    }
    button?.setAttribute("aria-selected", "true");
    const { kvs, revision } = await range({ key });
    if (kvs.length === 0) {
      this.viewer.replaceChildren(el("p", { className: "empty", text: "This key was deleted." }));
      return;
    }
    const kv = kvs[0];
    const value = describeValue(kv.value);
    const facts = [
      ["created at revision", kv.createRevision],
      ["modified at revision", kv.modRevision],
      ["version", kv.version],
      // In hex, as etcdctl prints lease ids.
      ["lease", kv.lease === "0" ? "none" : BigInt(kv.lease).toString(16)],
      ["value", `${kv.value.length} bytes, ${value.kind}`],
      ["read at revision", revision],
    ];
    this.viewer.replaceChildren(
      el("h2", {}, el("a", { href: linkTo(kv.key), text: decoder.decode(kv.key) })),
      el("dl", {}, ...facts.flatMap(([name, fact]) => [el("dt", { text: name }), el("dd", { text: String(fact) })])),
      el("pre", { className: "value", text: value.text }),
    );
  }
}


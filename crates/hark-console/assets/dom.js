// Small helpers every page shares: building elements (always as text,
// never markup), decoding bytes for display, and the console's addresses.

export const decoder = new TextDecoder("utf-8");
const strict = new TextDecoder("utf-8", { fatal: true });

/// An element with attributes (`text` sets its text, `className` its
/// class) and children. Never parses markup.
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "className") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

/// An SVG element (for the plots), with attributes.
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

export const text = (bytes) => decoder.decode(bytes);

/// How a value reads: pretty JSON, text, or a hex dump for binary.
/// `editable` is the text a person can edit (binary is not).
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
    return { kind: "binary (hex)", text: lines.join("\n"), editable: null };
  }
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return { kind: "JSON", text: JSON.stringify(JSON.parse(text), null, 2), editable: text };
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return { kind: "text", text, editable: text };
}

/// A console address: `#/<page>/` and the key's bytes, percent-encoded so a
/// key that is not UTF-8 keeps its bytes; `query` is appended after "?".
export function linkTo(page, key, query = "") {
  let out = `#/${page}/`;
  for (const b of key) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return query ? `${out}?${query}` : out;
}

/// Splits an address into its page, key bytes and query: `%XX` is a byte,
/// any other character its UTF-8 bytes.
export function parseLink(hash) {
  const match = /^#\/([a-z]+)\/?([^?]*)(?:\?(.*))?$/.exec(hash);
  if (!match) return { page: "keys", key: new Uint8Array(), query: new URLSearchParams() };
  const [, page, rest, query] = match;
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
  return { page, key: new Uint8Array(bytes), query: new URLSearchParams(query || "") };
}

/// An id (member, lease; a decimal string as JSON gives it) in hex, as
/// etcdctl prints ids.
export const hex = (id) => BigInt(id || 0).toString(16);

/// A key's lease: its id in hex, or "none".
export const leaseHex = (lease) => (lease === "0" ? "none" : hex(lease));

/// A byte count in binary units: "512 B", "97.7 KiB".
export function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  for (n = Number(n); n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

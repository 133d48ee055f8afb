// Calls to Hark's JSON gateway (etcd's /v3 API over HTTP) on this origin.
// Keys and values travel as base64; here they are byte arrays.

export function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

export function fromBase64(text) {
  const s = atob(text || "");
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

export const utf8 = (text) => new TextEncoder().encode(text);

/// etcd's range end for "every key with this prefix"; null when none
/// (every byte is 0xff), meaning "to the end of the keyspace".
export function prefixEnd(prefix) {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = prefix.slice(0, i + 1);
      end[i] += 1;
      return end;
    }
  }
  return null;
}

/// The smallest key after `key`: `key` followed by a zero byte.
export function successor(key) {
  const next = new Uint8Array(key.length + 1);
  next.set(key);
  return next;
}

async function call(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(answer.message || answer.error || `${path}: HTTP ${response.status}`);
  }
  return answer;
}

/// Range over [key, end) (end null: to the end of the keyspace); kvs with
/// byte-array keys and values and numeric revisions.
export async function range({ key, end = undefined, keysOnly = false, limit = 0 }) {
  // The empty key starts the whole keyspace; etcd spells that "\0".
  const body = { key: toBase64(key.length ? key : new Uint8Array([0])) };
  if (end === null) body.range_end = toBase64(new Uint8Array([0]));
  else if (end !== undefined) body.range_end = toBase64(end);
  if (keysOnly) body.keys_only = true;
  if (limit) body.limit = String(limit);
  const answer = await call("/v3/kv/range", body);
  return {
    more: Boolean(answer.more),
    revision: Number(answer.header?.revision || 0),
    kvs: (answer.kvs || []).map((kv) => ({
      key: fromBase64(kv.key),
      value: fromBase64(kv.value),
      createRevision: Number(kv.create_revision || 0),
      modRevision: Number(kv.mod_revision || 0),
      version: Number(kv.version || 0),
      lease: kv.lease || "0",
    })),
  };
}

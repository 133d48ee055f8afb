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

/// The session's auth token (etcd's, from /v3/auth/authenticate), kept
/// only for this tab's session; the password never is.
const TOKEN = "hark-console-token";
export const session = {
  get token() { return sessionStorage.getItem(TOKEN); },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN, value);
    else sessionStorage.removeItem(TOKEN);
  },
};

/// An error the gateway answered with: etcd's message and gRPC code.
export class GatewayError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }

  /// Whether logging in (again) would help: no token, or an expired one.
  get needsLogin() {
    return /user name is empty|invalid auth token|authentication failed/.test(this.message);
  }
}

function headers() {
  const out = { "Content-Type": "application/json" };
  if (session.token) out.Authorization = session.token;
  return out;
}

async function call(path, body) {
  const response = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new GatewayError(answer.message || answer.error || `${path}: HTTP ${response.status}`, answer.code);
  }
  return answer;
}

const kvFromJson = (kv) => ({
  key: fromBase64(kv.key),
  value: fromBase64(kv.value),
  createRevision: Number(kv.create_revision || 0),
  modRevision: Number(kv.mod_revision || 0),
  version: Number(kv.version || 0),
  lease: kv.lease || "0",
});

/// The key and range end of a request over [key, end): the empty key
/// starts the whole keyspace (etcd spells that "\0"); `end` null means to
/// the end of the keyspace, undefined the one key.
function keyRange(key, end) {
  const body = { key: toBase64(key.length ? key : new Uint8Array([0])) };
  if (end === null) body.range_end = toBase64(new Uint8Array([0]));
  else if (end !== undefined) body.range_end = toBase64(end);
  return body;
}

/// Range over [key, end) (end null: to the end of the keyspace; undefined:
/// the one key), at `revision` (0: the latest); kvs with byte-array keys
/// and values and numeric revisions.
export async function range({ key, end = undefined, keysOnly = false, limit = 0, revision = 0 }) {
  const body = keyRange(key, end);
  if (keysOnly) body.keys_only = true;
  if (limit) body.limit = String(limit);
  if (revision) body.revision = String(revision);
  const answer = await call("/v3/kv/range", body);
  return {
    more: Boolean(answer.more),
    revision: Number(answer.header?.revision || 0),
    kvs: (answer.kvs || []).map(kvFromJson),
  };
}

/// Space per prefix (Hark's `/v3/hark/du`): `prefix` (empty or ending in
/// "/") and the prefixes one level below it, as a Map from each prefix in
/// base64 to `{ keys, bytes, revisions, historyBytes }`. Null when the
/// member keeps no sizes that deep.
export async function prefixSizes(prefix) {
  let answer;
  try {
    answer = await call("/v3/hark/du", { prefix: toBase64(prefix), depth: 1 });
  } catch (e) {
    if (e.needsLogin) throw e;
    return null;
  }
  const sizes = new Map();
  for (const p of answer.prefixes || []) {
    sizes.set(p.prefix || "", {
      keys: Number(p.keys || 0),
      bytes: Number(p.bytes || 0),
      revisions: Number(p.revisions || 0),
      historyBytes: Number(p.history_bytes || 0),
    });
  }
  return sizes;
}

/// One compare-and-write: `modRevision` is the key's mod revision the
/// write was based on (0: the key must not exist). `write` is
/// `{ put: bytes }` or `{ remove: true }`; `keepLease` keeps the key's
/// lease on a put. Answers `{ ok, revision, current }`, `current` being the
/// key as it is now when the compare failed (null if it does not exist).
export async function writeIf(key, modRevision, write, { keepLease = false } = {}) {
  const k = toBase64(key);
  const op = write.remove
    ? { request_delete_range: { key: k } }
    : { request_put: { key: k, value: toBase64(write.put), ignore_lease: keepLease || undefined } };
  // A key that does not exist has mod revision 0, so one compare covers
  // both "unchanged since read" and "still absent".
  const answer = await call("/v3/kv/txn", {
    compare: [{ key: k, result: "EQUAL", target: "MOD", mod_revision: String(modRevision) }],
    success: [op],
    failure: [{ request_range: { key: k } }],
  });
  const kvs = answer.succeeded ? [] : answer.responses?.[0]?.response_range?.kvs || [];
  return {
    ok: Boolean(answer.succeeded),
    revision: Number(answer.header?.revision || 0),
    current: kvs.length ? kvFromJson(kvs[0]) : null,
  };
}

/// One watch over the gateway's streaming `/v3/watch`: yields each watch
/// response as `{ created, canceled, cancelReason, compactRevision,
/// revision, events }` until the stream ends or `signal` aborts it.
export async function* watch({ key, end = undefined, startRevision = 0, prevKv = false, signal }) {
  const create = keyRange(key, end);
  if (startRevision) create.start_revision = String(startRevision);
  if (prevKv) create.prev_kv = true;
  const response = await fetch("/v3/watch", {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ create_request: create }),
    signal,
  });
  if (!response.ok) {
    const answer = await response.json().catch(() => ({}));
    throw new GatewayError(answer.message || `watch: HTTP ${response.status}`, answer.code);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        const message = JSON.parse(line);
        if (message.error) throw new GatewayError(message.error.message, message.error.grpc_code);
        const r = message.result || {};
        yield {
          created: Boolean(r.created),
          canceled: Boolean(r.canceled),
          cancelReason: r.cancel_reason || "",
          compactRevision: Number(r.compact_revision || 0),
          revision: Number(r.header?.revision || 0),
          events: (r.events || []).map((e) => ({
            // PUT is the enum's zero, which JSON leaves out.
            type: e.type === "DELETE" ? "DELETE" : "PUT",
            kv: kvFromJson(e.kv || {}),
            prevKv: e.prev_kv ? kvFromJson(e.prev_kv) : null,
          })),
        };
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/// This member's status (etcd's Maintenance.Status), as the gateway gives it.
export const status = () => call("/v3/maintenance/status", {});
// Served by this member, so the page shows the cluster even without a leader.
export const members = () => call("/v3/cluster/member/list", { linearizable: false });
export const alarms = () => call("/v3/maintenance/alarm", { action: "GET" });
export const leases = () => call("/v3/lease/leases", {});
export const leaseTimeToLive = (id) => call("/v3/lease/timetolive", { ID: id, keys: true });

/// The watch streams with the deepest queues (Hark's own endpoint).
export async function watchStreams() {
  const response = await fetch("/debug/watch/streams", { headers: headers() });
  if (!response.ok) {
    const reason = (await response.text()).trim();
    throw new GatewayError(reason || `/debug/watch/streams: HTTP ${response.status}`);
  }
  return response.json();
}

/// Logs in; the token is kept for this tab's session.
export async function authenticate(name, password) {
  const answer = await call("/v3/auth/authenticate", { name, password });
  session.token = answer.token;
}

/// This member's Prometheus metrics, as `{ name: value }` for the series
/// without labels (and the sum over labels for those with).
export async function metrics() {
  const response = await fetch("/metrics", { headers: headers() });
  if (!response.ok) throw new GatewayError(`/metrics: HTTP ${response.status}`);
  const out = {};
  for (const line of (await response.text()).split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match) out[match[1]] = (out[match[1]] || 0) + Number(match[2]);
  }
  return out;
}

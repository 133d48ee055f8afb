// The console's entry point: one page per route in the location's hash.

import { KeysPage, fromLink } from "./keys.js";

const status = document.getElementById("status");
const page = document.getElementById("page");

function fail(error) {
  status.textContent = String(error.message || error);
  status.className = "error";
}

/// `#/keys/<key>` shows the key's level and its value; `#/keys/<prefix/>`
/// (ending in "/") lists that level; `#/keys` the whole keyspace.
async function route() {
  status.className = "";
  const target = fromLink(location.hash);
  const prefixLength = target.lastIndexOf(0x2f) + 1;
  const prefix = target.slice(0, prefixLength);
  const key = prefixLength < target.length ? target : null;
  await new KeysPage(page, status).show(prefix, key);
}

window.addEventListener("hashchange", () => route().catch(fail));
window.addEventListener("unhandledrejection", (event) => fail(event.reason));
route().catch(fail);

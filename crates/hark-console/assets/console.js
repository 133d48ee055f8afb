// The console's entry point: one page per route in the location's hash.
// `<main>` carries `data-route` (the address drawn) and `data-state`
// (loading, ready or error), which tests and assistive tools can follow.

import { KeysPage } from "./keys.js";
import { WatchPage } from "./watch.js";
import { HealthPage } from "./health.js";
import { authenticate, session } from "./gateway.js";
import { el, parseLink } from "./dom.js";

const status = document.getElementById("status");
const page = document.getElementById("page");
const logout = document.getElementById("logout");
let current = null;
/// Routes started; a route that finishes after a later one began is stale.
let routes = 0;

function fail(error) {
  if (error?.needsLogin) {
    login(error.message);
    return;
  }
  status.textContent = String(error?.message || error);
  status.className = "error";
  page.dataset.state = "error";
}

/// Asks for a user and password (etcd's auth); the token etcd gives back
/// is kept for this tab's session only.
function login(reason) {
  current?.stop?.();
  current = null;
  const name = el("input", { name: "user", autocomplete: "username", "aria-label": "User" });
  const password = el("input", { name: "password", type: "password", autocomplete: "current-password", "aria-label": "Password" });
  const message = el("p", { className: "conflict", role: "alert", text: session.token ? "Your session ended; log in again." : "This cluster has authentication on." });
  const form = el("form", { className: "login" },
    el("h2", { text: "Log in" }), message,
    el("label", { text: "User " }, name),
    el("label", { text: "Password " }, password),
    el("button", { type: "submit", text: "Log in" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await authenticate(name.value, password.value);
      password.value = "";
      go();
    } catch (error) {
      message.textContent = String(error.message || error);
    }
  });
  session.token = null;
  page.replaceChildren(form);
  page.dataset.state = "login";
  page.dataset.route = location.hash;
  status.textContent = "";
  status.title = reason;
  logout.hidden = true;
  name.focus();
}

/// `#/keys/<key>` shows the key's level and its value; `#/keys/<prefix/>`
/// (ending in "/") lists that level; `#/watch/<key>?prefix=1&from=N` a live
/// watch; `#/health` the cluster and the watch engine.
function go() {
  const mine = ++routes;
  // A route overtaken by a later one reports nothing.
  route(mine).catch((error) => mine === routes && fail(error));
}

async function route(mine) {
  current?.stop?.();
  status.textContent = "";
  status.className = "";
  page.dataset.state = "loading";
  page.dataset.route = location.hash;
  const { page: name, key, query } = parseLink(location.hash);
  for (const link of document.querySelectorAll("header nav a")) {
    if (link.dataset.page === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  logout.hidden = !session.token;
  if (name === "watch") {
    current = new WatchPage(page, fail);
    await current.show(key, query.get("prefix") === "1", Number(query.get("from") || 0));
  } else if (name === "health") {
    current = new HealthPage(page);
    await current.show();
  } else {
    const prefixLength = key.lastIndexOf(0x2f) + 1;
    current = new KeysPage(page, status);
    await current.show(key.slice(0, prefixLength), prefixLength < key.length ? key : null);
  }
  // A later route may have started meanwhile; only the latest says ready.
  if (mine === routes && page.dataset.state === "loading") page.dataset.state = "ready";
}

logout.addEventListener("click", () => {
  session.token = null;
  go();
});
window.addEventListener("hashchange", go);
window.addEventListener("unhandledrejection", (event) => fail(event.reason));
go();

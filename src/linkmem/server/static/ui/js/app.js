// The explorer's shell: the API key, the scope, and a hash router over the views.
// Routes: #/search, #/memories, #/memory/<id>, #/entities, #/entity/<id or name>, each
// followed by ?user_id=…&agent_id=…&run_id=… and the view's own parameters.

import { ApiError, get, key } from "./api.js";
import { askKey } from "./dialog.js";
import { formValues, h } from "./dom.js";
import * as entities from "./views/entities.js";
import * as entity from "./views/entity.js";
import * as memories from "./views/memories.js";
import * as memory from "./views/memory.js";
import * as search from "./views/search.js";

const VIEWS = { search, memories, memory, entities, entity };
const SECTION = { memory: "memories", entity: "entities" }; // the nav tab of a detail view
const SCOPE_IDS = ["user_id", "agent_id", "run_id"];
const SCOPE_KEY = "linkmem.scope";
const session = { who: null, weights: null, renders: 0 };
/** Read by the tests and by anyone curious: when the first view had drawn its data. */
export const timings = (window.linkmemTimings = {});

/** The hash of a view: link("entity", id, {offset: 20}) keeps the current scope. */
export function link(view, arg, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...currentScope(), ...params })) {
    if (value !== undefined && value !== null && value !== "") query.set(name, value);
  }
  const path = arg === undefined ? view : `${view}/${encodeURIComponent(arg)}`;
  const text = query.toString();
  return `#/${path}${text ? `?${text}` : ""}`;
}

export function navigate(view, arg, params) {
  location.hash = link(view, arg, params);
}

function parseHash() {
  const [path, text = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [view, ...rest] = path.split("/");
  return {
    view: VIEWS[view] ? view : "search",
    arg: rest.length ? decodeURIComponent(rest.join("/")) : undefined,
    params: Object.fromEntries(new URLSearchParams(text)),
  };
}

/** The scope of the page: the hash's ids, else the last one used; a tenant key's ids win. */
function currentScope() {
  const { params } = parseHash();
  let scope = Object.fromEntries(SCOPE_IDS.filter((n) => params[n]).map((n) => [n, params[n]]));
  if (!Object.keys(scope).length) scope = JSON.parse(sessionStorage.getItem(SCOPE_KEY) || "{}");
  const who = session.who || {};
  for (const name of ["user_id", "agent_id"]) if (who[name]) scope[name] = who[name];
  return scope;
}

function showScope(scope) {
  const form = document.getElementById("scope");
  for (const name of SCOPE_IDS) {
    form.elements[name].value = scope[name] || "";
    form.elements[name].disabled = Boolean(session.who && session.who[name]);
  }
  sessionStorage.setItem(SCOPE_KEY, JSON.stringify(scope));
}

function markTabs(view) {
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.view === (SECTION[view] || view));
    a.href = link(a.dataset.view);
  }
}

async function route() {
  const { view, arg, params } = parseHash();
  const scope = currentScope();
  showScope(scope);
  markTabs(view);
  // Each render draws into its own section, so a slow one never lands on a newer view.
  const box = h("section", { class: `view view-${view}` });
  document.getElementById("view").replaceChildren(box);
  const render = ++session.renders;
  const started = performance.now();
  const ctx = {
    arg, params, scope, link, navigate,
    who: session.who,
    weights: session.weights,
    canWrite: session.who.role !== "read",
    refresh: route,
  };
  try {
    if (!Object.keys(scope).length && view !== "memory") {
      const hint = "Choose a scope above: a user_id, an agent_id or a run_id.";
      box.append(h("p", { class: "hint" }, hint));
    } else {
      await VIEWS[view].render(box, ctx);
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      return signIn("The key was refused: enter another.");
    }
    box.append(h("p", { class: "error" }, error.message));
  }
  if (render !== session.renders) return;
  box.dataset.ready = "true";
  timings.last = { view, ms: performance.now() - started };
  if (timings.firstRender === undefined) timings.firstRender = performance.now();
}

/** Learn who the key belongs to (asking for a key until one works), then show the view. */
async function signIn(message) {
  if (message) key.forget();
  for (;;) {
    try {
      session.who = await get("/v1/whoami");
      session.weights = await get("/v1/weights");
      break;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) {
        const shown = h("p", { class: "error" }, error.message);
        document.getElementById("view").replaceChildren(shown);
        return;
      }
      const refused = key.get() ? "That key was refused; enter another." : null;
      const typed = await askKey(refused || message || "This server needs an API key.");
      if (typed) key.set(typed);
    }
  }
  const who = session.who;
  const reach = who.tenant ? ` · ${who.tenant}` : " · any scope";
  document.getElementById("who").textContent = who.open
    ? "open store (no keys)"
    : `${who.role} key${reach}`;
  document.getElementById("forget").hidden = who.open;
  await route();
}

document.getElementById("scope").addEventListener("submit", (event) => {
  event.preventDefault();
  const scope = formValues(event.target);
  sessionStorage.setItem(SCOPE_KEY, JSON.stringify(scope));
  const query = new URLSearchParams(scope).toString();
  const { view } = parseHash();
  const hash = `#/${SECTION[view] || view}${query ? `?${query}` : ""}`;
  if (location.hash === hash) route();
  else location.hash = hash;
});
document.getElementById("forget").addEventListener("click", () => {
  key.forget();
  location.reload();
});
window.addEventListener("hashchange", () => {
  if (session.who) route();
});
signIn();

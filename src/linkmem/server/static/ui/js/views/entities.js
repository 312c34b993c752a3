// A scope's entities with kind and link count: sorted by the server (links, name, recent),
// a page at a time; a name or kind filter searches the scope's first 10,000. Write and
// admin keys may tick two entities and merge them, after confirming.

import { get, post } from "../api.js";
import { confirmAction } from "../dialog.js";
import { fmt, formValues, h } from "../dom.js";
import { pager } from "../pager.js";

const PAGE = 50;
const ALL = 10000;
const KINDS = ["PROPER", "TOPIC", "QUOTED", "IDENTIFIER"];
const ORDERS = { links: "most links", text: "name", recent: "most recent" };
const cache = new Map();
let notice = "";

/** Every entity of the scope (up to 10,000), fetched once per scope and order. */
async function everything(scope, order) {
  const id = JSON.stringify([scope, order]);
  if (!cache.has(id)) {
    const answer = get("/v1/entities", { ...scope, order, limit: ALL });
    cache.set(id, answer.then((r) => r.results));
  }
  try {
    return await cache.get(id);
  } catch (error) {
    cache.delete(id);
    throw error;
  }
}

/** Forget what was fetched: call after a merge or a rename. */
export function forget() {
  cache.clear();
}

function filterForm(ctx, order) {
  const { q = "", kind = "" } = ctx.params;
  const option = (value, label, selected) => h("option", { value, selected }, label);
  const form = h("form", { class: "toolbar" },
    h("input", { name: "q", value: q, type: "search", placeholder: "name contains…",
      "aria-label": "name filter" }),
    h("select", { name: "kind", "aria-label": "kind" }, option("", "any kind", false),
      KINDS.map((k) => option(k, k, k === kind))),
    h("select", { name: "order", "aria-label": "order" },
      Object.entries(ORDERS).map(([k, label]) => option(k, label, k === order))),
    h("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.navigate("entities", undefined, formValues(form));
  });
  return form;
}

/** One page of rows: from the server, or (with a filter) from the scope's first 10,000. */
async function loadPage(ctx, order, offset) {
  const { q, kind } = ctx.params;
  if (!q && !kind) {
    const query = { ...ctx.scope, order, limit: PAGE + 1, offset };
    const { results } = await get("/v1/entities", query);
    return { rows: results.slice(0, PAGE), hasMore: results.length > PAGE };
  }
  const all = await everything(ctx.scope, order);
  const needle = (q || "").toLowerCase();
  const matches = (e) => (!kind || e.kind === kind) && e.entity.toLowerCase().includes(needle);
  const found = all.filter(matches);
  return {
    rows: found.slice(offset, offset + PAGE),
    total: found.length,
    hasMore: offset + PAGE < found.length,
    capped: all.length >= ALL,
  };
}

async function merge(picked, ctx) {
  const [a, b] = picked;
  const [keep, drop] = b.link_count > a.link_count ? [b, a] : [a, b];
  const choice = (e, checked) => h("label", { class: "choice" },
    h("input", { type: "radio", name: "keep", value: e.id, checked }),
    ` keep ${e.entity} (${fmt(e.link_count)} links)`);
  const body = h("div", {},
    h("p", {}, `Merge “${a.entity}” and “${b.entity}”: every link of the dropped one moves `
      + "to the kept one, and the dropped one is deleted."),
    choice(keep, true), choice(drop, false));
  if (!(await confirmAction("Merge entities", body, "Merge"))) return;
  const keepId = body.querySelector("input[name=keep]:checked").value;
  const [kept, dropped] = keepId === keep.id ? [keep, drop] : [drop, keep];
  await post("/v1/entities/merge", { keep: kept.id, drop: dropped.id, ...ctx.scope });
  notice = `Merged “${dropped.entity}” into “${kept.entity}”.`;
  forget();
  ctx.refresh();
}

function table(rows, ctx, picked, button) {
  const sortBy = (order, label) => {
    const href = ctx.link("entities", undefined, { ...ctx.params, order, offset: undefined });
    return h("a", { href }, label);
  };
  const tick = (e) => h("input", {
    type: "checkbox",
    "aria-label": `select ${e.entity}`,
    onchange: (event) => {
      if (event.target.checked) picked.push(e);
      else picked.splice(picked.indexOf(e), 1);
      button.disabled = picked.length !== 2;
    },
  });
  const row = (e) => h("tr", { dataset: { entity: e.entity, id: e.id } },
    ctx.canWrite ? h("td", { class: "tick" }, tick(e)) : null,
    h("td", {}, h("a", { href: ctx.link("entity", e.id) }, e.entity)),
    h("td", {}, e.kind),
    h("td", { class: "num" }, fmt(e.link_count)));
  return h("table", { class: "list entities" },
    h("thead", {}, h("tr", {},
      ctx.canWrite ? h("th", { class: "tick" }) : null,
      h("th", {}, sortBy("text", "entity")),
      h("th", {}, "kind"),
      h("th", { class: "num" }, sortBy("links", "links")))),
    h("tbody", {}, rows.map(row)));
}

export async function render(box, ctx) {
  const order = ORDERS[ctx.params.order] ? ctx.params.order : "links";
  const offset = Number(ctx.params.offset || 0);
  const { rows, total, hasMore, capped } = await loadPage(ctx, order, offset);
  const picked = [];
  const failed = (error) => box.append(h("p", { class: "error" }, error.message));
  const button = h("button", {
    type: "button", class: "merge", disabled: true,
    onclick: () => merge(picked, ctx).catch(failed),
  }, "Merge the two ticked…");
  box.append(filterForm(ctx, order));
  if (notice) box.append(h("p", { class: "notice" }, notice));
  notice = "";
  const paging = { offset, size: PAGE, shown: rows.length, total, hasMore };
  box.append(
    h("div", { class: "toolbar" }, pager(ctx, "entities", paging), ctx.canWrite ? button : null),
    table(rows, ctx, picked, button));
  if (capped) {
    const hint = `The filter searched the first ${fmt(ALL)} entities of this scope.`;
    box.append(h("p", { class: "hint" }, hint));
  }
  if (!rows.length) box.append(h("p", { class: "hint" }, "No entity here."));
}

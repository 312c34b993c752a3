// One memory: its text, scope and metadata, the entities linked to it and its history.

import { get } from "../api.js";
import { fmt, h, when } from "../dom.js";

function facts(record) {
  const rows = [
    ["id", record.id], ["user_id", record.user_id], ["agent_id", record.agent_id],
    ["run_id", record.run_id], ["role", record.role], ["created", when(record.created_at)],
    ["updated", when(record.updated_at)],
  ];
  const pair = ([name, value]) => [h("dt", {}, name), h("dd", {}, value)];
  return h("dl", { class: "facts" }, rows.filter(([, value]) => value).map(pair));
}

function chip(entity, ctx) {
  return h("a", { class: "chip", href: ctx.link("entity", entity.id) }, entity.entity,
    h("small", {}, ` ${entity.kind} · ${fmt(entity.link_count)}`
      + (entity.link === "inherited" ? " · referred back to" : "")));
}

function historyTable(events) {
  const row = (e) => h("tr", {},
    h("td", { class: "nowrap" }, when(e.created_at)), h("td", {}, e.event),
    h("td", {}, e.old_memory || ""), h("td", {}, e.new_memory || ""));
  return h("table", { class: "list history" },
    h("thead", {}, h("tr", {}, ["when", "event", "old", "new"].map((c) => h("th", {}, c)))),
    h("tbody", {}, events.map(row)));
}

export async function render(box, ctx) {
  const id = encodeURIComponent(ctx.arg);
  const [record, linked, history] = await Promise.all([
    get(`/v1/memories/${id}`, ctx.scope),
    get(`/v1/memories/${id}/entities`, ctx.scope),
    get(`/v1/memories/${id}/history`, ctx.scope),
  ]);
  box.append(
    h("p", { class: "back" }, h("a", { href: ctx.link("memories") }, "← memories")),
    h("blockquote", { class: "memory-text" }, record.memory),
    facts(record),
    h("h3", {}, "Metadata"),
    h("pre", {}, JSON.stringify(record.metadata || {}, null, 2)),
    h("h3", {}, `Entities (${linked.results.length})`),
    h("p", { class: "chips" }, linked.results.map((e) => chip(e, ctx))),
    h("h3", {}, "History"),
    historyTable(history.results));
}

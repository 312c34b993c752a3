// One entity: its memories, and its co-occurrence neighbourhood as a graph (the top
// neighbours only, however many it has). Write and admin keys may rename it or merge
// another entity into it, after confirming.

import { get, post } from "../api.js";
import { confirmAction } from "../dialog.js";
import { fmt, h, when } from "../dom.js";
import { drawGraph } from "../graph.js";
import { forget } from "./entities.js";

const NEIGHBOURS = 12;
const SHOWN = 50;

/** The centre, its top neighbours, and the edges among all of them (shared memories). */
async function neighbourhood(entity, scope) {
  const related = await get("/v1/entities/related", { entity, ...scope, limit: NEIGHBOURS });
  const around = related.results;
  const nodes = [related.entity, ...around].map((e) => ({
    id: e.id, label: e.entity, links: e.link_count,
  }));
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const edges = around.map((e) => ({ a: 0, b: index.get(e.id), weight: e.shared_memories }));
  // Edges between neighbours: each one's own neighbours, kept when they are in the picture.
  const theirs = await Promise.all(around.map((e) =>
    get("/v1/entities/related", { entity: e.id, ...scope, limit: 50 })));
  theirs.forEach((answer, k) => {
    for (const other of answer.results) {
      const j = index.get(other.id);
      if (j > k + 1) edges.push({ a: k + 1, b: j, weight: other.shared_memories });
    }
  });
  return { centre: related.entity, nodes, edges };
}

async function rename(centre, ctx) {
  const input = h("input", { name: "new_name", value: centre.entity, required: true, size: 30,
    "aria-label": "new name" });
  const body = h("div", {},
    h("p", {}, `Rename “${centre.entity}”; if the new name is another entity of this scope, `
      + "the two are merged."),
    h("p", {}, input));
  if (!(await confirmAction("Rename entity", body, "Rename"))) return;
  const request = { entity: centre.id, new_name: input.value.trim(), ...ctx.scope };
  const answer = await post("/v1/entities/rename", request);
  forget();
  ctx.navigate("entity", answer.results[0].id);
}

async function mergeInto(centre, nodes, ctx) {
  const input = h("input", { name: "drop", list: "neighbours", required: true, size: 30,
    "aria-label": "entity to merge" });
  const names = h("datalist", { id: "neighbours" },
    nodes.slice(1).map((n) => h("option", { value: n.label })));
  const body = h("div", {},
    h("p", {}, `Merge another entity into “${centre.entity}”: its links move here and it is `
      + "deleted."),
    h("p", {}, input, names));
  if (!(await confirmAction("Merge into this entity", body, "Merge"))) return;
  await post("/v1/entities/merge", { keep: centre.id, drop: input.value.trim(), ...ctx.scope });
  forget();
  ctx.refresh();
}

function actions(centre, nodes, ctx, box) {
  if (!ctx.canWrite) return null;
  const failed = (error) => box.append(h("p", { class: "error" }, error.message));
  const button = (className, label, action) =>
    h("button", { type: "button", class: className, onclick: () => action().catch(failed) }, label);
  return h("p", { class: "actions" },
    button("rename", "Rename…", () => rename(centre, ctx)),
    button("merge-into", "Merge another into this…", () => mergeInto(centre, nodes, ctx)));
}

/** The first 50 memories, and a button for the rest. */
function memoryList(records, ctx) {
  const item = (r) => h("li", { dataset: { id: r.id } },
    h("span", { class: "when" }, when(r.created_at)), " ",
    h("a", { href: ctx.link("memory", r.id) }, r.memory));
  const list = h("ul", { class: "entity-memories" }, records.slice(0, SHOWN).map(item));
  if (records.length <= SHOWN) return [list];
  const more = h("button", { type: "button", onclick: () => {
    list.replaceChildren(...records.map(item));
    more.remove();
  } }, `show all ${fmt(records.length)}`);
  return [list, more];
}

export async function render(box, ctx) {
  const [linked, graph] = await Promise.all([
    get("/v1/entities/memories", { entity: ctx.arg, ...ctx.scope }),
    neighbourhood(ctx.arg, ctx.scope),
  ]);
  const { centre, nodes, edges } = graph;
  const open = (node) => ctx.navigate("entity", node.id);
  const about = ` ${centre.kind} · ${fmt(centre.link_count)} links`;
  const heading = nodes.length > 1
    ? `Neighbourhood (top ${nodes.length - 1} by shared memories)`
    : "No entity shares a memory with this one";
  box.append(
    h("p", { class: "back" }, h("a", { href: ctx.link("entities") }, "← entities")),
    h("h2", { class: "entity-name" }, centre.entity, h("small", {}, about)),
    actions(centre, nodes, ctx, box) || "",
    h("h3", {}, heading),
    nodes.length > 1 ? drawGraph(nodes, edges, open) : "",
    h("h3", {}, `Memories (${fmt(linked.results.length)})`),
    ...memoryList(linked.results, ctx));
}

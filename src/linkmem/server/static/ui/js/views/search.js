// Search: a query in the current scope, each result with its score parts drawn as a
// stacked bar and the entities that boosted it or led the hop to it.

import { post } from "../api.js";
import { legend, scoreBar } from "../bars.js";
import { fmt, formValues, h } from "../dom.js";

const BAR_WIDTH = 260;

function searchForm(ctx) {
  const { q = "", top_k = "10", filters = "" } = ctx.params;
  const form = h("form", { class: "toolbar", role: "search" },
    h("input", { name: "q", type: "search", value: q, size: 40, autofocus: true,
      placeholder: "Ask what the agent remembers…", "aria-label": "query" }),
    h("label", {}, "top ", h("select", { name: "top_k" },
      ["5", "10", "20", "50"].map((n) => h("option", { value: n, selected: n === top_k }, n)))),
    h("input", { name: "filters", value: filters, placeholder: 'filters, e.g. {"topic": "pets"}',
      size: 28, "aria-label": "filters" }),
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.navigate("search", undefined, formValues(form));
  });
  return form;
}

function why(details, ctx) {
  const notes = [];
  if (details.entity) {
    notes.push(h("span", { class: "why why-entity" }, "boost from ",
      h("a", { href: ctx.link("entity", details.entity) }, details.entity)));
  }
  if (details.hop_entity) {
    notes.push(h("span", { class: "why why-hop" }, "hop via ",
      h("a", { href: ctx.link("entity", details.hop_entity) }, details.hop_entity)));
  }
  return notes;
}

function resultItem(hit, scale, ctx) {
  const details = hit.score_details;
  return h("li", { class: "result", dataset: { id: hit.id } },
    h("div", { class: "score" }, h("b", {}, fmt(hit.score)), scoreBar(details, ctx.weights, scale)),
    h("div", { class: "body" },
      h("a", { class: "text", href: ctx.link("memory", hit.id) }, hit.memory),
      h("div", { class: "meta" },
        `dense ${fmt(details.dense)} · BM25 ${fmt(details.bm25)}`,
        ` (raw ${fmt(details.bm25_raw, 2)})`,
        why(details, ctx))));
}

export async function render(box, ctx) {
  box.append(searchForm(ctx));
  const query = (ctx.params.q || "").trim();
  if (!query) {
    const hint = "Search this scope; each result shows why it ranked where it did.";
    box.append(h("p", { class: "hint" }, hint));
    return;
  }
  const body = { query, ...ctx.scope, top_k: Number(ctx.params.top_k || 10), explain: true };
  if (ctx.params.filters) body.filters = JSON.parse(ctx.params.filters);
  const { results } = await post("/v1/memories/search", body);
  if (!results.length) {
    box.append(h("p", { class: "hint" }, "No memory in this scope matches."));
    return;
  }
  const scale = BAR_WIDTH / Math.max(...results.map((r) => r.score), 1e-6);
  const items = results.map((hit) => resultItem(hit, scale, ctx));
  box.append(legend(), h("ol", { class: "results" }, items));
}

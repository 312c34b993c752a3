// A scope's memories, newest first, a page at a time, with optional metadata filters.

import { get } from "../api.js";
import { formValues, h, when } from "../dom.js";
import { pager } from "../pager.js";

const PAGE = 25;
const COLUMNS = ["created", "memory", "role", "metadata"];

function filterForm(ctx) {
  const form = h("form", { class: "toolbar" },
    h("input", { name: "filters", value: ctx.params.filters || "", size: 40,
      placeholder: 'metadata filters, e.g. {"topic": "pets"}', "aria-label": "filters" }),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.navigate("memories", undefined, formValues(form));
  });
  return form;
}

function row(record, ctx) {
  const meta = Object.keys(record.metadata || {}).length ? JSON.stringify(record.metadata) : "";
  return h("tr", { dataset: { id: record.id } },
    h("td", { class: "nowrap" }, when(record.created_at)),
    h("td", {}, h("a", { href: ctx.link("memory", record.id) }, record.memory)),
    h("td", {}, record.role || ""),
    h("td", { class: "meta" }, meta));
}

export async function render(box, ctx) {
  const offset = Number(ctx.params.offset || 0);
  const filters = ctx.params.filters;
  const [page, count] = await Promise.all([
    get("/v1/memories", { ...ctx.scope, filters, limit: PAGE + 1, offset }),
    filters ? null : get("/v1/memories/count", ctx.scope),
  ]);
  const records = page.results.slice(0, PAGE);
  const hasMore = page.results.length > PAGE;
  const total = count ? count.count : undefined;
  box.append(filterForm(ctx),
    pager(ctx, "memories", { offset, size: PAGE, shown: records.length, total, hasMore }),
    h("table", { class: "list memories" },
      h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", {}, c)))),
      h("tbody", {}, records.map((r) => row(r, ctx)))));
  if (!records.length) box.append(h("p", { class: "hint" }, "No memory here."));
}

// "← previous  1–25 of 10,000  next →" for the list views; the offset lives in the hash.

import { fmt, h } from "./dom.js";

export function pager(ctx, view, { offset, size, shown, total, hasMore }) {
  const go = (to) => ctx.link(view, undefined, { ...ctx.params, offset: to || undefined });
  const of = total === undefined ? "" : ` of ${fmt(total)}`;
  const previous = h("a", { href: go(Math.max(0, offset - size)), rel: "prev" }, "← previous");
  const next = h("a", { href: go(offset + size), rel: "next" }, "next →");
  return h("p", { class: "pager" },
    offset > 0 ? previous : null,
    h("span", {}, `${fmt(shown ? offset + 1 : 0)}–${fmt(offset + shown)}${of}`),
    hasMore ? next : null);
}

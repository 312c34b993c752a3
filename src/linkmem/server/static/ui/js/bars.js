// A search result's score as a stacked bar: what dense, BM25, the entity boost, the entity
// hop and the time signal each added. The parts are the fused score's terms (see
// linkmem.rank.fusion and linkmem.rank.time_boost):
// score = (w_dense * calibrated(dense) + w_bm25 * bm25 + entity_boost + hop_boost
//          + time_boost) / max_score,
// calibrated(c) = max(0, 1 - (1 - c) * cosine_scale): the embedder's cosines on the scale the
// weights assume (linkmem.rank.calibration; 1 for the default embedder).

import { fmt, h, s } from "./dom.js";

export const PARTS = [
  { name: "dense", label: "dense", value: (d, w) => w.dense * calibrated(d.dense, w.cosine_scale) },
  { name: "bm25", label: "BM25", value: (d, w) => w.bm25 * d.bm25 },
  { name: "entity", label: "entity boost", value: (d) => d.entity_boost },
  { name: "hop", label: "hop", value: (d) => d.hop_boost },
  { name: "time", label: "time", value: (d) => d.time_boost || 0 },
];

function calibrated(cosine, scale) {
  return scale === 1 ? Math.max(cosine, 0) : Math.max(0, 1 - (1 - cosine) * scale);
}

/** Each part's share of the score (they add up to the score unless it was capped at 1). */
export function scoreParts(details, weights) {
  return PARTS.map((part) => ({
    ...part,
    value: part.value(details, weights) / weights.max_score,
  }));
}

/** The bar of one result; ``scale``: pixels per score unit (shared by a result list). */
export function scoreBar(details, weights, scale, height = 14) {
  const parts = scoreParts(details, weights);
  const total = parts.reduce((sum, p) => sum + p.value, 0);
  const shrink = total > details.score && total > 0 ? details.score / total : 1;
  let x = 0;
  const rects = [];
  for (const part of parts) {
    const width = part.value * shrink * scale;
    if (width <= 0) continue;
    rects.push(s("rect", { class: `part-${part.name}`, x, y: 0, width, height },
      s("title", {}, `${part.label}: +${fmt(part.value)}`)));
    x += width;
  }
  const width = Math.max(1, Math.ceil(x));
  return s("svg", { class: "bar", width, height, viewBox: `0 0 ${width} ${height}`,
    role: "img", "aria-label": `score ${fmt(details.score)}` }, rects);
}

/** The colours of the parts, for the top of a result list. */
export function legend() {
  return h("p", { class: "legend" }, PARTS.map((part) =>
    h("span", {}, s("svg", { width: 12, height: 12 },
      s("rect", { class: `part-${part.name}`, width: 12, height: 12 })), ` ${part.label}`)));
}

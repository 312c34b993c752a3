// An entity's co-occurrence neighbourhood as a small force-directed graph: nodes are
// entities (radius by link count), edges join entities that share memories (width by how
// many). The layout is deterministic: the same data always draws the same picture.

import { s } from "./dom.js";

/**
 * Positions for ``nodes`` ({id, links}), the first pinned at the centre, given ``edges``
 * ({a, b, weight}, a and b node indexes). Plain spring embedding: every pair repels,
 * edges pull, a weak gravity keeps the picture on the canvas.
 */
export function layout(nodes, edges, width, height, rounds = 300) {
  const cx = width / 2;
  const cy = height / 2;
  const ideal = Math.min(width, height) / 2.6;
  const pos = nodes.map((_, i) => {
    if (i === 0) return { x: cx, y: cy };
    const angle = (2 * Math.PI * i) / (nodes.length - 1);
    return { x: cx + ideal * Math.cos(angle), y: cy + ideal * Math.sin(angle) };
  });
  for (let round = 0; round < rounds; round++) {
    const step = 0.1 * (1 - round / rounds) + 0.005;
    const force = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < pos.length; i++) {
      for (let j = i + 1; j < pos.length; j++) {
        const dx = pos[i].x - pos[j].x || 0.01;
        const dy = pos[i].y - pos[j].y || 0.01;
        const d2 = dx * dx + dy * dy;
        const push = (ideal * ideal) / d2;
        force[i].x += dx * push; force[i].y += dy * push;
        force[j].x -= dx * push; force[j].y -= dy * push;
      }
    }
    for (const { a, b } of edges) {
      const dx = pos[b].x - pos[a].x;
      const dy = pos[b].y - pos[a].y;
      const pull = Math.hypot(dx, dy) / ideal;
      force[a].x += dx * pull; force[a].y += dy * pull;
      force[b].x -= dx * pull; force[b].y -= dy * pull;
    }
    pos.forEach((p, i) => {
      if (i === 0) return;
      const fx = force[i].x + (cx - p.x) * 0.05;
      const fy = force[i].y + (cy - p.y) * 0.05;
      const length = Math.hypot(fx, fy) || 1;
      const move = Math.min(length * step, ideal * 0.2);
      p.x = clamp(p.x + (fx / length) * move, 60, width - 60);
      p.y = clamp(p.y + (fy / length) * move, 30, height - 45);
    });
  }
  return pos;
}

function clamp(value, low, high) {
  return Math.max(low, Math.min(high, value));
}

/** The SVG of the graph; ``open(node)`` is called when a node is clicked. */
export function drawGraph(nodes, edges, open, width = 720, height = 420) {
  const pos = layout(nodes, edges, width, height);
  const maxLinks = Math.max(1, ...nodes.map((n) => n.links));
  const maxWeight = Math.max(1, ...edges.map((e) => e.weight));
  const lines = edges.map((e) => s("line", {
    class: "edge", x1: pos[e.a].x, y1: pos[e.a].y, x2: pos[e.b].x, y2: pos[e.b].y,
    "stroke-width": 1 + (5 * e.weight) / maxWeight,
  }, s("title", {}, `${nodes[e.a].label} – ${nodes[e.b].label}: ${e.weight} shared`)));
  const circles = nodes.map((node, i) => {
    const r = 7 + 18 * Math.sqrt(node.links / maxLinks);
    const group = s("g", {
      class: i === 0 ? "node centre" : "node", tabindex: 0, role: "link",
      dataset: { entity: node.label, id: node.id },
      transform: `translate(${pos[i].x.toFixed(1)},${pos[i].y.toFixed(1)})`,
    }, s("circle", { r }), s("text", { y: r + 13 }, node.label),
    s("title", {}, `${node.label}: ${node.links} links`));
    group.addEventListener("click", () => open(node));
    group.addEventListener("keydown", (event) => { if (event.key === "Enter") open(node); });
    return group;
  });
  return s("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}` },
    s("g", {}, lines), s("g", {}, circles));
}

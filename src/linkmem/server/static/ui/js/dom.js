// Building elements without innerHTML: text from the store is always set as text.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("a", {href: "#/x"}, "text", otherNode). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, same arguments as h(). */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A number for people: 0.1848 → "0.185", 12345 → "12,345". */
export function fmt(value, digits = 3) {
  if (typeof value !== "number") return String(value ?? "");
  return Number.isInteger(value) ? value.toLocaleString("en") : value.toFixed(digits);
}

/** An ISO time without seconds' fractions: "2026-12-01 11:03". */
export function when(iso) {
  return iso ? iso.slice(0, 16).replace("T", " ") : "";
}

/** A form's non-empty fields as an object. */
export function formValues(form) {
  const out = {};
  for (const [name, value] of new FormData(form)) {
    if (String(value).trim() !== "") out[name] = String(value).trim();
  }
  return out;
}

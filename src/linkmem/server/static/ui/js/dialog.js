// Modal dialogs: the API key prompt, and the confirmation every edit of entities asks for.

import { h } from "./dom.js";

function modal(className, content, onSubmit) {
  return new Promise((resolve) => {
    const form = h("form", { method: "dialog" }, content);
    const dialog = h("dialog", { class: className }, form);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = onSubmit(event.submitter ? event.submitter.value : "ok", form);
      if (value === undefined) return; // keep the dialog open (e.g. an empty field)
      dialog.close();
      resolve(value);
    });
    dialog.addEventListener("cancel", () => resolve(null));
    dialog.addEventListener("close", () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Ask for an API key; resolves to the key typed. */
export function askKey(message) {
  const input = h("input", {
    name: "key", type: "password", required: true, autocomplete: "off", size: 40,
    placeholder: "lmk_…",
  });
  const content = [
    h("h2", {}, "API key"),
    h("p", {}, message),
    h("p", {}, input),
    h("p", { class: "hint" }, "Kept in this browser tab's session storage until it closes."),
    h("menu", {}, h("button", { type: "submit", value: "ok", class: "primary" }, "Use key")),
  ];
  return modal("key-dialog", content, (_, form) => form.elements.key.value.trim() || undefined);
}

/** Ask to confirm an action; resolves to true or false. ``body``: nodes explaining it. */
export function confirmAction(title, body, confirmLabel = "Confirm") {
  const content = [
    h("h2", {}, title),
    body,
    h("menu", {},
      h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
      h("button", { type: "submit", value: "ok", class: "primary danger" }, confirmLabel)),
  ];
  return modal("confirm-dialog", content, (button) => button === "ok").then(Boolean);
}

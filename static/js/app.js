// Dashboard behaviour kept out of the HTML, so the Content-Security-Policy can refuse
// every inline script and handler.

// A form with data-confirm asks before it is sent (deletes and other changes that
// cannot be undone). Capturing, so it runs before anything else hears the submit.
document.addEventListener(
  "submit",
  (event) => {
    const form = event.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  },
  true,
);

// After an HTMX swap removed the element that had focus (a Save, Cancel or Delete
// button, an Edit link), focus goes to the first element marked data-swap-focus in
// the new content (or, when the mark is on a container, to its first control), so a
// keyboard user carries on where they were instead of at the top of the page.
const FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, [tabindex]";

document.addEventListener("htmx:afterSettle", (event) => {
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active)) {
    return;
  }
  const content = event.target;
  if (!(content instanceof Element) || !document.contains(content)) {
    return;
  }
  const marked = content.matches("[data-swap-focus]")
    ? content
    : content.querySelector("[data-swap-focus]");
  if (!marked) {
    return;
  }
  const target = marked.matches(FOCUSABLE) ? marked : marked.querySelector(FOCUSABLE);
  if (target) {
    target.focus();
  }
});

// Escape inside an inline editor cancels it: its element marked data-cancel is
// activated, as if clicked (HTMX then brings the row back).
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) {
    return;
  }
  const editor = event.target instanceof Element && event.target.closest("[data-inline-edit]");
  const cancel = editor && editor.querySelector("[data-cancel]");
  if (cancel) {
    event.preventDefault();
    cancel.click();
  }
});

// A "select all" box ticks every box named by its data-select-all in the same table;
// a [data-selected-count] beside the list says how many are ticked.
function selectedCountUpdate() {
  for (const counter of document.querySelectorAll("[data-selected-count]")) {
    const ticked = document.querySelectorAll('input[type=checkbox][name="ids"]:checked').length;
    counter.textContent = ticked ? `${ticked} selected` : "";
  }
}
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.type !== "checkbox") return;
  const name = box.dataset.selectAll;
  if (name) {
    const table = box.closest("table") || document;
    for (const other of table.querySelectorAll(`input[type=checkbox][name="${name}"]`)) {
      other.checked = box.checked;
    }
  }
  selectedCountUpdate();
});

// An Undo offered for a few seconds goes away when its time is up (the server refuses
// it from then on anyway).
function undoExpiryArm(root) {
  for (const form of root.querySelectorAll("form[data-expires-in]:not([data-armed])")) {
    form.dataset.armed = "1";
    const seconds = Number(form.dataset.expiresIn) || 0;
    window.setTimeout(() => form.remove(), seconds * 1000);
  }
}
document.addEventListener("DOMContentLoaded", () => undoExpiryArm(document));
document.addEventListener("htmx:afterSettle", () => undoExpiryArm(document));


// A button with data-copy="<id>" copies the text of that element to the clipboard. Where
// the clipboard is not available (an insecure origin, a refused permission) it selects
// the text instead, for the user to copy by hand.
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element && event.target.closest("button[data-copy]");
  const source = button && document.getElementById(button.dataset.copy);
  if (!source) {
    return;
  }
  const label = button.dataset.label || button.textContent;
  button.dataset.label = label;
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(source.textContent);
      copied = true;
    } catch {
      copied = false;
    }
  }
  if (!copied) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  button.textContent = copied ? "Copied" : "Selected: press Ctrl+C to copy";
  window.clearTimeout(Number(button.dataset.timer));
  button.dataset.timer = String(window.setTimeout(() => (button.textContent = label), 2500));
});

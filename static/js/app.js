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

// Escape in an inline editor marked data-escape-cancels follows its Cancel link.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  const form = event.target instanceof Element && event.target.closest("form[data-escape-cancels]");
  const cancel = form && form.querySelector("[data-cancel]");
  if (cancel) {
    event.preventDefault();
    cancel.click();
  }
});

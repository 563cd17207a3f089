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

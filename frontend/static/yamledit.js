// The YAML editor (templates/yaml_edit.html, backend/dashboard/yamledit.py). Without this file everything works: the
// line numbers are written next to each message, and the server reviews a changed text again instead of applying it.
//
// - "line N" buttons put the caret at the start of that line of the textarea, select the line and scroll it into view.
// - The first edit after a review disables Apply and says why (the reviewed text is what Apply sends; the server
//   checks the digest of the text either way).
(() => {
  "use strict";

  function goToLine(textarea, line) {
    const lines = textarea.value.split("\n");
    const index = Math.max(0, Math.min(line, lines.length) - 1);
    let start = 0;
    for (let i = 0; i < index; i += 1) start += lines[i].length + 1;
    textarea.focus();
    textarea.setSelectionRange(start, start + lines[index].length);
    const style = window.getComputedStyle(textarea);
    const height = parseFloat(style.lineHeight) || 18;
    textarea.scrollTop = Math.max(0, (index - 3) * height);
  }

  document.addEventListener("click", (evt) => {
    const button = evt.target.closest("button[data-line]");
    if (!button) return;
    const textarea = document.getElementById(button.getAttribute("aria-controls") || "yaml-text");
    if (textarea) goToLine(textarea, parseInt(button.dataset.line, 10) || 1);
  });

  document.addEventListener("input", (evt) => {
    const textarea = evt.target;
    if (!(textarea instanceof HTMLTextAreaElement) || textarea.id !== "yaml-text") return;
    const form = textarea.closest("form[data-reviewed]");
    if (!form) return;
    form.removeAttribute("data-reviewed");
    const apply = form.querySelector("#yaml-apply");
    const why = "The text changed since the review: Review it again before Apply.";
    if (apply) {
      apply.type = "button";
      apply.setAttribute("aria-disabled", "true");
      apply.title = why;
    }
    const status = form.querySelector(".yaml-stale");
    if (status) status.textContent = why;
  });
})();

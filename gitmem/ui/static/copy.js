// Gives each element naming a textarea (data-copy) a Copy button that puts the
// textarea's text on the clipboard. Without script there is no button, and the text
// stays readable (and selectable) in its read-only textarea.
"use strict";
for (const where of document.querySelectorAll("[data-copy]")) {
  const source = document.getElementById(where.dataset.copy);
  if (!(source instanceof HTMLTextAreaElement)) continue;
  const status = where.querySelector("[role=status]");
  const say = (text) => { if (status) status.textContent = text; };
  const button = document.createElement("button");
  button.type = "button";  // inside the decision's form: never submits it
  button.className = "copy";
  button.textContent = "Copy";
  where.insertBefore(button, status);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.value);
      say("Copied");
    } catch {
      // No clipboard here (permission refused): leave the text selected to copy by hand.
      const shown = source.closest("details");
      if (shown) shown.open = true;
      source.select();
      say("Selected: press Ctrl-C to copy");
    }
  });
}

// Small progressive enhancements; no inline scripts (the CSP forbids them).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const grid of document.querySelectorAll(".grid[data-cols]")) {
    grid.style.setProperty("--cols", grid.dataset.cols);
    const conc = parseInt(grid.dataset.conc || "4", 10);
    grid.style.setProperty("--node-cols", String(Math.ceil(Math.sqrt(conc))));
  }
  for (const form of document.querySelectorAll("form[data-autosubmit]")) {
    form.addEventListener("change", () => form.submit());
  }
});
// Pages of runs still in progress (data-refresh="seconds") reload until they finish.
document.addEventListener("DOMContentLoaded", () => {
  const pending = document.querySelector("[data-refresh]");
  if (pending) {
    const seconds = Math.max(parseFloat(pending.dataset.refresh) || 2, 1);
    setTimeout(() => window.location.reload(), seconds * 1000);
  }
});

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

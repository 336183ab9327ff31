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

// Recommendation pages: poll while simulations run, then reload; copy #SBATCH lines.
document.addEventListener("DOMContentLoaded", () => {
  const box = document.querySelector("[data-poll]");
  if (box) {
    const bar = box.querySelector("progress");
    const tick = async () => {
      try {
        const response = await fetch(box.dataset.poll, {headers: {Accept: "application/json"}});
        const body = await response.json();
        if (bar && body.progress) { bar.max = body.progress.simulations; bar.value = body.progress.done; }
        if (body.status !== "computing") { window.location.reload(); return; }
      } catch (err) { /* keep polling */ }
      setTimeout(tick, 1000);
    };
    setTimeout(tick, 1000);
  }
  for (const button of document.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", () => {
      const source = document.querySelector(button.dataset.copy);
      if (source && navigator.clipboard) navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = "Copied";
    });
  }
});

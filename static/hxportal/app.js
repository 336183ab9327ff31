// Small progressive enhancements; no inline scripts (the CSP forbids them).
"use strict";

// The one way a page follows a run in progress: fetch `url` as JSON every `every` ms
// (the first time after `after` ms) and hand the answer to `update`, which moves the
// bar and text; when it returns true the run has finished and the page reloads, so
// the server draws the result. A failed fetch or an answer that is not OK is retried.
// Used here (recommendations) and by static/simulation/simulation.js (runs, sweeps).
window.hx = window.hx || {};
window.hx.poll = (url, update, {after = 1000, every = 1000} = {}) => {
  const tick = async () => {
    try {
      const response = await fetch(url, {credentials: "same-origin",
                                         headers: {Accept: "application/json"}});
      if (response.ok && update(await response.json())) { window.location.reload(); return; }
    } catch (err) { /* network hiccup: try again */ }
    setTimeout(tick, every);
  };
  setTimeout(tick, after);
};

// Narrow windows: the menu button opens and closes the navigation (Escape closes it
// and returns the focus to the button; a click elsewhere closes it too).
document.addEventListener("DOMContentLoaded", () => {
  const toggle = document.querySelector("[data-nav-toggle]");
  const panel = toggle && document.getElementById(toggle.getAttribute("aria-controls"));
  if (!toggle || !panel) return;
  const setOpen = (open) => {
    panel.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  };
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    setOpen(open);
    if (open) { const first = panel.querySelector("a, button"); if (first) first.focus(); }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && toggle.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (toggle.getAttribute("aria-expanded") === "true" && !panel.contains(event.target)
        && !toggle.contains(event.target)) setOpen(false);
  });
});

// Switch grids and heat maps: columns, rows and nodes per switch row from data attributes
// (CSSOM, allowed by the CSP); hovering a job in the legend highlights its nodes.
document.addEventListener("DOMContentLoaded", () => {
  for (const grid of document.querySelectorAll(".grid[data-cols], .heatmap[data-cols]")) {
    grid.style.setProperty("--cols", grid.dataset.cols);
    grid.style.setProperty("--rows", grid.dataset.rows || grid.dataset.cols);
    const conc = parseInt(grid.dataset.conc || "4", 10);
    grid.style.setProperty("--node-cols", String(Math.ceil(Math.sqrt(conc))));
  }
  for (const item of document.querySelectorAll("[data-legend-job]")) {
    const layout = item.closest(".grid-layout");
    const grid = layout && layout.querySelector(".grid");
    if (!grid) continue;
    const on = () => {
      grid.classList.add("focus");
      item.classList.add("active");
      for (const node of grid.querySelectorAll(`.node[data-job="${item.dataset.legendJob}"]`)) node.classList.add("hl");
    };
    const off = () => {
      grid.classList.remove("focus");
      item.classList.remove("active");
      for (const node of grid.querySelectorAll(".node.hl")) node.classList.remove("hl");
    };
    item.addEventListener("mouseenter", on);
    item.addEventListener("mouseleave", off);
    item.addEventListener("focusin", on);
    item.addEventListener("focusout", off);
  }
  for (const form of document.querySelectorAll("form[data-autosubmit]")) {
    form.addEventListener("change", () => form.submit());
  }
});
// Pages and lists of runs still in progress reload every few seconds until they
// finish: data-refresh="seconds" (estimation runs; default 2, at least 1) and
// data-sim-refresh="seconds" (simulation run and sweep lists).
document.addEventListener("DOMContentLoaded", () => {
  const pending = document.querySelector("[data-refresh]");
  if (pending) {
    const seconds = Math.max(parseFloat(pending.dataset.refresh) || 2, 1);
    setTimeout(() => window.location.reload(), seconds * 1000);
  }
  for (const list of document.querySelectorAll("[data-sim-refresh]")) {
    setTimeout(() => window.location.reload(), parseFloat(list.dataset.simRefresh) * 1000);
  }
});

// Recommendation pages: poll while simulations run, then reload; copy #SBATCH lines.
document.addEventListener("DOMContentLoaded", () => {
  const box = document.querySelector("[data-poll]");
  if (box) {
    const bar = box.querySelector("progress");
    const done = box.querySelector("[data-progress-done]");
    const total = box.querySelector("[data-progress-total]");
    window.hx.poll(box.dataset.poll, (rec) => {
      // Text and bar come from the same polled value.
      if (rec.progress) {
        const {done: finished, simulations} = rec.progress;
        if (bar) { bar.max = Math.max(simulations, 1); bar.value = finished; }
        if (done) done.textContent = String(finished);
        if (total) total.textContent = String(simulations);
      }
      return rec.status !== "computing";
    });
  }
  for (const button of document.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", () => {
      const source = document.querySelector(button.dataset.copy);
      if (source && navigator.clipboard) navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = "Copied";
    });
  }
});

// Toasts: each message can be dismissed; successes fade after 8 s, errors stay.
document.addEventListener("DOMContentLoaded", () => {
  for (const toast of document.querySelectorAll(".messages li")) {
    const close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    const dismiss = () => { toast.classList.add("leaving"); setTimeout(() => toast.remove(), 400); };
    close.addEventListener("click", dismiss);
    toast.appendChild(close);
    if (!toast.classList.contains("error") && !toast.classList.contains("warning")) setTimeout(dismiss, 8000);
  }
});

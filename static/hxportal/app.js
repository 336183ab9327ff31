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

// Switch grids, thumbnails and heat maps: columns, rows and nodes per switch row from
// data attributes (CSSOM, allowed by the CSP); hovering a job in the legend highlights
// its nodes. Run again on the parts a live page swaps in.
window.hx.initGrids = (root) => {
  for (const grid of root.querySelectorAll(".grid[data-cols], .heatmap[data-cols], .thumb[data-cols]")) {
    grid.style.setProperty("--cols", grid.dataset.cols);
    grid.style.setProperty("--rows", grid.dataset.rows || grid.dataset.cols);
    const conc = parseInt(grid.dataset.conc || "4", 10);
    grid.style.setProperty("--node-cols", String(Math.ceil(Math.sqrt(conc))));
  }
  for (const item of root.querySelectorAll("[data-legend-job]")) {
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
  for (const form of root.querySelectorAll("form[data-autosubmit]")) {
    form.addEventListener("change", () => form.submit());
  }
};
document.addEventListener("DOMContentLoaded", () => window.hx.initGrids(document));

// Live pages (templates/inc/live_status.html): every data-live-every seconds, while the
// tab is visible, fetch this same URL with the header X-HX-Live (the server answers
// with the page's [data-live-region] parts only) and swap each region in by its id;
// "updated N s ago" counts up between fetches. A hidden tab fetches nothing and
// catches up as soon as it is shown again; a failed fetch keeps what is shown and
// says so. A region holding the keyboard focus in a form field waits for the next turn.
document.addEventListener("DOMContentLoaded", () => {
  const status = document.querySelector("[data-live-every]");
  if (!status) return;
  const every = Math.max(parseFloat(status.dataset.liveEvery) || 30, 5) * 1000;
  const text = status.querySelector("[data-live-text]");
  let updated = Date.now();
  let failed = false;
  let busy = false;
  const show = () => {
    const age = Math.round((Date.now() - updated) / 1000);
    let line = `Updated ${age} s ago`;
    if (document.hidden) line += " (paused while the tab is hidden)";
    if (failed) line += " · the last update failed, retrying";
    text.textContent = line;
    status.dataset.age = String(age);
  };
  const typing = (region) => {
    const el = document.activeElement;
    return el && region.contains(el) && /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName);
  };
  const refresh = async () => {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(window.location.href, {
        credentials: "same-origin", headers: {"X-HX-Live": "1", Accept: "text/html"}});
      if (!response.ok) throw new Error(String(response.status));
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const fresh of doc.querySelectorAll("[data-live-region][id]")) {
        const region = document.getElementById(fresh.id);
        if (!region || typing(region)) continue;
        for (const fig of region.querySelectorAll("figure[data-chart]")) {
          if (fig.hxChart) fig.hxChart.destroy();
        }
        region.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.importNode(n, true)));
        window.hx.initGrids(region);
        window.hx.initSortable(region);
        if (window.hx.renderCharts) window.hx.renderCharts(region);
      }
      updated = Date.now();
      failed = false;
      status.dataset.refreshes = String((parseInt(status.dataset.refreshes || "0", 10)) + 1);
    } catch (err) {
      failed = true;
    } finally {
      busy = false;
      show();
    }
  };
  setInterval(() => {
    show();
    if (!document.hidden && Date.now() - updated >= every) refresh();
  }, 1000);
  document.addEventListener("visibilitychange", () => {
    show();
    if (!document.hidden && Date.now() - updated >= every) refresh();
  });
  const now = status.querySelector("[data-live-now]");
  if (now) now.addEventListener("click", refresh);
  show();
});

// Sortable tables: a click (or Enter) on a header of table[data-sortable] sorts the
// shown rows by that column, again to reverse; numbers by value (data-sort on a cell
// overrides its text). The server's order and paging stay as they were: this sorts
// the page in view. aria-sort says the order to screen readers. A live page's fresh
// table keeps the order chosen (remembered per table by its data-testid).
const sortChoices = new Map();
window.hx.initSortable = (root) => {
  const key = (cell) => {
    if (!cell) return "";
    const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    const num = parseFloat(raw.replace(/[,\s%]/g, ""));
    return raw !== "" && /^-?[\d,.\s%]+$/.test(raw) && isFinite(num) ? num : raw.toLowerCase();
  };
  for (const table of root.querySelectorAll("table[data-sortable]")) {
    const body = table.tBodies[0];
    if (!body) continue;
    const headers = Array.from(table.querySelectorAll("thead th"));
    const sortBy = (index, ascending) => {
      for (const other of headers) other.removeAttribute("aria-sort");
      headers[index].setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = key(a.cells[index]);
        const y = key(b.cells[index]);
        const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "en", {numeric: true});
        return ascending ? order : -order;
      });
      body.append(...rows);
      if (table.dataset.testid) sortChoices.set(table.dataset.testid, [index, ascending]);
    };
    headers.forEach((th, index) => {
      if (th.hasAttribute("data-nosort")) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = th.textContent.trim();
      button.setAttribute("aria-label", `Sort by ${button.textContent}`);
      th.replaceChildren(button);
      button.addEventListener("click", () => sortBy(index, th.getAttribute("aria-sort") !== "ascending"));
    });
    const chosen = table.dataset.testid && sortChoices.get(table.dataset.testid);
    if (chosen && headers[chosen[0]]) sortBy(chosen[0], chosen[1]);
  }
};
document.addEventListener("DOMContentLoaded", () => window.hx.initSortable(document));

// Numbers as the server writes them (hxportal/templatetags/hxformat.py: sig, seconds).
window.hx.sig = (x, digits = 3) => {
  if (x === 0) return "0";
  const fixed = (d) => x.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
  const decimals = Math.max(digits - 1 - Math.floor(Math.log10(Math.abs(x))), 0);
  const text = fixed(decimals);
  // Rounding can carry into a new digit (9.996 -> 10.00): keep ``digits`` figures.
  return decimals && text.replace(/\D/g, "").replace(/^0+/, "").length > digits ? fixed(decimals - 1) : text;
};
window.hx.seconds = (x) => {
  for (const [unit, size, from] of [["d", 86400, 86400], ["h", 3600, 3600], ["min", 60, 120]]) {
    if (Math.abs(x) >= from) return `${window.hx.sig(x / size)} ${unit}`;
  }
  return `${window.hx.sig(x)} s`;
};

// Recommendation and calibration pages: poll while the work runs, then reload; copy
// #SBATCH lines.
document.addEventListener("DOMContentLoaded", () => {
  const box = document.querySelector("[data-poll]");
  if (box) {
    const bar = box.querySelector("progress");
    const done = box.querySelector("[data-progress-done]");
    const total = box.querySelector("[data-progress-total]");
    // A calibration page says which progress key counts all and which status means
    // "still working" (data-poll-total, data-poll-while); a recommendation's are the default.
    const totalKey = box.dataset.pollTotal || "simulations";
    const working = box.dataset.pollWhile || "computing";
    // Other figures of the status line ([data-poll-field]) follow the same answer, and
    // the page is drawn again (its curves) when data-poll-redraw-on's value has moved
    // from the one it was drawn with, at most every 10 s.
    const redrawOn = box.dataset.pollRedrawOn;
    const loaded = Date.now();
    window.hx.poll(box.dataset.poll, (rec) => {
      // Text and bar come from the same polled value.
      if (rec.progress) {
        const finished = rec.progress.done;
        const all = rec.progress[totalKey];
        if (bar) { bar.max = Math.max(all, 1); bar.value = finished; }
        if (done) done.textContent = String(finished);
        if (total) total.textContent = String(all);
      }
      for (const field of box.querySelectorAll("[data-poll-field]")) {
        const value = rec[field.dataset.pollField];
        if (typeof value !== "number") continue;
        field.textContent = field.dataset.pollFormat === "seconds" ? window.hx.seconds(value)
                                                                   : String(value);
      }
      const moved = redrawOn && String(rec[redrawOn]) !== box.dataset.pollShown;
      return rec.status !== working || (moved && Date.now() - loaded > 10000);
    }, box.dataset.pollEvery ? {every: Number(box.dataset.pollEvery)} : undefined);
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

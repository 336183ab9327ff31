// Simulation pages: live validation of the run form, progress of runs and sweeps
// (polled with hx.poll from static/hxportal/app.js).
// Static file (the CSP forbids inline scripts); talks to the v1 API with the session.
"use strict";
(() => {
  const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);
  // Switches per dimension: whole numbers separated by commas or "x" (simulation/forms.py).
  const SIDES_TEXT = /^\s*\d+(?:\s*[,x]\s*\d+)*\s*$/;

  function csrfToken(root) {
    const input = (root || document).querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function collectConfig(form) {
    const config = {};
    let machine = null;
    let extraError = null;
    let sidesError = null;
    for (const el of form.querySelectorAll("[data-config]")) {
      const name = el.dataset.config;
      const raw = (el.value || "").trim();
      if (name === "machine") { machine = raw || null; continue; }
      if (name === "extra") {
        if (!raw) continue;
        try {
          const extra = JSON.parse(raw);
          if (extra && typeof extra === "object" && !Array.isArray(extra)) Object.assign(config, extra);
          else extraError = "must be a JSON object";
        } catch (e) { extraError = "not JSON: " + e.message; }
        continue;
      }
      if (raw === "") continue;
      if (name === "sides") {
        if (SIDES_TEXT.test(raw)) config.sides = raw.split(/[,x]/).map(Number);
        else sidesError = `'${raw.slice(0, 40)}' is not a list of whole numbers: give the switches per dimension separated by commas, e.g. 8,8 (or 8x8)`;
      } else if (el.type === "number" || el.inputMode === "numeric") {
        config[name] = Number(raw);
      } else {
        config[name] = raw;
      }
    }
    if (machine) { delete config.sides; delete config.concentration; sidesError = null; }
    return { config, machine, extraError, sidesError };
  }

  function showErrors(form, errors) {
    for (const span of form.querySelectorAll("[data-error-for]")) span.textContent = "";
    const fields = new Set([...form.querySelectorAll("[data-error-for]")].map((s) => s.dataset.errorFor));
    for (const [key, problems] of Object.entries(errors || {})) {
      const name = fields.has(key) ? key : "extra";
      const span = form.querySelector(`[data-error-for="${name}"]`);
      const text = Array.isArray(problems) ? problems.join(" ") : String(problems);
      if (span) span.textContent += (name === key ? "" : key + ": ") + text + " ";
    }
  }

  function liveValidation(form) {
    const summary = form.querySelector("[data-testid=validation-summary]");
    let timer = null;
    let seq = 0;
    const check = async () => {
      const { config, machine, extraError, sidesError } = collectConfig(form);
      if (extraError || sidesError) {
        form.dataset.valid = "0";
        showErrors(form, sidesError ? { sides: [sidesError] } : { extra: [extraError] });
        if (summary) summary.textContent = "";
        return;
      }
      const mine = ++seq;
      const body = { config };
      if (machine) body.machine = machine;
      const response = await fetch(form.dataset.validateUrl, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(form),
                   "Accept": "application/json" },
        body: JSON.stringify(body),
      });
      if (mine !== seq) return;
      const data = await response.json().catch(() => ({}));
      if (response.ok && data.valid) {
        showErrors(form, {});
        form.dataset.valid = "1";
        const mib = (bytes) => Math.max(1, Math.round((bytes || 0) / 1048576));
        const low = mib(data.memory_floor_bytes), high = mib(data.memory_bytes);
        let memory = low === high ? `about ${high} MiB of memory` : `${low} to ${high} MiB of memory as its packets in flight grow`;
        if (data.memory_bytes > data.memory_limit_bytes) memory += `; it stops if its packets in flight would take it past the limit of ${mib(data.memory_limit_bytes)} MiB`;
        if (summary) summary.textContent = `OK: ${data.description}; ${data.endpoints} endpoints, ${data.total_vcs} VCs per port, ${memory}.`;
      } else {
        form.dataset.valid = "0";
        showErrors(form, data.errors || { extra: [data.detail || "invalid"] });
        if (summary) summary.textContent = data.detail || "";
      }
    };
    const schedule = () => { clearTimeout(timer); timer = setTimeout(check, 250); };
    form.addEventListener("input", schedule);
    form.addEventListener("change", schedule);
  }

  function pollRun(box) {
    const bar = box.querySelector("[data-testid=progress]");
    const text = box.querySelector("[data-testid=progress-text]");
    const status = box.querySelector("[data-testid=status]");
    window.hx.poll(box.dataset.runUrl, (run) => {
      if (bar) bar.value = run.progress;
      if (text) text.textContent = Math.round(run.progress * 100) + "%";
      if (status) status.textContent = run.status;
      return TERMINAL.has(run.status);
    }, { after: 500 });
  }

  // A sweep's status in words, from its runs' statuses: the same rule as
  // simulation.services.sweep_status_text, which renders the page.
  function sweepStatusText(p) {
    if (p.status === "pending" || p.status === "running") {
      const started = p.done || p.running;
      return `${started ? "running" : "pending"} (${p.done} of ${p.total} done)`;
    }
    if (p.status === "succeeded") return `succeeded (${p.total} run${p.total !== 1 ? "s" : ""})`;
    if (p.status === "failed") {
      return p.failed ? `finished: ${p.failed} of ${p.total} failed`
                      : `finished: ${p.cancelled || 0} of ${p.total} cancelled`;
    }
    if (p.status === "cancelled") return "cancelled";
    return "empty (no runs)";
  }

  // The progress line, the same words as templates/simulation/_progress_counts.html:
  // every count from the same answer, so they always add up.
  function plural(n, noun) { return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`; }
  function progressText(p) { return `${p.done} of ${plural(p.total, "run")} done`; }
  function progressDetail(p) {
    return `(${p.succeeded} succeeded, ${p.failed} failed, ${p.running} running, ${p.pending} pending` +
      (p.cancelled ? `, ${p.cancelled} cancelled)` : ")");
  }

  // The reproduction start form: how many runs the chosen seeds start (Table 4's
  // seeds, and the ordering parts' seeds, the same when left blank).
  function runCount(form) {
    const table4 = parseInt(form.dataset.table4Runs, 10);
    const ordering = parseInt(form.dataset.orderingRuns, 10);
    const seeds = form.querySelector("input[name=seeds]");
    const orderingSeeds = form.querySelector("input[name=ordering_seeds]");
    const output = form.querySelector("[data-testid=reproduction-run-count]");
    if (!seeds || !orderingSeeds || !output) return;
    const within = (input, value) => Number.isInteger(value) && value >= parseInt(input.min, 10) &&
      value <= parseInt(input.max, 10);
    const update = () => {
      const n = Number(seeds.value);
      const m = orderingSeeds.value.trim() === "" ? n : Number(orderingSeeds.value);
      if (!within(seeds, n)) {
        output.textContent = "no run: choose 1 to " + seeds.max + " seeds";
      } else if (!within(orderingSeeds, m)) {
        output.textContent = "no run: choose 1 to " + orderingSeeds.max + " ordering seeds";
      } else {
        output.textContent = plural(n * table4 + m * ordering, "run");
      }
    };
    seeds.addEventListener("input", update);
    orderingSeeds.addEventListener("input", update);
    update();
  }

  // The sweep list filtered by id (the light answer, without results), not the detail.
  function pollSweep(box) {
    const url = box.dataset.sweepUrl.replace(/(\d+)\/$/, "");
    const id = box.dataset.sweepUrl.match(/(\d+)\/$/)[1];
    const bar = box.querySelector("[data-testid=progress]");
    const text = box.querySelector("[data-testid=progress-text]");
    const detail = box.querySelector("[data-testid=progress-detail]");
    const status = box.querySelector("[data-testid=status]");
    const shown = parseInt(box.dataset.done || "0", 10);
    const loaded = Date.now();
    window.hx.poll(`${url}?id=${id}`, (answer) => {
      const sweep = answer.results[0];
      if (!sweep) return false;
      const p = sweep.progress;
      if (bar) { bar.max = p.total; bar.value = p.done; }
      if (text) text.textContent = progressText(p);
      if (detail) detail.textContent = progressDetail(p);
      if (status) { status.textContent = sweepStatusText(p); status.dataset.status = p.status; }
      const finished = p.status !== "pending" && p.status !== "running";
      // Partial results: redraw the page when runs finished, at most every 5 s.
      return finished || (p.done !== shown && Date.now() - loaded > 5000);
    }, { after: 1000, every: 1500 });
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const form of document.querySelectorAll("form[data-validate-url]")) liveValidation(form);
    for (const box of document.querySelectorAll("[data-sim-poll][data-run-url]")) pollRun(box);
    for (const box of document.querySelectorAll("[data-sim-poll][data-sweep-url]")) pollSweep(box);
    for (const form of document.querySelectorAll("form[data-table4-runs]")) runCount(form);
    // Lists with runs in progress ([data-sim-refresh]) reload: static/hxportal/app.js.
  });
})();

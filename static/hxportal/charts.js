// The one chart module: every chart of the portal, from a json_script spec
// (hxportal/charts.py) to Chart.js, vendored in static/vendor/chartjs-4.6.1/.
//
// Why Chart.js: the pages need grouped and stacked bars (interference, histogram),
// lines with shaded intervals, reference lines and log axes; Chart.js does all of
// them natively, is MIT-licensed, well kept, draws on a canvas (no inline styles
// or scripts, so the CSP holds) and exports PNG with toBase64Image. uPlot is
// smaller but has no grouped bars without plugins.
//
// Markup (templates/inc/chart.html): <figure data-chart="SCRIPT_ID"> with a
// <canvas>, buttons [data-chart-png] and [data-chart-csv], and the json_script.
"use strict";
(() => {
  // Colours come from the stylesheet's variables (--series-0 .. --series-7, --chart-*),
  // so the charts follow the light or dark scheme; read again at every render.
  let COLOURS = ["#2459c7", "#8a3ffc", "#0f8b8d", "#b0307f", "#6d4c41", "#1e90c8", "#4a5a9c", "#7f8c8d"];
  let BAD = "#d64545";
  let REF = "#1d232b";
  let GRID = "#e3e7ec";
  let TICK = "#5b6673";
  let BG = "#fff";
  let FG = "#1d232b";
  let BAND = "26";  // the alpha of a shaded interval (hex), stronger on a dark card

  function readTheme() {
    const css = getComputedStyle(document.documentElement);
    const v = (name, fallback) => (css.getPropertyValue(name) || "").trim() || fallback;
    COLOURS = COLOURS.map((c, i) => v(`--series-${i}`, c));
    BAD = v("--chart-bad", BAD); REF = v("--chart-ref", REF); GRID = v("--chart-grid", GRID);
    TICK = v("--muted", TICK); BG = v("--card", BG); FG = v("--fg", FG);
    BAND = v("--chart-band-alpha", BAND);
    if (window.Chart) window.Chart.defaults.color = FG;
  }
  const fmt = new Intl.NumberFormat("en", { maximumSignificantDigits: 4 });

  function number(v) {
    if (v === null || v === undefined || !isFinite(v)) return "—";
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e7)) return v.toExponential(2);
    return fmt.format(v);
  }

  function timeText(seconds, span) {
    const d = new Date(seconds * 1000);
    const iso = d.toISOString();
    if (span > 2 * 86400) return iso.slice(0, 10);
    return iso.slice(5, 10) + " " + iso.slice(11, 16);
  }

  const TIME_STEPS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400,
                      2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400];

  function valueText(axis, v, span) {
    if (axis.scale === "time") return timeText(v, span) + " UTC";
    return number(v) + (axis.unit && axis.unit !== "count" ? " " + axis.unit : "");
  }

  // Log ticks: only 1, 2 and 5 times a power of ten get a label.
  function logTick(value) {
    const exp = Math.floor(Math.log10(value) + 1e-9);
    const mant = Math.round(value / Math.pow(10, exp));
    return [1, 2, 5].includes(mant) && Math.abs(value / Math.pow(10, exp) - mant) < 1e-6 ? number(value) : "";
  }

  function scaleOptions(axis, values, isX) {
    const base = {
      title: { display: true, text: axis.title },
      grid: { color: GRID },
      ticks: { color: TICK, maxRotation: 0, autoSkip: true, autoSkipPadding: 12 },
    };
    if (axis.scale === "category") return { ...base, type: "category" };
    const finite = values.filter((v) => v !== null && isFinite(v));
    let lo = finite.length ? Math.min(...finite) : 0;
    let hi = finite.length ? Math.max(...finite) : 1;
    if (axis.scale === "log") {
      return { ...base, type: "logarithmic", ticks: { ...base.ticks, callback: logTick } };
    }
    const opts = { ...base, type: "linear", beginAtZero: !!axis.zero };
    if (lo === hi) {
      // A single value: give it context instead of a degenerate axis (nice ticks
      // around it: suggested bounds, which Chart.js rounds, not hard ones).
      const pad = axis.scale === "time" ? 86400 : (Math.abs(lo) * 0.1 || 1);
      lo -= pad; hi += pad;
      if (axis.zero && lo < 0 && lo + pad >= 0) lo = 0;
      opts.suggestedMin = lo; opts.suggestedMax = hi;
    }
    if (axis.scale === "time") {
      const exact = typeof axis.min === "number" && typeof axis.max === "number";
      if (exact) { lo = axis.min; hi = axis.max; }
      const span = hi - lo;
      const step = TIME_STEPS.find((s) => span / s <= 7) || TIME_STEPS[TIME_STEPS.length - 1];
      opts.min = exact ? lo : Math.floor(lo / step) * step;
      opts.max = exact ? hi : Math.ceil(hi / step) * step;
      delete opts.suggestedMin; delete opts.suggestedMax;
      opts.ticks = { ...base.ticks, stepSize: step, callback: (v) => timeText(v, span) };
      if (exact) {
        // Ticks on whole steps (midnights, hours) inside the exact bounds.
        opts.afterBuildTicks = (scale) => {
          const ticks = [];
          for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) ticks.push({ value: v });
          scale.ticks = ticks;
        };
      }
    } else {
      opts.ticks = { ...base.ticks, callback: (v) => number(v) };
      // Whole values (spare nodes, copies): steps of whole numbers only.
      if (axis.integer) opts.ticks.precision = 0;
      // A value axis with bounds: at least that span (data beyond it still shows), so
      // a small change is not drawn as a cliff.
      if (typeof axis.min === "number") opts.suggestedMin = axis.min;
      if (typeof axis.max === "number") opts.suggestedMax = axis.max;
    }
    if (isX) opts.offset = false;
    return opts;
  }

  // Vertical reference lines at (fractional) x positions, with their labels.
  const vlinePlugin = {
    id: "hxVlines",
    afterDatasetsDraw(chart, _args, opts) {
      const lines = (opts && opts.lines) || [];
      const { ctx, chartArea, scales } = chart;
      ctx.save();
      lines.forEach((line, i) => {
        const x = scales.x.getPixelForValue(line.x);
        ctx.strokeStyle = i === 0 ? BAD : REF;
        ctx.setLineDash([6, 4]);
        ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(x, chartArea.top); ctx.lineTo(x, chartArea.bottom); ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = ctx.strokeStyle;
        ctx.font = "11px system-ui, sans-serif";
        const width = ctx.measureText(line.label).width;
        const tx = Math.min(Math.max(x + 4, chartArea.left), chartArea.right - width);
        ctx.fillText(line.label, tx, chartArea.top + 12 + 13 * i);
      });
      ctx.restore();
    },
  };

  // White background, so an exported PNG is not transparent.
  const backgroundPlugin = {
    id: "hxBackground",
    beforeDraw(chart) {
      const { ctx, width, height } = chart;
      ctx.save(); ctx.globalCompositeOperation = "destination-over";
      ctx.fillStyle = BG; ctx.fillRect(0, 0, width, height); ctx.restore();
    },
  };

  function xyConfig(spec) {
    const datasets = [];
    const xs = [];
    const ys = [];
    for (const s of spec.series) {
      const colour = COLOURS[s.colour % COLOURS.length];
      if (s.style === "band") {
        const low = s.points.map((p) => ({ x: p[0], y: p[1] }));
        const high = s.points.map((p) => ({ x: p[0], y: p[2] }));
        s.points.forEach((p) => { xs.push(p[0]); ys.push(p[1], p[2]); });
        datasets.push({ label: s.name + " (low)", data: low, borderWidth: 0, pointRadius: 0,
                        backgroundColor: colour + BAND, fill: false, hxBand: true });
        datasets.push({ label: s.name, data: high, borderWidth: 0, pointRadius: 0,
                        backgroundColor: colour + BAND, fill: "-1", hxBand: true,
                        hxNoLegend: s.legend === false });
        continue;
      }
      const data = s.points.map((p) => ({ x: p[0], y: p[1] }));
      s.points.forEach((p) => { xs.push(p[0]); ys.push(p[1]); });
      const hl = s.highlight || [];
      datasets.push({
        label: s.name, data, borderColor: colour, backgroundColor: colour,
        borderWidth: 2, spanGaps: false, showLine: true,
        pointRadius: s.style === "points" || data.length < 2 ? data.map((_, i) => (hl[i] ? 5 : 3)) : 0,
        pointHoverRadius: 6, clip: 8,  // a marker on the axis's end is drawn whole
        pointBackgroundColor: data.map((_, i) => (hl[i] ? BAD : colour)),
        pointBorderColor: data.map((_, i) => (hl[i] ? BAD : colour)),
      });
    }
    const finiteX = xs.filter((v) => v !== null && isFinite(v));
    const xMin = finiteX.length ? Math.min(...finiteX) : 0;
    const xMax = finiteX.length ? Math.max(...finiteX) : 1;
    for (const h of spec.hlines) {
      ys.push(h.y);
      datasets.push({ label: `${h.label}`, data: [{ x: xMin, y: h.y }, { x: xMax, y: h.y }],
                      borderColor: REF, borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, hxRef: true });
    }
    for (const m of spec.marks) {
      ys.push(m.y);
      datasets.push({ label: m.label, data: [{ x: m.x, y: m.y }], showLine: false, pointRadius: 7,
                      pointHoverRadius: 8, pointStyle: "rectRot", backgroundColor: BAD, borderColor: BG,
                      borderWidth: 1.5 });
    }
    return {
      type: "line", data: { datasets },
      options: {
        parsing: true,
        scales: { x: scaleOptions(spec.x, xs, true), y: scaleOptions(spec.y, ys, false) },
        plugins: {
          legend: { labels: { filter: (item, data) => {
            const ds = data.datasets[item.datasetIndex];
            return !ds.label.endsWith("(low)") && !ds.hxNoLegend;
          } } },
          tooltip: {
            filter: (item) => !item.dataset.hxRef && !item.dataset.label.endsWith("(low)"),
            callbacks: {
              title: (items) => items.length ? `${spec.x.label}: ${valueText(spec.x, items[0].parsed.x, xMax - xMin)}` : "",
              label: (item) => `${item.dataset.label}: ${valueText(spec.y, item.parsed.y, 0)}`,
            },
          },
        },
      },
    };
  }

  function barConfig(spec) {
    const datasets = spec.series.map((s) => {
      const colour = s.role === "bad" ? BAD : COLOURS[s.colour % COLOURS.length];
      // On a log axis a zero count has no place: draw nothing there.
      const values = spec.y.scale === "log" ? s.values.map((v) => (v ? v : null)) : s.values;
      return { label: s.name, data: values, backgroundColor: colour, borderColor: colour,
               borderWidth: 0, minBarLength: s.role === "bad" ? 3 : 0, stack: spec.stacked ? "all" : undefined };
    });
    const ys = spec.series.flatMap((s) => s.values);
    const y = scaleOptions(spec.y, ys, false);
    if (spec.y.scale === "log") y.min = 0.8;
    return {
      type: "bar", data: { labels: spec.categories, datasets },
      options: {
        scales: { x: { ...scaleOptions(spec.x, [], true), stacked: !!spec.stacked },
                  y: { ...y, stacked: !!spec.stacked } },
        plugins: {
          hxVlines: { lines: spec.vlines },
          tooltip: {
            callbacks: {
              title: (items) => items.length ? `${spec.x.title}: ${items[0].label}` : "",
              label: (item) => `${item.dataset.label}: ${valueText(spec.y, item.raw === null ? 0 : item.raw, 0)}`,
            },
          },
        },
      },
    };
  }

  function csvOf(spec) {
    const quote = (v) => {
      const text = v === null || v === undefined ? "" : String(v);
      return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    };
    const rows = [];
    if (spec.kind === "bar") {
      rows.push([spec.x.title, ...spec.series.map((s) => `${s.name} (${spec.y.unit})`)]);
      spec.categories.forEach((c, i) => rows.push([c, ...spec.series.map((s) => s.values[i])]));
    } else {
      // Time axes export ISO 8601 (UTC), not seconds since the epoch.
      const x = (v) => (spec.x.scale === "time" && v !== null ? new Date(v * 1000).toISOString() : v);
      rows.push(["series", spec.x.title, spec.y.title, "low", "high"]);
      for (const s of spec.series) {
        for (const p of s.points) {
          rows.push(s.style === "band" ? [s.name, x(p[0]), "", p[1], p[2]] : [s.name, x(p[0]), p[1], "", ""]);
        }
      }
      for (const h of spec.hlines) rows.push([h.label, "", h.y, "", ""]);
      for (const m of spec.marks) rows.push([m.label, x(m.x), m.y, "", ""]);
    }
    return rows.map((r) => r.map(quote).join(",")).join("\n") + "\n";
  }

  function download(href, name) {
    const a = document.createElement("a");
    a.href = href; a.download = name;
    document.body.appendChild(a); a.click(); a.remove();
  }

  function render(figure) {
    const source = document.getElementById(figure.dataset.chart);
    const canvas = figure.querySelector("canvas");
    if (!source || !canvas || typeof window.Chart === "undefined") return;
    const spec = JSON.parse(source.textContent);
    const config = spec.kind === "bar" ? barConfig(spec) : xyConfig(spec);
    config.plugins = [vlinePlugin, backgroundPlugin];
    config.options = {
      ...config.options, responsive: true, maintainAspectRatio: false, animation: false,
      interaction: { mode: spec.kind === "bar" ? "index" : "nearest", intersect: false },
      plugins: { ...config.options.plugins,
                 legend: { position: "bottom", ...(config.options.plugins.legend || {}),
                           labels: { boxWidth: 12, ...((config.options.plugins.legend || {}).labels || {}) } } },
    };
    const chart = new window.Chart(canvas, config);
    figure.hxChart = chart;
    figure.dataset.rendered = "1";
    const png = figure.querySelector("[data-chart-png]");
    const csv = figure.querySelector("[data-chart-csv]");
    if (png && !png.dataset.bound) {
      png.dataset.bound = "1";
      png.addEventListener("click", () => download(figure.hxChart.toBase64Image("image/png", 1), `${spec.filename}.png`));
    }
    if (csv && !csv.dataset.bound) {
      csv.dataset.bound = "1";
      csv.addEventListener("click", () => {
        const url = URL.createObjectURL(new Blob([csvOf(spec)], { type: "text/csv" }));
        download(url, `${spec.filename}.csv`);
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      });
    }
  }

  // Every chart under `root` (again: a live page swaps its regions in, or the system
  // turns dark); a chart drawn before is destroyed first.
  function renderAll(root) {
    readTheme();
    for (const figure of (root || document).querySelectorAll("figure[data-chart]")) {
      if (figure.hxChart) { figure.hxChart.destroy(); figure.hxChart = null; }
      render(figure);
    }
  }
  window.hx = window.hx || {};
  window.hx.renderCharts = renderAll;

  document.addEventListener("DOMContentLoaded", () => {
    if (window.Chart) {
      window.Chart.defaults.font.family = "system-ui, sans-serif";
      window.Chart.defaults.font.size = 12;
    }
    renderAll(document);
    const scheme = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
    if (scheme && scheme.addEventListener) scheme.addEventListener("change", () => renderAll(document));
  });
})();

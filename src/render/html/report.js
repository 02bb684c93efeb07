// imgsmith's HTML report: draws the page from the JSON blocks beside this
// script. Every string from the image (paths, created_by, labels) is
// written with textContent, never as markup; the page makes no request.
(function () {
  "use strict";
  const errors = [];
  function reportError(message) {
    errors.push(message);
    const box = document.getElementById("errors");
    if (box) {
      box.hidden = false;
      box.textContent = errors.join("\n");
    }
    document.body.dataset.errors = String(errors.length);
  }
  window.addEventListener("error", function (e) { reportError("error: " + e.message); });

  // ----- small helpers ------------------------------------------------------
  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "cls") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      }
    }
    for (const c of children || []) if (c) e.appendChild(c);
    return e;
  }
  function text(s) { return document.createTextNode(s == null ? "" : String(s)); }
  const UNITS = ["B", "kB", "MB", "GB", "TB", "PB"];
  function human(n) {
    if (n == null) return "unknown";
    let v = Math.abs(n), u = 0;
    while (v >= 1000 && u < UNITS.length - 1) { v /= 1000; u++; }
    const s = u === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2);
    return (n < 0 ? "-" : "") + s + " " + UNITS[u];
  }
  function exact(n) { return n == null ? "" : Number(n).toLocaleString("en-US") + " B"; }
  function signed(n) { return (n > 0 ? "+" : "") + human(n); }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }
  function data(id) {
    const block = document.getElementById(id);
    return block ? JSON.parse(block.textContent) : null;
  }
  function figure(label, value, detail) {
    return el("div", { cls: "figure" }, [
      el("div", { cls: "label", text: label }),
      el("div", { cls: "value", text: value }),
      detail ? el("div", { cls: "exact", text: detail }) : null,
    ]);
  }
  function table(headers, rows, numeric) {
    const head = el("tr", null, headers.map(function (h, i) {
      return el("th", { cls: numeric && numeric[i] ? "num" : "", text: h });
    }));
    const body = rows.map(function (cells) {
      return el("tr", null, cells.map(function (c, i) {
        const td = el("td", { cls: numeric && numeric[i] ? "num" : "" });
        if (c instanceof Node) td.appendChild(c); else td.textContent = c == null ? "" : String(c);
        return td;
      }));
    });
    return el("table", null, [el("thead", null, [head]), el("tbody", null, body)]);
  }
  function gateSection(gate) {
    const box = el("div", { id: "gate" });
    if (!gate || !gate.checks || gate.checks.length === 0) {
      box.appendChild(el("p", { cls: "empty", text: "No gate was set (--max-size, --budget, --deny, --fits ...)." }));
      return box;
    }
    box.appendChild(el("span", { cls: "verdict " + (gate.passed ? "pass" : "fail"),
      text: gate.passed ? "gates passed" : "gate failed" }));
    box.appendChild(el("ul", { cls: "checks" }, gate.checks.map(function (c) {
      return el("li", { cls: c.passed ? "pass" : "fail" },
        [text((c.passed ? "pass " : "FAIL ") + c.rule + ": " + c.message)]);
    })));
    return box;
  }

  // ----- colours: one hue a category, the same in every report ------------
  // The built-in categories (data/attribution-rules.json) have their own; a
  // category of the user's rules takes one from its name.
  const HUE_OF = { cuda: 140, framework: 12, python: 210, node: 105,
    ruby: 0, go: 190, rust: 20, os: 48, app: 280, cache: 330,
    "build-tools": 25, "model-weights": 180, other: 240 };
  const HUES = [95, 300, 160, 60, 265, 350, 120, 195];
  function hue(category) {
    if (Object.prototype.hasOwnProperty.call(HUE_OF, category)) return HUE_OF[category];
    let h = 0;
    for (const ch of String(category)) h = (h * 31 + ch.codePointAt(0)) >>> 0;
    return HUES[h % HUES.length];
  }
  function colour(category, depth) {
    return "hsl(" + hue(category) + ", 62%, " + Math.min(58 + depth * 7, 88) + "%)";
  }

  // ----- the squarified treemap (Bruls, Huizing, van Wijk 2000) -----------
  // items: [{value}], sorted largest first; returns [{item, x, y, w, h}]
  // covering the rectangle, each area proportional to its value.
  function squarify(items, x, y, w, h) {
    const out = [];
    const total = items.reduce(function (s, it) { return s + it.value; }, 0);
    if (total <= 0 || w <= 0 || h <= 0) return out;
    const scale = (w * h) / total;
    let row = [], rowArea = 0;
    function worst(areas, sum, side) {
      let max = 0, min = Infinity;
      for (const a of areas) { if (a > max) max = a; if (a < min) min = a; }
      const s2 = side * side, sum2 = sum * sum;
      return Math.max((s2 * max) / sum2, sum2 / (s2 * min));
    }
    function layRow() {
      if (row.length === 0) return;
      if (w >= h) {  // a column on the left
        const colW = rowArea / h;
        let yy = y;
        for (const r of row) { const hh = r.area / colW; out.push({ item: r.item, x: x, y: yy, w: colW, h: hh }); yy += hh; }
        x += colW; w -= colW;
      } else {  // a row on top
        const rowH = rowArea / w;
        let xx = x;
        for (const r of row) { const ww = r.area / rowH; out.push({ item: r.item, x: xx, y: y, w: ww, h: rowH }); xx += ww; }
        y += rowH; h -= rowH;
      }
      row = []; rowArea = 0;
    }
    for (const item of items) {
      if (!(item.value > 0)) continue;
      const area = item.value * scale;
      const side = Math.min(w, h);
      const areas = row.map(function (r) { return r.area; });
      if (row.length === 0 || worst(areas.concat([area]), rowArea + area, side) <= worst(areas, rowArea, side)) {
        row.push({ item: item, area: area }); rowArea += area;
      } else {
        layRow();
        row.push({ item: item, area: area }); rowArea = area;
      }
    }
    layRow();
    return out;
  }

  // ----- the analysis page ----------------------------------------------
  function analysisPage(app, report, tree) {
    const size = report.size || {};
    const dive = report.dive || {};
    const tags = (report.image && report.image.tags) || [];
    app.appendChild(el("h1", { text: report.source }));
    app.appendChild(el("p", { cls: "sub", text: (tags.length ? tags.join(", ") + " · " : "") +
      (report.format || "") + " · " + ((report.image && report.image.os) || "") + "/" +
      ((report.image && report.image.architecture) || "") }));
    app.appendChild(el("div", { cls: "figures" }, [
      figure("final size", human(size.final_bytes), exact(size.final_bytes)),
      figure("compressed", size.compressed_bytes == null ? "not compressed" : human(size.compressed_bytes),
        exact(size.compressed_bytes)),
      figure("in the layers", human(size.layers_bytes), exact(size.layers_bytes)),
      figure("wasted (hidden by later layers)", human(size.wasted_bytes), exact(size.wasted_bytes)),
      figure("efficiency (dive)", dive.efficiency == null ? "n/a" : pct(dive.efficiency),
        (size.final_entries || 0).toLocaleString("en-US") + " paths"),
    ]));
    const finalFigure = app.querySelector(".figure .exact");
    finalFigure.id = "final-bytes";
    finalFigure.dataset.bytes = String(size.final_bytes);
    app.appendChild(gateSection(report.gate));

    app.appendChild(el("h2", { text: "Where the bytes are" }));
    treemapSection(app, tree);
    categoriesTable(app, report);

    app.appendChild(el("h2", { text: "Layers" }));
    const layers = report.layers || [];
    const hidden = {};
    for (const w of report.waste || []) {
      hidden[w.added_by_layer] = (hidden[w.added_by_layer] || 0) + w.bytes;
    }
    const maxLayer = Math.max(1, ...layers.map(function (l) { return l.size_bytes; }));
    app.appendChild(table(["#", "added", "share", "hidden later", "created by"], layers.map(function (l) {
      const bar = el("div", { cls: "bar added" });
      bar.style.width = Math.max(0.2, (100 * l.size_bytes) / maxLayer) + "%";
      const cmd = el("span", { cls: "cmd", text: (l.base ? "[base] " : "") + (l.created_by || "") });
      return [String(l.index), human(l.size_bytes), bar, hidden[l.index] ? human(hidden[l.index]) : "", cmd];
    }), [true, true, false, true, false])).id = "layers";

    app.appendChild(el("h2", { text: "Findings" }));
    const findings = report.findings || [];
    if (findings.length === 0) app.appendChild(el("p", { cls: "empty", text: "No findings." }));
    else app.appendChild(table(["finding", "saves", "what", "fix"], findings.map(function (f) {
      // The message, then the paths the finding names (the largest, as many as --top).
      const what = el("div", null, [text(f.message)]);
      if ((f.paths || []).length)
        what.appendChild(el("ul", { cls: "paths" }, f.paths.map(function (p) {
          return el("li", null, [el("span", { cls: "cmd", text: p.path }), text(" " + human(p.bytes))]);
        })));
      return [el("span", { cls: f.info ? "info" : "", text: f.id + (f.info ? " (info)" : "") }),
        f.defect ? "defect" : human(f.bytes), what, f.fix];
    }), [false, true, false, false])).id = "findings";

    const models = report.models || [];
    if (models.length > 0) {
      app.appendChild(el("h2", { text: "Models: GPU memory to serve each" }));
      const rows = [];
      for (const m of models) {
        for (const p of (m.vram && m.vram.precisions) || []) {
          rows.push([m.path, m.format, m.parameters ? Number(m.parameters).toLocaleString("en-US") : "?",
            p.precision + (p.precision === "stored" && m.stored_dtype ? " " + m.stored_dtype : ""),
            human(p.weights), human(p.kv_cache), human(p.total),
            (p.fits_on || []).length ? p.fits_on.join(", ") : "no GPU of the table"]);
        }
      }
      app.appendChild(table(["model", "format", "parameters", "precision", "weights", "KV cache", "total", "fits on (one GPU)"],
        rows, [false, false, true, false, true, true, true, false]));
    }
    if (report.kernels && (report.kernels.binaries || []).length > 0) kernelsSection(app, report.kernels);
    if ((report.warnings || []).length) {
      app.appendChild(el("h2", { text: "Warnings" }));
      app.appendChild(el("ul", null, report.warnings.map(function (w) { return el("li", { text: w }); })));
    }
  }

  // The categories with their largest children, and who installed each
  // (origins: pip, apt, conda; the toolkit's or a wheel's CUDA copy) in the
  // table itself, not only on hover.
  function categoriesTable(app, report) {
    const categories = (report.categories || []).filter(function (c) { return c.bytes > 0; });
    if (!categories.length) return;
    const total = categories.reduce(function (s, c) { return s + c.bytes; }, 0);
    const origins = function (node) {
      const o = node.origins || {};
      return Object.keys(o).map(function (k) { return k + " " + human(o[k]); }).join(", ");
    };
    app.appendChild(table(["category", "bytes", "share", "largest children (who installed them)"],
      categories.map(function (c) {
        const name = el("span", { cls: "swatch", text: c.name });
        name.style.setProperty("--swatch", colour(c.name, 0));
        const children = (c.children || []).slice(0, 5).map(function (k) {
          const from = origins(k);
          return k.name + " " + human(k.bytes) + (from ? " (" + from + ")" : "");
        }).join("; ");
        return [name, human(c.bytes), pct(c.bytes / total), children];
      }), [false, true, true, false])).id = "categories";
  }

  // The image's CUDA binaries: per GPU of the table (by compute capability)
  // whether every one has code that runs there, then the binaries, most GPU
  // code first, with the code each carries.
  function kernelsSection(app, kernels) {
    const shown = 50;
    function baseName(p) { return String(p).slice(String(p).lastIndexOf("/") + 1); }
    function names(paths) {
      return paths.slice(0, 4).map(baseName).join(", ") + (paths.length > 4 ? " and " + (paths.length - 4) + " more" : "");
    }
    app.appendChild(el("h2", { text: "CUDA kernels: the GPUs this image's code runs on" }));
    app.appendChild(el("p", { cls: "sub", text: kernels.binaries.length + (kernels.binaries.length === 1 ? " CUDA binary: " : " CUDA binaries: ") +
      human(kernels.sass_bytes) + " of SASS, " + human(kernels.ptx_bytes) + " of PTX" }));
    const gpus = (kernels.gpus || []).slice().sort(function (a, b) {
      return parseFloat(a.compute_capability) - parseFloat(b.compute_capability);
    });
    const perGpu = app.appendChild(table(["GPU", "compute capability", "answer", "binaries", "PTX to compile"], gpus.map(function (g) {
      const jit = g.jit || [], none = g.none || [];
      const answer = !g.runs ? el("span", { cls: "gpu-fails", text: "fails: no kernel image" })
        : jit.length ? el("span", { cls: "gpu-jit", text: "JIT only" }) : "runs";
      return [g.gpu, g.compute_capability, answer, names(!g.runs ? none : jit), jit.length && g.runs ? human(g.jit_bytes) : ""];
    }), [false, false, false, false, true]));
    perGpu.id = "kernel-gpus";
    function codeBytes(b) {
      return (b.code || []).reduce(function (s, c) { return s + (c.kind === "sass" || c.kind === "ptx" ? c.bytes : 0); }, 0);
    }
    function codeOf(b, kind) {
      return (b.code || []).filter(function (c) { return c.kind === kind; }).map(function (c) {
        return c.name + (kind === "sass" && c.empty_entries === c.entries ? " (no kernels)" : "");
      }).join(" ");
    }
    const binaries = kernels.binaries.slice().sort(function (a, b) { return codeBytes(b) - codeBytes(a); });
    const perBinary = app.appendChild(table(["binary", "code", "SASS", "PTX", "CUDA runtime"], binaries.slice(0, shown).map(function (b) {
      const bytesOf = function (kind) {
        return human((b.code || []).reduce(function (s, c) { return s + (c.kind === kind ? c.bytes : 0); }, 0));
      };
      return [b.path, human(codeBytes(b)), codeOf(b, "sass") + (codeOf(b, "sass") ? " " : "") + "(" + bytesOf("sass") + ")",
        codeOf(b, "ptx") ? codeOf(b, "ptx") + " (" + bytesOf("ptx") + ")" : "", b.cudart || ""];
    }), [false, true, false, false, false]));
    perBinary.id = "kernel-binaries";
    if (binaries.length > shown)
      app.appendChild(el("p", { cls: "empty", text: "and " + (binaries.length - shown) + " more binaries (--format json lists them all)" }));
  }

  function treemapSection(app, tree) {
    const categories = (tree.k || []).map(function (c) { return c.n; });
    const crumbs = el("div", { cls: "crumbs", id: "crumbs" });
    const search = el("input", { type: "search", id: "search", placeholder: "find a path (2+ characters)",
      "aria-label": "find a path" });
    const legend = el("div", { cls: "legend" }, categories.map(function (c) {
      const s = el("span", { text: c });
      s.style.setProperty("--swatch", colour(c, 0));
      return s;
    }));
    const results = el("ul", { id: "search-results" });
    const map = el("div", { id: "treemap", role: "img", "aria-label": "treemap of the final filesystem" });
    const tip = el("div", { id: "tip", hidden: "" });
    app.appendChild(el("div", { cls: "tools" }, [search, legend]));
    app.appendChild(results);
    app.appendChild(crumbs);
    app.appendChild(map);
    document.body.appendChild(tip);

    // Each node knows its parent and category; its address is the kid
    // indices from the top, kept in the URL's hash (#t=2.0.5).
    (function link(node, parent, category, path) {
      node.parent = parent;
      node.category = category;
      node.path = path;
      (node.k || []).forEach(function (k, i) {
        link(k, node, parent ? category : k.n, path.concat([i]));
      });
    })(tree, null, "", []);
    function nodeAt(path) {
      let n = tree;
      for (const i of path) { if (!n.k || !n.k[i]) return null; n = n.k[i]; }
      return n;
    }
    function label(n) { return n.m ? "(" + n.m.toLocaleString("en-US") + " smaller)" : n.n; }
    function fullPath(n) {
      const names = [];
      for (let p = n; p && p.parent; p = p.parent) if (p.parent.parent) names.unshift(label(p));
      return "/" + names.join("/");
    }
    function describe(n) {
      let s = (n.parent && n.parent.parent ? fullPath(n) : n.n) + "\n" + exact(n.b) + " (" + human(n.b) + ")";
      if (n.k || n.m) s += ", " + Number(n.f).toLocaleString("en-US") + " files";
      if (n.l != null) s += "\nlayer " + n.l;
      s += "\ncategory " + n.category + (n.c ? " / " + n.c : "") + (n.o ? ", from " + n.o : "");
      return s;
    }
    function zoomTo(n) { location.hash = "t=" + n.path.join("."); }
    function current() {
      const m = /^#t=([0-9.]*)$/.exec(location.hash);
      const path = m && m[1] ? m[1].split(".").map(Number) : [];
      return nodeAt(path) || tree;
    }
    function draw() {
      const node = current();
      crumbs.textContent = "";
      const chain = [];
      for (let p = node; p; p = p.parent) chain.unshift(p);
      for (const p of chain) {
        const b = el("button", { type: "button", text: p.parent ? label(p) : "all categories" });
        b.addEventListener("click", function () { zoomTo(p); });
        crumbs.appendChild(b);
      }
      map.textContent = "";
      const W = map.clientWidth, H = map.clientHeight;
      drawnSize = W + "x" + H;
      map.dataset.node = node.path.join(".");
      place(node, 0, 0, W, H, 0, map);
      document.body.dataset.zoom = node.path.join(".");
    }
    // Draws the kids of `node` in the rectangle, and inside each large
    // enough kid, its own kids: two levels at a time.
    function place(node, x, y, w, h, depth, parentEl) {
      const kids = (node.k || []).filter(function (k) { return k.b > 0; })
        .map(function (k) { return { value: k.b, node: k }; });
      kids.sort(function (a, b) { return b.value - a.value; });
      for (const r of squarify(kids, x, y, w, h)) {
        const k = r.item.node;
        const box = el("div", { cls: "tm" + (k.k && k.k.length ? " zoomable" : "") + (k.m ? " more" : "") });
        box.style.left = r.x + "px";
        box.style.top = r.y + "px";
        box.style.width = r.w + "px";
        box.style.height = r.h + "px";
        box.style.background = colour(k.category, depth + (node.parent ? 1 : 0));
        box.dataset.bytes = String(k.b);
        box.dataset.name = label(k);
        if (depth === 0) box.classList.add("top");
        if (r.w > 36 && r.h > 15) {
          box.appendChild(el("div", { cls: "tm-label", text: label(k) }));
          if (r.h > 30) box.appendChild(el("div", { cls: "tm-size", text: human(k.b) }));
        }
        box.addEventListener("mousemove", function (e) {
          e.stopPropagation();
          tip.hidden = false;
          tip.textContent = describe(k);
          tip.style.whiteSpace = "pre-wrap";
          tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 540) + "px";
          tip.style.top = (e.clientY + 14) + "px";
        });
        box.addEventListener("mouseleave", function () { tip.hidden = true; });
        box.addEventListener("click", function (e) {
          e.stopPropagation();
          tip.hidden = true;
          if (k.k && k.k.length) zoomTo(k);
        });
        parentEl.appendChild(box);
        // Nested while there is room to read them: up to three levels.
        if (depth < 2 && k.k && r.w > 60 && r.h > 50) place(k, 1, 30, r.w - 4, r.h - 33, depth + 1, box);
      }
    }
    search.addEventListener("input", function () {
      results.textContent = "";
      const q = search.value.toLowerCase();
      if (q.length < 2) return;
      const found = [];
      (function walk(n) {
        if (found.length >= 50) return;
        if (n.parent && n.parent.parent && !n.m && n.n.toLowerCase().indexOf(q) >= 0) found.push(n);
        (n.k || []).forEach(walk);
      })(tree);
      for (const n of found) {
        const li = el("li", { text: fullPath(n) + "  " + human(n.b) + "  [" + n.category + "]" });
        li.addEventListener("click", function () { zoomTo(n.k && n.k.length ? n : n.parent); });
        results.appendChild(li);
      }
      if (found.length === 0) results.appendChild(el("li", { cls: "empty", text: "no path among the shown ones matches" }));
    });
    window.addEventListener("hashchange", draw);
    // Redrawn when the treemap's own size changes, not on every resize.
    let drawnSize = "";
    window.addEventListener("resize", function () {
      const now = map.clientWidth + "x" + map.clientHeight;
      if (now !== drawnSize) draw();
    });
    if ((tree.k || []).length === 0)
      map.appendChild(el("p", { cls: "empty", text: "No file list in this report (a saved report keeps categories only)." }));
    draw();
  }

  // ----- the diff page --------------------------------------------------
  function diffPage(app, d) {
    const s = d.size || {};
    app.appendChild(el("h1", { text: "imgsmith diff" }));
    app.appendChild(el("p", { cls: "sub", text: d.old.source + "  →  " + d.new.source }));
    function change(label, c) {
      return figure(label, signed(c.delta), human(c.old) + " → " + human(c.new));
    }
    app.appendChild(el("div", { cls: "figures" }, [
      change("final size", s.final_bytes), change("in the layers", s.layers_bytes),
      change("wasted", s.wasted_bytes), change("compressed", s.compressed_bytes),
    ]));
    const fin = app.querySelector(".figure .value");
    fin.id = "final-delta";
    fin.dataset.bytes = String(s.final_bytes.delta);
    app.appendChild(gateSection(d.gate));

    app.appendChild(el("h2", { text: "By category" }));
    const cats = (d.categories || []).filter(function (c) { return c.old || c.new; });
    const maxDelta = Math.max(1, ...cats.map(function (c) { return Math.abs(c.delta); }));
    app.appendChild(table(["category", "old", "new", "change", ""], cats.map(function (c) {
      const bar = el("div", { cls: "bar " + (c.delta > 0 ? "grew" : "shrank") });
      bar.style.width = (100 * Math.abs(c.delta)) / maxDelta + "%";
      return [c.name, human(c.old), human(c.new),
        el("span", { cls: c.delta > 0 ? "grew" : c.delta < 0 ? "shrank" : "", text: signed(c.delta) }), bar];
    }), [false, true, true, true, false])).id = "categories";

    const f = d.files || {};
    function fileList(title, list, cls, bytesOf) {
      app.appendChild(el("h2", { text: title }));
      if (!list || list.length === 0) { app.appendChild(el("p", { cls: "empty", text: "none" })); return; }
      app.appendChild(table(["path", "bytes"], list.map(function (x) {
        return [x.path, el("span", { cls: cls, text: bytesOf(x) })];
      }), [false, true]));
    }
    fileList("Files added", f.added, "grew", function (x) { return "+" + human(x.bytes); });
    fileList("Files removed", f.removed, "shrank", function (x) { return "-" + human(x.bytes); });
    fileList("Files that changed size", f.resized, "", function (x) {
      return human(x.old_bytes) + " → " + human(x.new_bytes);
    });
    app.appendChild(el("h2", { text: "Layers" }));
    const l = d.layers || {};
    app.appendChild(table(["", "#", "bytes", "created by"], [].concat(
      (l.rebuilt || []).map(function (x) { return ["rebuilt", String(x.index), human(x.size_bytes), x.created_by]; }),
      (l.added || []).map(function (x) { return ["added", String(x.index), human(x.size_bytes), x.created_by]; }),
      (l.removed || []).map(function (x) { return ["removed", String(x.index), human(x.size_bytes), x.created_by]; })
    ), [false, true, true, false]));
    app.appendChild(el("p", { cls: "sub", text: (l.shared || 0) + " layers shared" }));
    if (d.packages) {
      const p = d.packages;
      app.appendChild(el("h2", { text: "Packages" }));
      app.appendChild(table(["", "installer", "package", "version"], [].concat(
        (p.changed || []).map(function (x) { return ["changed", x.installer, x.name, x.old_version + " → " + x.new_version]; }),
        (p.added || []).map(function (x) { return ["added", x.installer, x.name, x.new_version]; }),
        (p.removed || []).map(function (x) { return ["removed", x.installer, x.name, x.old_version]; })
      ), [false, false, false, false]));
    }
    const fd = d.findings || {};
    app.appendChild(el("h2", { text: "Findings" }));
    app.appendChild(table(["", "finding", "saves"], [].concat(
      (fd.appeared || []).map(function (x) { return ["appeared", x.id, human(x.bytes)]; }),
      (fd.gone || []).map(function (x) { return ["gone", x.id, human(x.bytes)]; }),
      (fd.changed || []).map(function (x) { return ["changed", x.id, human(x.bytes)]; })
    ), [false, false, true]));
  }

  try {
    const app = document.getElementById("app");
    if (document.body.dataset.kind === "diff") diffPage(app, data("imgsmith-diff"));
    else analysisPage(app, data("imgsmith-report"), data("imgsmith-tree") || { n: "/", b: 0, k: [] });
  } catch (e) {
    reportError("error: " + (e && e.message ? e.message : String(e)));
  }
  document.body.dataset.ready = "1";
})();

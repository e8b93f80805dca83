/* flopkb site script: typesets formulas with KaTeX and draws link graphs with
 * Cytoscape. Both libraries are vendored under assets/vendor/ and loaded
 * before this file; nothing is fetched from outside the site.
 *
 * Formulas: pymdownx.arithmatex (generic: true) writes
 *   <span class="arithmatex">\( ... \)</span>   inline
 *   <div class="arithmatex">\[ ... \]</div>     display
 * and every such element is rendered in place (trust: false, so formula text
 * from records cannot make links or run anything).
 *
 * Graphs: <div class="flopkb-graph" data-graph="URL"> fetches URL (relative to
 * the page), or data-graph="#some-id" reads the JSON text of the element with
 * that id (a hidden <div>, which also works from file://; not a <script>, which
 * Material's instant navigation would run as JavaScript). The JSON:
 *   { "nodes":  [{"id": "...", "label": "...", "kind": "flop", "href": "...",
 *                 "x": 0, "y": 0}],            // label, kind, href, x/y optional
 *     "edges":  [{"source": "...", "target": "...", "kind": "..."}],
 *     "focus":  "node id",                     // optional: the page's own record
 *     "layout": "cose" }                       // optional; see pickLayout()
 * Node hrefs are resolved against the JSON's own URL (against the page for
 * inline JSON). Clicking a node with an href opens it. Whatever the div held
 * before (e.g. a fallback list of links for readers without JavaScript) is
 * replaced by the graph. Options on the div: data-layout="...",
 * class "flopkb-graph--small" for a neighbourhood graph.
 *
 * For tests and readers' consoles: window.flopkbGraph is the last graph drawn
 * (a Cytoscape instance), window.flopkbGraphs all of them, and each div gets
 * data-state="ready" (or "error") when done.
 */
(function () {
  "use strict";

  var KIND_COLOURS = {
    flop: "#d55e00",
    fact: "#0072b2",
    engine: "#009e73",
    accelerator: "#cc79a7",
    source: "#e69f00"
  };
  var OTHER_COLOUR = "#8c959f";

  var flopkb = window.flopkb = window.flopkb || {};
  window.flopkbGraphs = window.flopkbGraphs || [];

  /* ---------------------------------------------------------------- math */

  function renderMath(root) {
    if (!window.katex) {
      if (root.querySelector(".arithmatex")) console.error("flopkb: KaTeX is not loaded");
      return;
    }
    var nodes = root.querySelectorAll(".arithmatex");
    var displayed = [];
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      if (el.getAttribute("data-math") === "done") continue;
      var tex = el.textContent.trim();
      var display = el.tagName === "DIV";
      if (tex.slice(0, 2) === "\\(" && tex.slice(-2) === "\\)") {
        tex = tex.slice(2, -2);
      } else if (tex.slice(0, 2) === "\\[" && tex.slice(-2) === "\\]") {
        tex = tex.slice(2, -2);
        display = true;
      }
      try {
        window.katex.render(tex, el, {
          displayMode: display,
          throwOnError: false,
          trust: false,
          strict: "ignore",
          output: "htmlAndMathml"
        });
        el.setAttribute("data-math", "done");
        if (display) displayed.push(el);
      } catch (err) {
        el.setAttribute("data-math", "error");
        console.error("flopkb: cannot typeset formula", tex, err);
      }
    }
    // Measured once KaTeX's fonts are in: before, the formula has the width of a fallback font.
    var fit = function () { displayed.forEach(fitWidth); };
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(fit); else fit();
  }

  /* A display formula wider than its column is set smaller, down to
   * MIN_MATH_SCALE of its size (what is still wider scrolls sideways): a
   * long formula reads whole on a phone rather than cut at the edge. */
  var MIN_MATH_SCALE = 0.6;
  function fitWidth(el) {
    el.style.fontSize = "";
    var full = parseFloat(getComputedStyle(el).fontSize);
    var size = full;
    // Text does not scale quite linearly (rounding, fixed spacing): a few steps.
    for (var step = 0; step < 4 && el.clientWidth && el.scrollWidth > el.clientWidth + 1; step++) {
      size = Math.max(full * MIN_MATH_SCALE, size * el.clientWidth / el.scrollWidth - 0.25);
      el.style.fontSize = size.toFixed(2) + "px";
      if (size <= full * MIN_MATH_SCALE) break;
    }
  }

  /* --------------------------------------------------------------- graphs */

  /* Material's colours are CSS variables in forms Cytoscape cannot read
   * (8-digit hex, hsla(var(...))): let the browser resolve one to rgba, then
   * flatten it onto the page background to an opaque rgb(). */
  function rgba(expr, root) {
    var probe = document.createElement("span");
    probe.style.color = expr;
    probe.style.display = "none";
    root.appendChild(probe);
    var m = getComputedStyle(probe).color.match(/[\d.]+/g) || ["0", "0", "0"];
    root.removeChild(probe);
    return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1];
  }

  function themeColours(el) {
    var bg = rgba("var(--md-default-bg-color, #ffffff)", el);
    function flat(expr, fallback) {
      var c = rgba("var(" + expr + ", " + fallback + ")", el), a = c[3];
      return "rgb(" + [0, 1, 2].map(function (i) {
        return Math.round(c[i] * a + bg[i] * (1 - a));
      }).join(",") + ")";
    }
    return {
      fg: flat("--md-default-fg-color", "#1f2328"),
      bg: "rgb(" + bg.slice(0, 3).join(",") + ")",
      line: flat("--md-default-fg-color--lighter", "#00000052")
    };
  }

  function loadGraphData(el) {
    var ref = el.getAttribute("data-graph") || "";
    if (ref.charAt(0) === "#") {
      var holder = document.getElementById(ref.slice(1));
      if (!holder) return Promise.reject(new Error("no element " + ref));
      return Promise.resolve({ data: JSON.parse(holder.textContent), base: document.baseURI });
    }
    var url = new URL(ref, document.baseURI).href;
    return fetch(url).then(function (res) {
      if (!res.ok) throw new Error(res.status + " " + res.statusText + " for " + url);
      return res.json();
    }).then(function (data) { return { data: data, base: url }; });
  }

  /* Hop distance from `focus` over undirected edges (for the concentric layout). */
  function distances(data, focus) {
    var adj = {}, dist = {}, queue = [focus];
    (data.edges || []).forEach(function (e) {
      (adj[e.source] = adj[e.source] || []).push(e.target);
      (adj[e.target] = adj[e.target] || []).push(e.source);
    });
    dist[focus] = 0;
    while (queue.length) {
      var n = queue.shift();
      (adj[n] || []).forEach(function (m) {
        if (!(m in dist)) { dist[m] = dist[n] + 1; queue.push(m); }
      });
    }
    return dist;
  }

  function pickLayout(el, data, count) {
    var name = el.getAttribute("data-layout") || data.layout || "";
    var nodes = data.nodes || [];
    var preset = nodes.length > 0 && nodes.every(function (n) {
      return typeof n.x === "number" && typeof n.y === "number";
    });
    if (!name && preset) name = "preset";
    if (!name && data.focus) name = "focus";
    if (!name) name = count <= 600 ? "cose" : "concentric";
    if (name === "focus") {
      var dist = distances(data, data.focus), max = 0;
      Object.keys(dist).forEach(function (k) { if (dist[k] > max) max = dist[k]; });
      return {
        name: "concentric", animate: false, padding: 24, minNodeSpacing: 28,
        concentric: function (n) { var d = dist[n.id()]; return d === undefined ? 0 : max + 1 - d; },
        levelWidth: function () { return 1; }
      };
    }
    if (name === "preset") return { name: "preset", animate: false, padding: 24 };
    if (name === "cose") {
      return { name: "cose", animate: false, padding: 24, nodeRepulsion: function () { return 9000; },
               idealEdgeLength: function () { return 60; }, numIter: 1500 };
    }
    if (name === "concentric") {
      return { name: "concentric", animate: false, padding: 24, minNodeSpacing: 12,
               concentric: function (n) { return n.degree(); } };
    }
    return { name: name, animate: false, padding: 24 };
  }

  function legend(el, kinds) {
    var box = document.createElement("div");
    box.className = "flopkb-graph-legend";
    kinds.forEach(function (k) {
      var item = document.createElement("span");
      item.className = "flopkb-graph-legend__item";
      var dot = document.createElement("span");
      dot.className = "flopkb-graph-legend__dot";
      dot.style.background = KIND_COLOURS[k] || OTHER_COLOUR;
      item.appendChild(dot);
      item.appendChild(document.createTextNode(k || "other"));
      box.appendChild(item);
    });
    el.parentNode.insertBefore(box, el.nextSibling);
  }

  function drawGraph(el, data, base) {
    var seen = {}, kinds = {}, elements = [];
    (data.nodes || []).forEach(function (n) {
      if (n.id === undefined || seen[n.id]) return;
      var id = String(n.id);
      seen[id] = true;
      var kind = n.kind ? String(n.kind) : "";
      kinds[kind] = true;
      var href = "";
      if (n.href) {
        var u = new URL(String(n.href), base);
        if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "file:") href = u.href;
      }
      var node = { group: "nodes", data: { id: id, label: String(n.label || id), kind: kind,
                   colour: KIND_COLOURS[kind] || OTHER_COLOUR, href: href } };
      if (typeof n.x === "number" && typeof n.y === "number") node.position = { x: n.x, y: n.y };
      if (data.focus !== undefined && String(data.focus) === id) node.classes = "focus";
      elements.push(node);
    });
    var edges = 0;
    (data.edges || []).forEach(function (e, i) {
      var s = String(e.source), t = String(e.target);
      if (!seen[s] || !seen[t]) return;
      edges++;
      elements.push({ group: "edges", data: { id: "e" + i, source: s, target: t, kind: String(e.kind || "") } });
    });

    var colours = themeColours(el);
    var fg = colours.fg, bg = colours.bg, line = colours.line;
    var small = el.classList.contains("flopkb-graph--small");
    // Labels are cut to a quarter of a narrow box (a phone's), so that the most linked records find room.
    var LABEL_SIZE = small ? 11 : 10, FOCUS_SIZE = 12;
    var LABEL_WIDTH = Math.round(Math.min(140, Math.max(80, el.clientWidth / 4)));
    // Label sizes in screen pixels: style functions read the zoom that fitLabels() last applied.
    var view = { zoom: 1 };
    function onScreen(px) { return function () { return px / view.zoom; }; }

    el.textContent = "";
    el.classList.add("flopkb-graph--live");
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "Link graph: " + Object.keys(seen).length + " records, " + edges + " links");

    var cy = window.cytoscape({
      container: el,
      elements: elements,
      layout: pickLayout(el, data, Object.keys(seen).length),
      minZoom: 0.05,
      maxZoom: 4,
      style: [
        { selector: "node", style: {
          "background-color": "data(colour)", "label": "data(label)", "color": fg,
          "font-size": onScreen(LABEL_SIZE), "text-valign": "bottom", "text-margin-y": onScreen(4),
          "width": 14, "height": 14,
          "text-wrap": "ellipsis", "text-max-width": onScreen(LABEL_WIDTH),
          "text-background-color": bg, "text-background-opacity": 0.75, "text-background-padding": onScreen(1),
          "border-width": 1.5, "border-color": bg } },
        { selector: "node.focus", style: {
          "width": 24, "height": 24, "font-weight": "bold", "font-size": onScreen(FOCUS_SIZE),
          "border-width": 3, "border-color": fg } },
        { selector: "node.flopkb-nolabel", style: { "text-opacity": 0, "text-background-opacity": 0 } },
        { selector: "node.flopkb-hub", style: { "z-index": 10 } },
        { selector: "node.flopkb-label-above", style: { "text-valign": "top", "text-margin-y": onScreen(-4) } },
        { selector: "node.flopkb-label-right", style: {
          "text-valign": "center", "text-halign": "right", "text-margin-y": 0, "text-margin-x": onScreen(4) } },
        { selector: "node.flopkb-label-left", style: {
          "text-valign": "center", "text-halign": "left", "text-margin-y": 0, "text-margin-x": onScreen(-4) } },
        { selector: "node.flopkb-label-below-right", style: {
          "text-halign": "right", "text-margin-x": onScreen(4), "text-margin-y": onScreen(4) } },
        { selector: "node.flopkb-label-above-right", style: {
          "text-valign": "top", "text-halign": "right", "text-margin-x": onScreen(4), "text-margin-y": onScreen(-4) } },
        { selector: "node.flopkb-label-below-left", style: {
          "text-halign": "left", "text-margin-x": onScreen(-4), "text-margin-y": onScreen(4) } },
        { selector: "node.flopkb-label-above-left", style: {
          "text-valign": "top", "text-halign": "left", "text-margin-x": onScreen(-4), "text-margin-y": onScreen(-4) } },
        // Where every place beside its dot is taken, a hub's label moves a line further out.
        { selector: "node.flopkb-label-far-below", style: { "text-margin-y": onScreen(6 + LABEL_SIZE * 1.3) } },
        { selector: "node.flopkb-label-far-above", style: {
          "text-valign": "top", "text-margin-y": onScreen(-6 - LABEL_SIZE * 1.3) } },
        { selector: "node.flopkb-label-far-below-right", style: {
          "text-halign": "right", "text-margin-x": onScreen(4), "text-margin-y": onScreen(6 + LABEL_SIZE * 1.3) } },
        { selector: "node.flopkb-label-far-below-left", style: {
          "text-halign": "left", "text-margin-x": onScreen(-4), "text-margin-y": onScreen(6 + LABEL_SIZE * 1.3) } },
        { selector: "edge", style: {
          "width": 1.2, "line-color": line, "curve-style": edges > 2000 ? "haystack" : "bezier",
          "target-arrow-shape": edges > 2000 ? "none" : "triangle", "target-arrow-color": line,
          "arrow-scale": 0.8,
          // Thousands of edges would hide the records: draw them faint, darker on hover.
          "opacity": edges > 20000 ? 0.06 : edges > 2000 ? 0.25 : 1 } },
        { selector: ".faded", style: { "opacity": 0.15 } },
        { selector: "edge.faded", style: { "opacity": edges > 2000 ? 0.02 : 0.15 } },
        { selector: "edge.near", style: { "line-color": fg, "target-arrow-color": fg, "width": 2, "opacity": 1 } }
      ],
      // Big graphs: draw edges only when the view is still (panning stays fluid).
      hideEdgesOnViewport: edges > 5000,
      textureOnViewport: edges > 5000
    });

    // A handful of nodes would otherwise be blown up to fill the box.
    var cap = small ? 1.3 : 1.6;
    function capZoom() {
      if (cy.zoom() > cap) {
        cy.zoom(cap);
        cy.center();
      }
    }
    capZoom();
    // The box can change size after the graph is drawn (a phone turned): the graph is fitted to it again, until
    // the reader zooms or pans it.
    var moved = false;
    ["wheel", "pointerdown", "touchstart"].forEach(function (name) {
      el.addEventListener(name, function () { moved = true; }, { passive: true });
    });
    if (window.ResizeObserver) {
      var size = [el.clientWidth, el.clientHeight];
      new ResizeObserver(function () {
        if (size[0] === el.clientWidth && size[1] === el.clientHeight) return;
        size = [el.clientWidth, el.clientHeight];
        cy.resize();
        if (moved) return;
        cy.fit(undefined, 24);
        capZoom();
      }).observe(el);
    }

    fitLabels(cy, view, LABEL_WIDTH);
    var pending = null;
    cy.on("viewport", function () {
      if (pending) clearTimeout(pending);
      pending = setTimeout(function () { pending = null; fitLabels(cy, view, LABEL_WIDTH); }, 120);
    });

    // The full title of the record under the pointer (labels are cut at LABEL_WIDTH, or hidden where crowded).
    var tip = document.createElement("div");
    tip.className = "flopkb-graph-tip";
    tip.setAttribute("role", "tooltip");
    tip.hidden = true;
    el.appendChild(tip);

    cy.on("tap", "node", function (evt) {
      var href = evt.target.data("href");
      if (href) window.location.href = href;
    });
    cy.on("mouseover", "node", function (evt) {
      var node = evt.target, near = node.closedNeighborhood();
      cy.elements().not(near).addClass("faded");
      near.edges().addClass("near");
      el.style.cursor = node.data("href") ? "pointer" : "default";
      var p = node.renderedPosition();
      tip.textContent = node.data("label");
      tip.hidden = false;
      tip.style.left = Math.round(Math.min(p.x + 12, el.clientWidth - tip.offsetWidth - 4)) + "px";
      tip.style.top = Math.round(p.y > el.clientHeight - 40 ? p.y - tip.offsetHeight - 12 : p.y + 14) + "px";
    });
    cy.on("mouseout", "node", function () {
      cy.elements().removeClass("faded").removeClass("near");
      el.style.cursor = "";
      tip.hidden = true;
    });

    legend(el, Object.keys(kinds).sort());
    window.flopkbGraphs.push(cy);
    window.flopkbGraph = cy;
    el.setAttribute("data-state", "ready");
    return cy;
  }

  /* Labels keep their size on screen whatever the zoom (the style's sizes divide by `view.zoom`), and only those
   * that overlap no label already shown and no other record's dot are drawn: the focus first, then by number of
   * links, then by id (the same labels on every load). The most linked records in view (`hubCount`) matter most
   * and sit among the most dots: their labels may cover other records' dots (drawn above them), never another
   * label, and go beside or above their dot, or a line further out, where below has no room. Zooming in makes room, so more labels show; hovering shows any record's full title. Only records in
   * view are weighed, so that a big graph stays quick to pan. */
  function hubCount(count) { return Math.max(5, Math.round(Math.sqrt(count))); }
  var PLACES = ["flopkb-label-above", "flopkb-label-right", "flopkb-label-left", "flopkb-label-below-right",
                "flopkb-label-above-right", "flopkb-label-below-left", "flopkb-label-above-left",
                "flopkb-label-far-below", "flopkb-label-far-above", "flopkb-label-far-below-right",
                "flopkb-label-far-below-left"];

  function fitLabels(cy, view, labelWidth) {
    if (view.zoom !== cy.zoom()) {
      view.zoom = cy.zoom();
      cy.style().update();
    }
    var w = cy.width(), h = cy.height(), cell = 120, grid = {}, shown = 0;
    var inView = cy.nodes().filter(function (n) {
      var p = n.renderedPosition();
      return p.x > -labelWidth && p.x < w + labelWidth && p.y > -40 && p.y < h + 40;
    });
    cy.nodes().addClass("flopkb-nolabel").removeClass(PLACES.join(" "));
    inView.removeClass("flopkb-nolabel");
    function cells(b, visit) {
      for (var i = Math.floor(b.x1 / cell); i <= Math.floor(b.x2 / cell); i++) {
        for (var j = Math.floor(b.y1 / cell); j <= Math.floor(b.y2 / cell); j++) {
          if (visit(i + "," + j) === false) return false;
        }
      }
      return true;
    }
    function put(b) { cells(b, function (k) { (grid[k] = grid[k] || []).push(b); }); }
    function free(b, overDots) {
      return cells(b, function (k) {
        var list = grid[k] || [];
        for (var i = 0; i < list.length; i++) {
          var o = list[i];
          if (overDots && o.dot) continue;
          if (b.x1 < o.x2 && o.x1 < b.x2 && b.y1 < o.y2 && o.y1 < b.y2 && o.owner !== b.owner) return false;
        }
      });
    }
    function labelBox(n) {
      var b = n.renderedBoundingBox({ includeNodes: false, includeLabels: true, includeOverlays: false });
      return { x1: b.x1 - 1, y1: b.y1 - 1, x2: b.x2 + 1, y2: b.y2 + 1, owner: n.id() };
    }
    var boxes = inView.map(function (n) {
      var d = n.renderedBoundingBox({ includeNodes: true, includeLabels: false, includeOverlays: false });
      return { node: n, label: labelBox(n), dot: { x1: d.x1, y1: d.y1, x2: d.x2, y2: d.y2, owner: n.id(), dot: true } };
    });
    boxes.forEach(function (b) { put(b.dot); });
    boxes.sort(function (a, b) {
      var fa = a.node.hasClass("focus") ? 1 : 0, fb = b.node.hasClass("focus") ? 1 : 0;
      if (fa !== fb) return fb - fa;
      var da = a.node.degree(), db = b.node.degree();
      if (da !== db) return db - da;
      return a.node.id() < b.node.id() ? -1 : a.node.id() > b.node.id() ? 1 : 0;
    });
    var hubs = boxes.slice(0, hubCount(boxes.length)), rest = boxes.slice(hubs.length);
    cy.nodes().removeClass("flopkb-hub");
    // A hub's label goes below its dot or, where that has no room, at the first of PLACES that has (measured
    // there: one record at a time, so only for the few hubs).
    hubs.forEach(function (b) {
      for (var i = 0; i <= PLACES.length; i++) {
        if (i > 0) b.node.removeClass(PLACES.join(" ")).addClass(PLACES[i - 1]);
        var box = i > 0 ? labelBox(b.node) : b.label;
        if (box.x2 - box.x1 > 2 && free(box, true)) {
          put(box);
          shown++;
          b.node.addClass("flopkb-hub");
          return;
        }
      }
      b.node.removeClass(PLACES.join(" ")).addClass("flopkb-nolabel");
    });
    cy.batch(function () {
      rest.forEach(function (b) {
        if (b.label.x2 - b.label.x1 > 2 && free(b.label, false)) { put(b.label); shown++; }
        else b.node.addClass("flopkb-nolabel");
      });
    });
    return shown;
  }

  /* Material's palette toggle switches data-md-color-scheme on <body>:
   * recolour the graphs to match. */
  function recolour() {
    window.flopkbGraphs.forEach(function (cy) {
      var c = themeColours(cy.container());
      cy.style()
        .selector("node").style({ "color": c.fg, "text-background-color": c.bg, "border-color": c.bg })
        .selector("node.focus").style({ "border-color": c.fg })
        .selector("edge").style({ "line-color": c.line, "target-arrow-color": c.line })
        .selector("edge.near").style({ "line-color": c.fg, "target-arrow-color": c.fg })
        .update();
    });
  }
  if (window.MutationObserver) {
    new MutationObserver(recolour).observe(document.body, {
      attributes: true, attributeFilter: ["data-md-color-scheme"]
    });
  }

  /* Graphs are drawn once the page's styles are in (its first load's "load" event; at once on a page swapped in by
   * instant navigation): before, the graph's box has not its size yet. */
  var pageLoaded = new Promise(function (done) {
    if (document.readyState === "complete") done();
    else window.addEventListener("load", function () { done(); }, { once: true });
  });

  function initGraphs(root) {
    var els = root.querySelectorAll(".flopkb-graph[data-graph]:not([data-state])");
    var jobs = [];
    for (var i = 0; i < els.length; i++) {
      (function (el) {
        if (!window.cytoscape) {
          el.setAttribute("data-state", "error");
          console.error("flopkb: Cytoscape is not loaded");
          return;
        }
        el.setAttribute("data-state", "loading");
        jobs.push(Promise.all([loadGraphData(el), pageLoaded]).then(function (all) {
          var r = all[0];
          return drawGraph(el, r.data, r.base);
        }).catch(function (err) {
          el.setAttribute("data-state", "error");
          console.error("flopkb: cannot draw graph", el.getAttribute("data-graph"), err);
        }));
      })(els[i]);
    }
    return Promise.all(jobs);
  }

  /* After an instant navigation the previous page's graphs are gone from the document: let them go. */
  function forgetGone() {
    window.flopkbGraphs = window.flopkbGraphs.filter(function (cy) {
      if (document.body.contains(cy.container())) return true;
      cy.destroy();
      return false;
    });
    if (window.flopkbGraph && window.flopkbGraphs.indexOf(window.flopkbGraph) < 0) {
      window.flopkbGraph = window.flopkbGraphs[window.flopkbGraphs.length - 1];
    }
  }

  function init(root) {
    forgetGone();
    renderMath(root);
    flopkb.ready = initGraphs(root);
    // Which page this script last set up (a test waits for it after a link swapped a page in).
    document.documentElement.setAttribute("data-flopkb-page", location.pathname);
    return flopkb.ready;
  }

  flopkb.renderMath = renderMath;
  flopkb.initGraphs = initGraphs;
  flopkb.kindColours = KIND_COLOURS;

  // Material publishes every page load (including instant navigation) on
  // document$; without Material, run once the DOM is there.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { init(document.body); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document.body); });
  } else {
    init(document.body);
  }
})();

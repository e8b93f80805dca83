/* flopkb link previews: a card for every link to a record, on hover, on
 * keyboard focus, and on touch (a first tap shows the card, a second follows
 * the link). Escape closes it.
 *
 * Each record's preview is a script written with the site,
 * previews/<record id>.js, that calls flopkbPreview({...}): loaded by a
 * <script> element, it works from file:// as well as from a server. It holds
 * the record's kind, title, evidence status and first paragraph, and for
 * each formula its expression and first value per accelerator; a link to
 * record#formula shows that formula, with the values on the accelerators of
 * the page being read (data-flopkb-accelerators on the page's meta line)
 * when it has any.
 *
 * The card is one element, absolutely positioned at the end of <body>: it
 * never moves the page's text. While open it describes its link
 * (aria-describedby) and, being a polite live region, is read out.
 * Listeners are on the document, so pages swapped in by instant navigation
 * get previews without anything to re-attach.
 */
(function () {
  "use strict";

  var SHOW_DELAY = 250;
  var HIDE_DELAY = 200;
  var ROOT = new URL("../", document.currentScript.src).href;
  var RECORDS = ROOT + "records/";
  var loaded = {};
  var waiting = {};
  var card = null;
  var current = null;   // the link whose card is open
  var timer = null;
  var touched = false;  // the last pointer down was a finger

  window.flopkbPreview = function (data) {
    loaded[data.id] = data;
    (waiting[data.id] || []).forEach(function (done) { done(data); });
    delete waiting[data.id];
  };

  function load(id, done) {
    if (loaded[id]) { done(loaded[id]); return; }
    if (waiting[id]) { waiting[id].push(done); return; }
    waiting[id] = [done];
    var script = document.createElement("script");
    script.src = ROOT + "previews/" + id.split("/").map(encodeURIComponent).join("/") + ".js";
    script.onerror = function () { delete waiting[id]; script.remove(); };
    document.head.appendChild(script);
  }

  /* The record (and formula) a link leads to, or null for any other link. */
  function target(link) {
    if (!link.href || link.closest(".flopkb-preview") || !link.closest(".md-content")) return null;
    var url = new URL(link.href, location.href);
    var page = url.href.split("#")[0];
    if (page.indexOf(RECORDS) !== 0 || page.slice(-5) !== ".html") return null;
    if (page === location.href.split("#")[0]) return null;  // a link within the page
    return {
      id: decodeURIComponent(page.slice(RECORDS.length, -5)),
      anchor: url.hash ? decodeURIComponent(url.hash.slice(1)) : ""
    };
  }

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    if (text) el.textContent = text;
    return el;
  }

  function pageAccelerators() {
    var meta = document.querySelector(".md-content [data-flopkb-accelerators]");
    return meta ? meta.getAttribute("data-flopkb-accelerators").split(" ") : [];
  }

  function formulaPart(formula) {
    var part = element("div", "flopkb-preview__formula");
    part.appendChild(element("p", "flopkb-preview__formula-title", formula.title));
    if (formula.latex || formula.text) {
      var math = element("div", "flopkb-preview__math");
      if (window.katex && formula.latex) {
        window.katex.render(formula.latex, math,
          { displayMode: true, throwOnError: false, trust: false, strict: "ignore", output: "htmlAndMathml" });
      } else {
        math.textContent = formula.text;
      }
      part.appendChild(math);
    }
    var mine = pageAccelerators();
    var values = formula.values.filter(function (v) { return mine.indexOf(v[0]) >= 0; });
    if (!values.length) values = formula.values;
    if (values.length) {
      if (formula.at) part.appendChild(element("p", "flopkb-preview__at", "at " + formula.at));
      var table = element("table", "flopkb-preview__values");
      values.forEach(function (v) {
        var row = table.insertRow();
        row.appendChild(element("th", "", v[0] ? v[1] : "value"));
        row.appendChild(element("td", "", v[2]));
      });
      part.appendChild(table);
    }
    return part;
  }

  function fill(data, anchor) {
    card.textContent = "";
    var head = element("p", "flopkb-preview__head");
    head.appendChild(element("span", "flopkb-kind flopkb-kind--" + data.kind, data.kind));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(element("span", "flopkb-status flopkb-status--" + data.status, data.status_word));
    card.appendChild(head);
    card.appendChild(element("p", "flopkb-preview__title", data.title));
    var formula = anchor && data.formulas[anchor];
    if (formula) card.appendChild(formulaPart(formula));
    else if (data.summary) card.appendChild(element("p", "flopkb-preview__summary", data.summary));
  }

  function place(link) {
    var box = link.getBoundingClientRect();
    var width = Math.min(card.offsetWidth, document.documentElement.clientWidth - 16);
    var left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
    var below = box.bottom + 6;
    var top = below + card.offsetHeight > window.innerHeight && box.top - card.offsetHeight - 6 > 0
      ? box.top - card.offsetHeight - 6 : below;
    card.style.left = (left + window.scrollX) + "px";
    card.style.top = (top + window.scrollY) + "px";
  }

  function show(link, to) {
    load(to.id, function (data) {
      if (current && current !== link) hide();
      if (!card) {
        card = element("div", "md-typeset flopkb-preview");
        card.id = "flopkb-preview";
        card.setAttribute("role", "tooltip");
        card.setAttribute("aria-live", "polite");
        card.addEventListener("mouseenter", function () { clearTimeout(timer); });
        card.addEventListener("mouseleave", function () { later(hide, HIDE_DELAY); });
        document.body.appendChild(card);
      }
      fill(data, to.anchor);
      card.hidden = false;
      place(link);
      current = link;
      link.setAttribute("aria-describedby", card.id);
    });
  }

  function hide() {
    clearTimeout(timer);
    if (card) card.hidden = true;
    if (current) current.removeAttribute("aria-describedby");
    current = null;
  }

  function later(action, delay) {
    clearTimeout(timer);
    timer = setTimeout(action, delay);
  }

  function linkOf(event) {
    var link = event.target.closest && event.target.closest("a[href]");
    var to = link && target(link);
    return to ? { link: link, to: to } : null;
  }

  document.addEventListener("mouseover", function (event) {
    if (touched) return;
    var found = linkOf(event);
    if (found) later(function () { show(found.link, found.to); }, SHOW_DELAY);
  });
  document.addEventListener("mouseout", function (event) {
    if (linkOf(event) && !(card && card.contains(event.relatedTarget))) later(hide, HIDE_DELAY);
  });
  document.addEventListener("focusin", function (event) {
    var found = linkOf(event);
    if (found) { clearTimeout(timer); show(found.link, found.to); }
    else if (!(card && card.contains(event.target))) hide();
  });
  document.addEventListener("pointerdown", function (event) { touched = event.pointerType === "touch"; }, true);
  document.addEventListener("click", function (event) {
    if (!touched) return;
    var found = linkOf(event);
    if (!found) { if (card && !card.contains(event.target)) hide(); return; }
    if (current === found.link) return;  // second tap: follow the link
    // Nor may instant navigation follow it (Material listens on <body>, below this capturing listener).
    event.preventDefault();
    event.stopPropagation();
    show(found.link, found.to);
  }, true);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && current) hide();
  });
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(hide);
  }
})();

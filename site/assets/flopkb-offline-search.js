/* Search for a site opened from file://, where pagefind cannot fetch its
 * index: records by id, title and alias, from search-titles.js (written with
 * the site, loaded by a <script> element, which file:// allows). Every word
 * typed must appear in a record's title, id or aliases; at most MAX results,
 * in reading order. Full-text search needs the site served.
 */
(function () {
  "use strict";

  var MAX = 12;
  var box = document.getElementById("flopkb-search");
  if (!box) return;
  var root = new URL("../", document.currentScript.src).href;
  var rows = null;

  var input = document.createElement("input");
  input.type = "search";
  input.className = "flopkb-search__input";
  input.placeholder = "Find a record";
  input.setAttribute("aria-label", "Find a record by title, id or alias");
  var results = document.createElement("ul");
  results.className = "flopkb-search__results";
  results.id = "flopkb-search-results";
  results.setAttribute("aria-live", "polite");
  input.setAttribute("aria-controls", results.id);
  box.appendChild(input);
  box.appendChild(results);

  window.flopkbTitles = function (data) {
    rows = data.map(function (row) {
      return { href: row[0], title: row[1], id: row[2], text: (row[1] + " " + row[2] + " " + row[3]).toLowerCase() };
    });
    show();
  };
  var script = document.createElement("script");
  script.src = root + "search-titles.js";
  document.body.appendChild(script);

  function item(row) {
    var li = document.createElement("li");
    var link = document.createElement("a");
    link.href = root + row.href;
    link.textContent = row.title;
    var id = document.createElement("code");
    id.textContent = row.id;
    li.appendChild(link);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(id);
    return li;
  }

  function show() {
    results.textContent = "";
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length || !rows) return;
    var found = rows.filter(function (row) {
      return words.every(function (word) { return row.text.indexOf(word) >= 0; });
    });
    found.slice(0, MAX).forEach(function (row) { results.appendChild(item(row)); });
    var note = document.createElement("li");
    note.className = "flopkb-search__offline";
    note.textContent = (found.length ? "" : "No record's title, id or alias has these words. ")
      + "Opened from disk, search finds records by title, id and alias; "
      + "for full text, serve the site (flopkb serve, or python -m http.server -d build/site).";
    results.appendChild(note);
  }

  input.addEventListener("input", show);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { input.value = ""; show(); }
  });
})();

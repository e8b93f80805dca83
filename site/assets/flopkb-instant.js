/* Instant navigation wherever the site is served, and none from file:// (loaded
 * after Material's configuration, before its bundle).
 *
 * Material's navigation.instant follows a link without reloading the page only
 * when the link's page is in sitemap.xml, whose <loc>s it reads as absolute
 * URLs and moves to this page's protocol and host name, not its port or path.
 * Without a site URL mkdocs writes each <loc> as a path ("/records/x.html"),
 * which Material cannot read (so it follows no link instantly); with one, it
 * names the published host, so a preview on another port or path
 * (flopkb serve, a static server) would reload every page. This rewrites the
 * sitemap as Material fetches it: each <loc> becomes the same page under the
 * site's root as this page loaded it (data-site-path: the site URL's path,
 * "/" without one, where flopkb's sitemap.xml lists root-absolute paths).
 *
 * From file://, where nothing can be fetched, Material's instant navigation
 * does nothing but also, as it starts, completes its document$ before the
 * page has loaded, so that nothing subscribed to it (Material's own header,
 * tabs and palette, flopkb's formulas and graphs) would ever run: there the
 * feature is taken out of Material's configuration before the bundle reads it.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var root = new URL("../", script.src).href;  // this file is <root>/assets/flopkb-instant.js
  var sitePath = script.getAttribute("data-site-path") || "/";
  var sitemap = new URL("sitemap.xml", root).href;
  if (location.protocol === "file:") {
    var holder = document.getElementById("__config");
    var config = JSON.parse(holder.textContent);
    config.features = config.features.filter(function (name) { return name.indexOf("navigation.instant") !== 0; });
    holder.textContent = JSON.stringify(config);
    return;
  }

  function here(loc) {
    var path = new URL(loc, "http://site.invalid" + sitePath).pathname;
    if (path.indexOf(sitePath) !== 0) return loc;
    return new URL(path.slice(sitePath.length), root).href;
  }

  function rewrite(text) {
    var xml = new DOMParser().parseFromString(text, "text/xml");
    var locs = xml.getElementsByTagName("loc");
    for (var i = 0; i < locs.length; i++) locs[i].textContent = here(locs[i].textContent.trim());
    return new XMLSerializer().serializeToString(xml);
  }

  var open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url) {
    if (new URL(String(url), location.href).href === sitemap) {
      var request = this;
      // Material asks for a Blob; the text is read instead, and a Blob of the rewritten text handed over.
      Object.defineProperty(request, "responseType", { configurable: true, get: function () { return "blob"; },
                                                       set: function () {} });
      Object.defineProperty(request, "response", { configurable: true, get: function () {
        return new Blob([rewrite(request.responseText)], { type: "text/xml" });
      } });
    }
    return open.apply(this, arguments);
  };
})();

// Site search with pagefind's own interface, loaded only where it can work: a page opened from
// disk (file://) cannot fetch the index, so there the explanation in the page stays instead.
(function () {
  "use strict";
  var box = document.getElementById("search");
  if (!box || location.protocol === "file:") return;
  // pagefind imports its modules from bundlePath, which must be a path, not a relative address.
  var bundle = new URL(box.getAttribute("data-bundle"), location.href).pathname;
  var script = document.createElement("script");
  script.src = bundle + "pagefind-ui.js";
  script.onload = function () {
    // The index may come in parts (a review with thousands of included studies), each its own bundle,
    // merged into the main one; parts.json lists their folders, relative to the main bundle's.
    fetch(bundle + "parts.json")
      .then(function (response) { return response.ok ? response.json() : []; })
      .catch(function () { return []; })
      .then(start);
  };
  document.head.appendChild(script);

  function start(parts) {
    // The index stores paths from the site's root; the site may live below a domain's root
    // (a GitHub Pages project site), and search.html sits at the site's root.
    var baseUrl = new URL(".", location.href).pathname;
    box.textContent = "";
    var ui = new PagefindUI({
      element: "#search",
      bundlePath: bundle,
      baseUrl: baseUrl,
      mergeIndex: parts.map(function (part) { return { bundlePath: bundle + part, baseUrl: baseUrl }; }),
      showImages: false,
      resetStyles: false
    });
    var query = new URLSearchParams(location.search).get("q");
    if (query) ui.triggerSearch(query);
  }
})();

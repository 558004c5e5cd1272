// A quick text filter over the rows of one records list page. Progressive enhancement: the page
// is complete without it, and its filters and pages are plain links. Nothing is fetched.
(function () {
  "use strict";
  var table = document.querySelector("table[data-quick-filter]");
  if (!table || !table.tBodies.length) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var texts = rows.map(function (row) { return row.textContent.toLowerCase().replace(/\s+/g, " "); });

  var box = document.createElement("p");
  box.className = "quick-filter";
  var label = document.createElement("label");
  label.htmlFor = "quick-filter-input";
  label.textContent = "Filter this page";
  var input = document.createElement("input");
  input.type = "search";
  input.id = "quick-filter-input";
  input.autocomplete = "off";
  input.placeholder = "words in a title, author, identifier or decision";
  var status = document.createElement("span");
  status.className = "quick-filter-status";
  status.setAttribute("role", "status");
  box.append(label, " ", input, " ", status);
  table.parentNode.insertBefore(box, table);

  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row, i) {
      var match = words.every(function (word) { return texts[i].indexOf(word) !== -1; });
      row.hidden = !match;
      if (match) shown += 1;
    });
    status.textContent = words.length ? shown + " of " + rows.length + " records on this page match" : "";
  }
  input.addEventListener("input", apply);
})();

/* Sorting and filtering for tables marked data-table-tools="<what a row is>".
   Progressive enhancement: the table is complete without this script. It turns each column
   header into a sort button (aria-sort says the order), and puts a text filter above the table,
   plus one filter per column whose header has data-filter. A cell's data-sort, when present,
   is what it sorts by; blank values sort last either way. Nothing is fetched. */
(function () {
  "use strict";

  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  function normalise(text) {
    return text.replace(/\s+/g, " ").trim().toLowerCase();
  }

  function sortKey(row, column) {
    var cell = row.cells[column];
    if (!cell) return "";
    var key = cell.getAttribute("data-sort");
    return (key === null ? cell.textContent : key).replace(/\s+/g, " ").trim();
  }

  function enhance(table, number) {
    var noun = table.getAttribute("data-table-tools") || "rows";
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var prefix = "table-tools-" + number;

    var status = document.createElement("p");
    status.className = "table-tools-status";
    status.setAttribute("role", "status");

    function sortBy(column) {
      var header = headers[column];
      var direction = header.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", direction);
      var sign = direction === "ascending" ? 1 : -1;
      var keyed = rows.map(function (row, index) { return { row: row, key: sortKey(row, column), index: index }; });
      keyed.sort(function (a, b) {
        if (!a.key !== !b.key) return a.key ? -1 : 1;  // blanks last in either direction
        return sign * collator.compare(a.key, b.key) || a.index - b.index;
      });
      keyed.forEach(function (item) { body.appendChild(item.row); });
      status.textContent = "Sorted by " + header.textContent.trim() + ", " + direction + ". " + shown();
    }

    headers.forEach(function (header, column) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      while (header.firstChild) button.appendChild(header.firstChild);
      header.appendChild(button);
      button.addEventListener("click", function () { sortBy(column); });
    });

    var form = document.createElement("form");
    form.className = "table-tools-filters";
    form.setAttribute("role", "search");
    form.setAttribute("aria-label", "Filter the " + noun);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    var filters = [];

    function addFilter(label, column) {
      var id = prefix + "-filter-" + (column === null ? "all" : column);
      var wrapper = document.createElement("p");
      var labelElement = document.createElement("label");
      labelElement.htmlFor = id;
      labelElement.textContent = label;
      var input = document.createElement("input");
      input.type = "search";
      input.id = id;
      input.autocomplete = "off";
      if (column !== null) {
        // Suggest the column's own values; typing any part of one still matches.
        var list = document.createElement("datalist");
        list.id = id + "-values";
        var values = {};
        rows.forEach(function (row) { var value = sortKey(row, column); if (value) values[value] = true; });
        Object.keys(values).sort(collator.compare).forEach(function (value) {
          var option = document.createElement("option");
          option.value = value;
          list.appendChild(option);
        });
        input.setAttribute("list", list.id);
        wrapper.appendChild(list);
      }
      input.addEventListener("input", apply);
      wrapper.appendChild(labelElement);
      wrapper.appendChild(input);
      form.appendChild(wrapper);
      filters.push({ input: input, column: column });
    }

    addFilter("Filter " + noun, null);
    headers.forEach(function (header, column) {
      if (header.hasAttribute("data-filter")) addFilter(header.textContent.trim() + " contains", column);
    });

    function matches(row) {
      return filters.every(function (filter) {
        var words = normalise(filter.input.value).split(" ").filter(Boolean);
        var text = normalise(filter.column === null ? row.textContent : sortKey(row, filter.column));
        return words.every(function (word) { return text.indexOf(word) !== -1; });
      });
    }

    function shown() {
      var visible = rows.filter(function (row) { return !row.hidden; }).length;
      return "Showing " + visible + " of " + rows.length + " " + noun + ".";
    }

    function apply() {
      rows.forEach(function (row) { row.hidden = !matches(row); });
      status.textContent = shown();
    }

    var anchor = table.closest(".table-wrap") || table;
    anchor.parentNode.insertBefore(form, anchor);
    anchor.parentNode.insertBefore(status, anchor);
    status.textContent = shown();
    table.classList.add("table-tools-ready");
  }

  Array.prototype.forEach.call(document.querySelectorAll("table[data-table-tools]"), enhance);
})();

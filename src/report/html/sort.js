// Sortable tables: a click on a column's header sorts its rows, again reverses them.
// Figures sort by value ("+3.4%", "[-1.2%, +5.0%]" by its first number), the rest as
// text with numbers in it compared as numbers (LMDB_0.9.9 before LMDB_0.9.10).
(function () {
  function figure(s) {
    var m = /^[\s±\[(]*([+\-−]?\d+(?:\.\d+)?)/.exec(s);
    return m ? parseFloat(m[1].replace("−", "-")) : null;
  }
  function compare(a, b) {
    var x = figure(a), y = figure(b);
    if (x !== null && y !== null) return x - y;
    if (x !== null) return -1;
    if (y !== null) return 1;
    return a.localeCompare(b, undefined, { numeric: true });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () {
        var up = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var d = compare(a.cells[col].textContent.trim(), b.cells[col].textContent.trim());
          return up ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();

// Bulk actions on a list's selection (served from 'self': the CSP forbids inline scripts). The server side is
// backend/dashboard/bulk.py; the markup _macros.html select_cell, select_header and bulk_bar.
//
// 1. Selection: each row's checkbox ([data-bulk-item], value <namespace>/<name>/<uid>, in the bar's form by its form
//    attribute) and the header's "select all on this page" ([data-bulk-page], tri-state). The selection is kept here
//    by value, so a row pushed live (a new element) keeps its checked state, and a row whose object went — or came back
//    as another object, with another uid — drops out of it. Focus on a checkbox whose row was replaced moves to the
//    new one.
// 2. "Select all N matching": when every row of the page is selected and the filter matches more, the bar offers the
//    whole filter (match=all: the server selects what matches when the action runs; the row items are not sent).
// 3. The bar (#bulk-form): hidden while nothing is selected, "3 selected", its actions, Clear. An action's button posts
//    the selection for its confirmation, which opens in the modal #bulk-dialog (Escape or Cancel close it; focus goes
//    back to the button). Confirming posts the run; while it runs the dialog says so; its result table lands in
//    #bulk-results, which gets focus (its summary is a role=status line); the dialog closes; what failed stays selected.
(function () {
  "use strict";

  var selected = new Set();
  var matchAll = false;
  var matchFilters = "";
  var opener = null;
  var focusedValue = null;
  var scheduled = false;
  var confirming = false; // a confirmation was asked for: it opens the dialog when it arrives

  function bar() {
    return document.getElementById("bulk-form");
  }

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll("input[data-bulk-item]"));
  }

  function filtersNow() {
    return Array.prototype.map
      .call(document.querySelectorAll("input[data-bulk-filter]"), function (input) {
        return input.name + "=" + input.value;
      })
      .join("&");
  }

  function setText(element, text) {
    if (element && element.textContent !== text) {
      element.textContent = text;
    }
  }

  // The page's checkboxes and the bar, from the selection (and the selection from what is on the page).
  function sync() {
    scheduled = false;
    var form = bar();
    if (!form) {
      return;
    }
    var present = new Set();
    var boxes = items();
    boxes.forEach(function (box) {
      present.add(box.value);
      box.checked = selected.has(box.value);
    });
    selected.forEach(function (value) {
      if (!present.has(value)) {
        selected.delete(value); // its object went (or is another object now), or it is on another page
      }
    });
    if (matchAll && filtersNow() !== matchFilters) {
      matchAll = false;
    }
    if (focusedValue && (document.activeElement === document.body || document.activeElement === null)) {
      var again = boxes.filter(function (box) {
        return box.value === focusedValue;
      })[0];
      if (again) {
        again.focus();
      }
    }
    var count = selected.size;
    var all = boxes.length > 0 && count === boxes.length;
    var header = document.querySelector("input[data-bulk-page]");
    if (header) {
      header.checked = all;
      header.indeterminate = count > 0 && !all;
    }
    var totals = document.querySelector("[data-bulk-total]");
    var total = totals ? parseInt(totals.getAttribute("data-bulk-total"), 10) : 0;
    if (!all || total <= boxes.length) {
      matchAll = false;
    }
    form.querySelector("[data-bulk-match]").value = matchAll ? "all" : "";
    form.hidden = count === 0;
    setText(form.querySelector("[data-bulk-count]"), matchAll ? "All " + total.toLocaleString("en") + " matching selected" : count + " selected");
    var offer = form.querySelector("[data-bulk-matching]");
    offer.hidden = !all || total <= boxes.length;
    setText(
      offer.querySelector("[data-bulk-matching-text]"),
      matchAll
        ? "The action applies to every one that matches the filter when it runs."
        : "All " + boxes.length + " on this page are selected."
    );
    var button = offer.querySelector("[data-bulk-all]");
    button.hidden = matchAll;
    setText(button, "Select all " + total.toLocaleString("en") + " matching");
  }

  function later() {
    if (!scheduled) {
      scheduled = true;
      window.setTimeout(sync, 0);
    }
  }

  function mark(box, on) {
    if (on) {
      selected.add(box.value);
    } else {
      selected.delete(box.value);
    }
  }

  document.addEventListener("change", function (evt) {
    var box = evt.target;
    if (box.matches("input[data-bulk-item]")) {
      mark(box, box.checked);
    } else if (box.matches("input[data-bulk-page]")) {
      items().forEach(function (item) {
        mark(item, box.checked);
      });
    } else {
      return;
    }
    matchAll = false;
    sync();
  });

  document.addEventListener("focusin", function (evt) {
    focusedValue = evt.target.matches && evt.target.matches("input[data-bulk-item]") ? evt.target.value : null;
  });

  document.addEventListener("click", function (evt) {
    var target = evt.target.closest ? evt.target : null;
    if (!target) {
      return;
    }
    if (target.closest("[data-bulk-all]")) {
      matchAll = true;
      matchFilters = filtersNow();
      sync();
    } else if (target.closest("[data-bulk-clear]")) {
      selected.clear();
      matchAll = false;
      sync();
      var first = items()[0];
      if (first) {
        first.focus(); // the bar and its buttons are hidden now
      }
    } else if (target.closest("[data-bulk-dismiss]")) {
      var results = document.getElementById("bulk-results");
      results.replaceChildren();
    } else if (target.closest("#bulk-form button[type=submit]")) {
      opener = target.closest("button");
    }
  });

  // With match=all the filter selects: the rows' items are not sent (the server refuses both at once).
  document.addEventListener("htmx:configRequest", function (evt) {
    if (evt.detail.elt.id !== "bulk-form") {
      return;
    }
    if (matchAll) {
      delete evt.detail.parameters.item;
    } else {
      delete evt.detail.parameters.match;
    }
  });

  document.addEventListener("htmx:beforeRequest", function (evt) {
    if (evt.detail.elt.id === "bulk-form") {
      confirming = true;
    }
    var progress = evt.detail.elt.matches("form[data-bulk-run]") ? evt.detail.elt.querySelector("[data-bulk-progress]") : null;
    if (progress) {
      progress.hidden = false;
    }
  });

  document.addEventListener("htmx:afterSettle", function (evt) {
    var dialog = document.getElementById("bulk-dialog");
    if (!dialog) {
      return;
    }
    var target = evt.detail.target;
    if (target && target.id === "bulk-results") {
      var failed = target.querySelectorAll('tr[data-outcome="failed"]');
      selected.clear();
      failed.forEach(function (row) {
        selected.add(row.getAttribute("data-item"));
      });
      matchAll = false;
      opener = null;
      if (dialog.open) {
        dialog.close();
      }
      sync();
      target.focus();
      return;
    }
    var confirm = document.getElementById("bulk-confirm");
    if (confirming && confirm && dialog.contains(confirm) && confirm.childElementCount && !dialog.open) {
      confirming = false;
      dialog.showModal();
      var first = dialog.querySelector("[autofocus]");
      if (first) {
        first.focus();
      }
    }
  });

  document.addEventListener(
    "close",
    function (evt) {
      if (evt.target.id !== "bulk-dialog") {
        return;
      }
      var back = opener && opener.isConnected && !opener.closest("[hidden]") ? opener : document.getElementById("bulk-results");
      opener = null;
      if (back) {
        back.focus();
      }
    },
    true
  );

  // Rows come and go (pushed live, the list refreshed): the selection follows what is on the page.
  function watch() {
    var main = document.getElementById("main");
    if (!main || !bar()) {
      return;
    }
    new MutationObserver(later).observe(main, { childList: true, subtree: true });
    sync();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();

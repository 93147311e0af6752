// The dashboard's only script (served from 'self': the CSP forbids inline scripts and eval).
//
// 1. CSRF: every htmx request carries the token of <meta name="csrf-token"> as X-CSRF-Token.
// 2. Live updates: the SSE connection opened by htmx-ext-sse (sse-connect on the header's .live
//    element, /watch) delivers `darkroom` / `task` / `postgresql` events as JSON. Live regions say what they show:
//    data-live-key="Kind/namespace/name" + data-live-url: re-fetched (same server-side template
//    block) when that object changes; data-live-list="Kind" + data-live-url: the list block,
//    re-fetched when an object of its namespace/name filter is added or deleted. Refreshes of one
//    region never overlap: a change during a refresh schedules exactly one more.
// 3. The live indicator: Live / Reconnecting…; after a reconnect (or an SSE `reset`) every live
//    region is re-fetched, as changes may have been missed.
// 4. Errors of htmx requests (403, 404, 5xx, network) are shown in the #flash region — except for a
//    request from inside [data-swap-errors] that answered HTML: that fragment explains the error
//    in place (e.g. "Show password" refused by the cluster's RBAC), so it is swapped in instead.
// 5. A form whose request succeeded with a redirect stays inert until the browser has left the
//    page: hx-disabled-elt re-enables its buttons when the request ends, and a second click in
//    that moment (a double click) would otherwise send the create again.
(function () {
  "use strict";

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  document.addEventListener("htmx:configRequest", function (evt) {
    evt.detail.headers["X-CSRF-Token"] = csrfToken();
  });

  document.addEventListener("htmx:afterRequest", function (evt) {
    var xhr = evt.detail.xhr;
    if (evt.detail.successful && xhr && xhr.getResponseHeader("HX-Redirect")) {
      evt.detail.elt.setAttribute("data-redirecting", "");
    }
  });

  document.addEventListener("htmx:beforeRequest", function (evt) {
    if (evt.detail.elt.closest("[data-redirecting]")) {
      evt.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var xhr = evt.detail.xhr;
    var type = (xhr && xhr.getResponseHeader("Content-Type")) || "";
    if (evt.detail.isError && evt.detail.elt.closest("[data-swap-errors]") && type.indexOf("text/html") === 0) {
      evt.detail.shouldSwap = true;
      evt.detail.isError = false;
    }
  });

  // -- live regions ------------------------------------------------------------------------
  var LIVE_KINDS = ["Darkroom", "Task", "Postgresql"];
  var running = {};
  var again = {};

  function selectorFor(attribute, value) {
    return "[" + attribute + '="' + CSS.escape(value) + '"]';
  }

  function refresh(id, find) {
    if (running[id]) {
      again[id] = true;
      return;
    }
    var element = find();
    if (!element || !window.htmx) {
      return;
    }
    running[id] = true;
    var url = element.getAttribute("data-live-url");
    var done = function () {
      running[id] = false;
      if (again[id]) {
        again[id] = false;
        refresh(id, find);
      }
    };
    window.htmx.ajax("GET", url, { target: element, swap: "outerHTML" }).then(done, done);
  }

  function refreshKey(key) {
    document.querySelectorAll(selectorFor("data-live-key", key)).forEach(function (element, index) {
      refresh("key:" + key + ":" + index, function () {
        return document.querySelectorAll(selectorFor("data-live-key", key))[index];
      });
    });
  }

  function refreshList(kind) {
    document.querySelectorAll(selectorFor("data-live-list", kind)).forEach(function (element) {
      var id = element.id;
      refresh("list:" + id, function () {
        return document.getElementById(id);
      });
    });
  }

  function listWants(list, change) {
    var namespace = list.getAttribute("data-namespace");
    var q = list.getAttribute("data-q");
    return (!namespace || namespace === change.namespace) && (!q || String(change.name).indexOf(q.toLowerCase()) >= 0);
  }

  function onChange(evt) {
    var change;
    try {
      change = JSON.parse(evt.data);
    } catch (e) {
      return;
    }
    var key = change.kind + "/" + change.namespace + "/" + change.name;
    var shown = document.querySelector(selectorFor("data-live-key", key)) !== null;
    if (shown) {
      refreshKey(key);
    }
    if (change.type === "ADDED" || change.type === "DELETED") {
      document.querySelectorAll(selectorFor("data-live-list", change.kind)).forEach(function (list) {
        if (listWants(list, change)) {
          refresh("list:" + list.id, function () {
            return document.getElementById(list.id);
          });
        }
      });
    }
  }

  function refreshAll() {
    LIVE_KINDS.forEach(refreshList);
    var keys = {};
    document.querySelectorAll("[data-live-key]").forEach(function (element) {
      keys[element.getAttribute("data-live-key")] = true;
    });
    Object.keys(keys).forEach(refreshKey);
  }

  // -- the SSE connection and the indicator ------------------------------------------------
  var attached = new WeakSet();
  var opens = 0;

  function indicate(state, text) {
    var indicator = document.getElementById("live-indicator");
    if (indicator && indicator.getAttribute("data-state") !== state) {
      indicator.setAttribute("data-state", state);
      indicator.textContent = text;
    }
  }

  document.addEventListener("htmx:sseOpen", function (evt) {
    var source = evt.detail && evt.detail.source;
    if (source && !attached.has(source)) {
      attached.add(source);
      LIVE_KINDS.forEach(function (kind) {
        source.addEventListener(kind.toLowerCase(), onChange);
      });
      source.addEventListener("reset", refreshAll);
    }
    indicate("live", "Live");
    opens += 1;
    if (opens > 1) {
      refreshAll();
    }
  });

  document.addEventListener("htmx:sseError", function () {
    indicate("reconnecting", "Reconnecting…");
  });

  document.addEventListener("htmx:sseClose", function () {
    indicate("reconnecting", "Reconnecting…");
  });

  // -- errors of htmx requests -------------------------------------------------------------
  function flash(text) {
    var region = document.getElementById("flash");
    if (!region) {
      return;
    }
    var message = region.querySelector(".flash-text") || region; // the text beside the dismiss button (base.html)
    message.textContent = text;
    region.hidden = false;
  }

  document.addEventListener("htmx:responseError", function (evt) {
    var xhr = evt.detail.xhr;
    var detail = "";
    try {
      detail = JSON.parse(xhr.responseText).detail || "";
    } catch (e) {
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var message = doc.querySelector(".error-page p");
      detail = message ? message.textContent : "";
    }
    flash("The request failed (" + xhr.status + ")" + (detail ? ": " + detail : "."));
  });

  document.addEventListener("htmx:sendError", function () {
    flash("The server did not answer. Check your connection and try again.");
  });
})();

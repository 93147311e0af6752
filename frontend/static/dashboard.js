// The dashboard's only script (served from 'self': the CSP forbids inline scripts and eval). Only what
// htmx cannot declare lives here; list pages declare their live rows in their templates (sse-connect on
// the list section, sse-swap on each row, hx-trigger="sse:members, sse:reset" for a refresh: see
// backend/dashboard/liverows.py), detail pages and edit forms their live regions (sse-connect around them,
// hx-trigger="sse:object, sse:reset" and the like on each region's refresher: backend/dashboard/livedetail.py),
// so no filter, no region fetch and no poll is scripted here.
//
// 1. CSRF: every htmx request carries the token of <meta name="csrf-token"> as X-CSRF-Token.
// 2. A form's error summary swapped in after a Save (409, 404, 403, 422: _generated_form.html) is scrolled into view
//    and focused, wherever the user had scrolled to (htmx's autofocus alone does not scroll a long form's top back
//    into view on every browser).
// 3. The live indicator: Live / Reconnecting… (a list section replaced by a filter change is no outage).
// 4. Ages tick: <time data-age datetime="..."> shows the age in kubectl's style (as the server rendered
//    it), recomputed in the browser from the timestamp (no request, no server render) when its text changes.
// 5. Row menus (popovers): a pushed row whose menu is open waits until the menu closes, so a status
//    change does not close a menu under the user's pointer (its Delete… opens the list's one dialog: dialogs.js).
// 6. Errors of htmx requests (403, 404, 5xx, network) are shown in the #flash region — except for a
//    request from inside [data-swap-errors] that answered HTML: that fragment explains the error
//    in place (e.g. "Show password" refused by the cluster's RBAC), so it is swapped in instead.
// 7. A form whose request succeeded with a redirect stays inert until the browser has left the
//    page: hx-disabled-elt re-enables its buttons when the request ends, and a second click in
//    that moment (a double click) would otherwise send the create again.
// 8. What the person may not do: a list section says, per namespace on its page, which row actions are refused and
//    why (data-denied, backend/dashboard/allowing.py). A row pushed over SSE is rendered once for every tab, as for
//    anyone: each swapped-in row's controls that need a refused verb (data-needs) get the markup the server gives a
//    refused control (_macros.html gate): aria-disabled, the reason as title and data-why, no href, nothing to submit.
//    A refused control does nothing when activated.
// 9. A detail page's resource tree (_tree.html) keeps the folds the user opened or closed across its live refreshes:
//    each <details data-key> the user set otherwise than the server's default (data-folded) is set so again in the
//    tree that replaces it (the server cannot know; a tab's choice, kept for the tab's life only).
// 10. A click on a list's sort header or pager while a live refresh of that list is on its way waits behind the refresh
//    (hx-sync: every request for the list is one queue, _macros.html live_refresh). Those links are inside the section
//    the refresh replaces, and htmx drops a waiting request whose element left the page: the click would be lost. So
//    that refresh's answer is not swapped in; the person's request runs next and draws the list anew, newer than the
//    refresh (no request is aborted: htmx logs every abort as a console error).
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

  // -- a click waiting behind a live refresh is not dropped with the list it was made in -----------
  // {refresh: the .live-refresh element whose request runs, xhr: that request, clicked: a link of its list waits}
  var refreshing = null;
  document.addEventListener("htmx:beforeRequest", function (evt) {
    if (evt.detail.elt.classList.contains("live-refresh")) {
      refreshing = { refresh: evt.detail.elt, xhr: evt.detail.xhr, clicked: false };
    }
  });
  document.addEventListener("htmx:confirm", function (evt) {
    var list = refreshing && refreshing.refresh.isConnected && document.querySelector(refreshing.refresh.getAttribute("hx-target"));
    if (list && evt.detail.elt !== refreshing.refresh && list.contains(evt.detail.elt)) {
      refreshing.clicked = true;
    }
  });
  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (refreshing && evt.detail.xhr === refreshing.xhr && refreshing.clicked) {
      evt.detail.shouldSwap = false;
    }
  });
  document.addEventListener("htmx:afterRequest", function (evt) {
    if (refreshing && evt.detail.xhr === refreshing.xhr) {
      refreshing = null;
    }
  });

  // -- a resource tree's folds, kept across its live refreshes ---------------------------------
  var folds = {};
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var target = evt.detail.target;
    if (!target || !target.querySelectorAll) {
      return;
    }
    target.querySelectorAll("details[data-key]").forEach(function (fold) {
      var key = fold.getAttribute("data-key");
      if (fold.open !== (fold.getAttribute("data-folded") !== "true")) {
        folds[key] = fold.open;
      } else {
        delete folds[key];
      }
    });
  });

  document.addEventListener("htmx:load", function (evt) {
    var root = evt.detail.elt;
    if (!root || !root.querySelectorAll) {
      return;
    }
    root.querySelectorAll("details[data-key]").forEach(function (fold) {
      var key = fold.getAttribute("data-key");
      if (Object.prototype.hasOwnProperty.call(folds, key)) {
        fold.open = folds[key];
      }
    });
  });

  // -- a Save's errors, where the user is looking --------------------------------------------
  document.addEventListener("htmx:afterSettle", function (evt) {
    var root = evt.detail.elt;
    var summary = root && root.querySelector ? root.querySelector(".error-summary") : null;
    if (summary && root.matches && root.matches("form")) {
      summary.scrollIntoView({ block: "start" });
      summary.focus({ preventScroll: true });
    }
  });

  // -- SSE connections and the indicator ---------------------------------------------------
  function indicate(state, text) {
    var indicator = document.getElementById("live-indicator");
    if (indicator && indicator.getAttribute("data-state") !== state) {
      indicator.setAttribute("data-state", state);
      indicator.textContent = text;
    }
  }

  document.addEventListener("htmx:sseOpen", function () {
    indicate("live", "Live");
  });

  document.addEventListener("htmx:sseError", function () {
    indicate("reconnecting", "Reconnecting…");
  });

  document.addEventListener("htmx:sseClose", function (evt) {
    var type = evt.detail && evt.detail.type;
    if (type !== "nodeReplaced" && type !== "nodeMissing") {
      indicate("reconnecting", "Reconnecting…");
    }
  });

  // -- ticking ages --------------------------------------------------------------------------
  // Each <time data-age> is written only when its text changes (a "5m" age next changes in up to a minute, not
  // every second), by one timer set for the earliest of those moments; a swapped-in row schedules only its own
  // ages (htmx:load); a hidden tab keeps no timer and catches up when it is shown again.
  // The server's clock, as the page's list section says it was when rendered: ages agree with the server's.
  var skewMs = null;
  var ages = new Map(); // <time> -> the moment (ms, the server's clock) its text changes next
  var timer = null;
  var timerAt = Infinity;
  var UNITS = [["d", 86400, 2], ["h", 3600, 2], ["m", 60, 1], ["s", 1, 0]];

  function unitOf(seconds) {
    for (var i = 0; i < UNITS.length; i++) {
      if (seconds >= UNITS[i][1] * UNITS[i][2]) {
        return UNITS[i];
      }
    }
    return UNITS[UNITS.length - 1];
  }

  // The stamp is compared with the moment the page's response began to arrive (Navigation Timing), not with when
  // this script first runs: on a busy machine that may be seconds later, and the page's clock would lag behind the
  // server's by as much (a Darkroom created a moment ago would be "in 2s").
  function arrivedAt() {
    var navigation = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    return navigation && navigation.responseStart > 0 ? performance.timeOrigin + navigation.responseStart : Date.now();
  }

  function serverNow() {
    if (skewMs === null) {
      var stamped = document.querySelector("[data-server-now]");
      var stampedAt = stamped ? Date.parse(stamped.getAttribute("data-server-now")) : NaN;
      skewMs = isNaN(stampedAt) ? 0 : stampedAt - arrivedAt();
    }
    return Date.now() + skewMs;
  }

  // Writes the element's age as of `now` if it differs; returns when it next changes (Infinity: never).
  function showAge(element, now) {
    var moment = Date.parse(element.getAttribute("datetime"));
    if (isNaN(moment)) {
      return Infinity;
    }
    var elapsedMs = now - moment;
    var seconds = Math.round(elapsedMs / 1000);
    var magnitude = Math.abs(seconds);
    var unit = unitOf(magnitude);
    var text = (seconds < 0 ? "in " : "") + Math.floor(magnitude / unit[1]) + unit[0];
    if (element.textContent !== text) {
      element.textContent = text;
    }
    // The text changes when the rounded seconds reach the next multiple of the unit (an age) or drop below
    // this one (a moment to come: "in 5m" until 299 s are left); Math.round reaches n at n - 0.5 s.
    var whole = Math.floor(magnitude / unit[1]) * unit[1];
    var nextSeconds = seconds >= 0 ? whole + unit[1] : 1 - whole;
    return moment + (nextSeconds - 0.5) * 1000 + 1;
  }

  function schedule() {
    if (document.visibilityState === "hidden") {
      return;
    }
    var earliest = Infinity;
    ages.forEach(function (at) {
      earliest = Math.min(earliest, at);
    });
    if (earliest === Infinity || earliest >= timerAt) {
      return;
    }
    window.clearTimeout(timer);
    timerAt = earliest;
    timer = window.setTimeout(tick, Math.max(0, earliest - serverNow()));
  }

  function tick() {
    timer = null;
    timerAt = Infinity;
    var now = serverNow();
    ages.forEach(function (at, element) {
      if (!element.isConnected) {
        ages.delete(element);
      } else if (at <= now) {
        ages.set(element, showAge(element, now));
      }
    });
    schedule();
  }

  function track(root) {
    if (!root.querySelectorAll) {
      return;
    }
    var now = serverNow();
    var found = root.matches && root.matches("time[data-age]") ? [root] : root.querySelectorAll("time[data-age]");
    for (var i = 0; i < found.length; i++) {
      ages.set(found[i], showAge(found[i], now));
    }
    if (found.length) {
      schedule();
    }
  }

  document.addEventListener("htmx:load", function (evt) {
    track(evt.target); // the page once, then each swapped-in row or list
  });

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") {
      window.clearTimeout(timer);
      timer = null;
      timerAt = Infinity;
    } else {
      tick();
    }
  });

  // -- row menus -----------------------------------------------------------------------------
  var waiting = new WeakMap(); // row -> the HTML pushed while its menu was open

  document.addEventListener("htmx:sseBeforeMessage", function (evt) {
    var row = evt.target;
    if (row.querySelector && row.querySelector("[popover]:popover-open")) {
      waiting.set(row, evt.detail.data);
      evt.preventDefault();
    }
  });

  document.addEventListener(
    "toggle",
    function (evt) {
      var menu = evt.target;
      if (!menu.hasAttribute || !menu.hasAttribute("popover") || evt.newState !== "closed") {
        return;
      }
      var row = menu.closest("[sse-swap]");
      if (row && waiting.has(row) && window.htmx) {
        var html = waiting.get(row);
        waiting.delete(row);
        window.htmx.swap(row, html, { swapStyle: "outerHTML" });
      }
    },
    true
  );

  // -- what the person may not do ---------------------------------------------------------------
  function deny(control, reason) {
    control.setAttribute("aria-disabled", "true");
    control.setAttribute("title", reason);
    control.setAttribute("data-why", reason);
    if (control.tagName === "A") {
      control.removeAttribute("href");
      control.setAttribute("role", "link");
      control.setAttribute("tabindex", "0");
    } else {
      control.setAttribute("type", "button");
      control.removeAttribute("commandfor");
      control.removeAttribute("command");
    }
  }

  function applyDenials(root) {
    var section = root.closest ? root.closest("[data-denied]") : null;
    if (!section) {
      return;
    }
    var denied;
    try {
      denied = JSON.parse(section.getAttribute("data-denied") || "{}");
    } catch (e) {
      return;
    }
    var controls = root.matches("[data-needs]") ? [root] : Array.prototype.slice.call(root.querySelectorAll("[data-needs]"));
    controls.forEach(function (control) {
      var row = control.closest("[data-namespace]");
      var reasons = row ? denied[row.getAttribute("data-namespace")] : null;
      var reason = reasons && reasons[control.getAttribute("data-needs")];
      if (reason && control.getAttribute("aria-disabled") !== "true") {
        deny(control, reason);
      }
    });
  }

  document.addEventListener("htmx:load", function (evt) {
    applyDenials(evt.target);
  });

  document.addEventListener(
    "click",
    function (evt) {
      var control = evt.target.closest && evt.target.closest('[aria-disabled="true"]');
      if (control) {
        evt.preventDefault();
        evt.stopPropagation();
      }
    },
    true
  );

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

  // An HTML error (backend/dashboard/browsing.py problem_page) says what went wrong in its [data-detail]: a refusal
  // by the cluster is that sentence alone ("You may not delete darkrooms ... ."); anything else names its status.
  document.addEventListener("htmx:responseError", function (evt) {
    var xhr = evt.detail.xhr;
    var detail = "";
    var refused = false;
    try {
      detail = JSON.parse(xhr.responseText).detail || "";
    } catch (e) {
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var message = doc.querySelector(".error-page [data-detail]") || doc.querySelector(".error-page p");
      detail = message ? message.textContent.trim() : "";
      refused = xhr.status === 403 && !!doc.querySelector('.error-page[data-status="403"]');
    }
    flash(refused && detail ? detail : "The request failed (" + xhr.status + ")" + (detail ? ": " + detail : "."));
  });

  document.addEventListener("htmx:sendError", function () {
    flash("The server did not answer. Check your connection and try again.");
  });
})();

// The pod logs page (templates/pod_logs.html; backend/dashboard/podlogs.py). Opens the page's stream
// (#log-lines[data-stream], Server-Sent Events): each `lines` event carries HTML fragments escaped by the server
// (backend/dashboard/logstreams.py), appended as they are; `done` (every log ended) closes the stream, so no
// reconnection replays the tail. The view stays at the bottom while it is there (scroll up to read: it stays put).
// Pause keeps what arrives (at most MAX_LINES) and Resume appends it. The wrap checkbox toggles wrapping at once.
(function () {
  "use strict";
  var MAX_LINES = 5000; // the lines the page keeps: older ones go first

  function start() {
    var box = document.getElementById("log-lines");
    var wrap = document.getElementById("log-wrap");
    if (wrap && box) {
      wrap.addEventListener("change", function () { box.classList.toggle("wrap", wrap.checked); });
    }
    if (!box || !box.dataset.stream) { return; }
    var status = document.getElementById("log-status");
    var pause = document.getElementById("log-pause");
    var paused = false;
    var held = [];
    var heldLines = 0;

    function say(text) { if (status) { status.textContent = text; } }
    function atBottom() { return box.scrollHeight - box.scrollTop - box.clientHeight < 24; }
    function trim() {
      while (box.childElementCount > MAX_LINES) { box.removeChild(box.firstElementChild); }
    }
    function append(html) {
      var stick = atBottom();
      box.insertAdjacentHTML("beforeend", html);
      trim();
      if (stick) { box.scrollTop = box.scrollHeight; }
    }

    var source = new EventSource(box.dataset.stream);
    source.addEventListener("open", function () { say(box.dataset.follow ? "Following" : "Reading"); });
    source.addEventListener("lines", function (event) {
      if (paused) {
        held.push(event.data);
        heldLines += event.data.split("\n").length;
        while (heldLines > MAX_LINES && held.length > 1) { heldLines -= held.shift().split("\n").length; }
        say("Paused (" + heldLines + " new lines)");
        return;
      }
      append(event.data);
    });
    source.addEventListener("done", function () {
      source.close();
      say(box.childElementCount ? "End of the logs" : "No lines");
      if (pause) { pause.disabled = true; }
    });
    source.addEventListener("error", function () {
      if (source.readyState === EventSource.CLOSED || source.readyState === EventSource.CONNECTING) {
        source.close(); // a reconnection would send the tail again: the person reloads when they want to
        say("The stream stopped (the server may be busy: too many log streams). Reload to read again.");
        if (pause) { pause.disabled = true; }
      }
    });
    if (pause) {
      pause.addEventListener("click", function () {
        paused = !paused;
        pause.textContent = paused ? "Resume" : "Pause";
        pause.setAttribute("aria-pressed", paused ? "true" : "false");
        if (!paused) {
          if (held.length) { append(held.join("\n")); }
          held = [];
          heldLines = 0;
          say(box.dataset.follow ? "Following" : "Reading");
        } else {
          say("Paused");
        }
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

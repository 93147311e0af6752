// The dashboard's dialogs, notices and copy buttons (served from 'self': the CSP forbids inline scripts).
//
// 1. Dialogs: a <button commandfor="ID" command="show-modal|close"> opens or closes <dialog id="ID">
//    (invoker commands; the same is done here where the browser lacks them). Escape closes a modal
//    dialog natively; when it closes, focus goes back to the button that opened it (or to the button
//    of the row menu it was in). A list page's one delete dialog is filled in from the row's Delete…
//    button (data-delete: the POST target, data-uid, data-title, data-name, data-note: what goes with it) as it opens.
// 2. Notices: [data-dismiss] hides its notice (or the #flash region); a notice marked
//    [data-transient] ("… created.") is removed at the user's next action on the page (a click on a
//    link or button, typing, a form change or submit), so it never describes an older state of the page.
// 3. Copy: <button data-copy="ID"> copies the text of element ID with the Clipboard API and says so
//    in the .copy-status next to it (where the API is missing it selects the text instead).
(function () {
  "use strict";

  // -- dialogs -------------------------------------------------------------------------------
  var openers = new WeakMap();
  var nativeCommands = "command" in HTMLButtonElement.prototype && "commandForElement" in HTMLButtonElement.prototype;

  document.addEventListener(
    "click",
    function (evt) {
      var button = evt.target.closest && evt.target.closest("button[commandfor]");
      if (!button) {
        return;
      }
      var dialog = document.getElementById(button.getAttribute("commandfor"));
      if (!dialog || dialog.tagName !== "DIALOG") {
        return;
      }
      var command = button.getAttribute("command");
      if (command === "show-modal") {
        openers.set(dialog, button);
        if (button.hasAttribute("data-delete")) {
          fill(dialog, button);
        }
      }
      if (nativeCommands) {
        return;
      }
      if (command === "show-modal" && !dialog.open) {
        dialog.showModal();
      } else if (command === "close" && dialog.open) {
        dialog.close();
      }
    },
    true
  );

  document.addEventListener(
    "close",
    function (evt) {
      var dialog = evt.target;
      if (dialog.tagName !== "DIALOG") {
        return;
      }
      var opener = openers.get(dialog);
      if (opener) {
        focusBack(opener);
      }
    },
    true
  );

  // A list's one delete dialog (_macros.html row_delete_dialog) takes its object from the row menu's Delete…
  // button: the form's target (htmx re-reads hx-post once processed again), the uid precondition and the texts.
  function fill(dialog, button) {
    var form = dialog.querySelector('form[data-fill="row-delete"]');
    if (!form) {
      return;
    }
    var action = button.getAttribute("data-delete");
    form.setAttribute("action", action);
    form.setAttribute("hx-post", action);
    form.elements.uid.value = button.getAttribute("data-uid") || "";
    dialog.querySelector('[data-fill="title"]').textContent = button.getAttribute("data-title") || "";
    dialog.querySelector('[data-fill="name"]').textContent = button.getAttribute("data-name") || "";
    dialog.querySelector('[data-fill="note"]').textContent = button.getAttribute("data-note") || "";
    if (window.htmx) {
      window.htmx.process(form);
    }
  }

  // Focus goes back to the button that opened the dialog or, when that one is hidden now (a row menu closed
  // as the dialog opened) or was replaced (a live row), to the button of the menu it was in.
  function focusBack(opener) {
    var menu = opener.closest("[popover]");
    var target = opener;
    if (!opener.isConnected || opener.disabled || (menu && !menu.matches(":popover-open"))) {
      target = menu ? document.querySelector('[popovertarget="' + CSS.escape(menu.id) + '"]') : null;
    }
    if (target && target.isConnected && !target.disabled) {
      target.focus();
    }
  }

  // -- notices -------------------------------------------------------------------------------
  function dismiss(box) {
    if (box.id === "flash") {
      box.hidden = true;
      return;
    }
    box.remove();
  }

  function dropTransient() {
    document.querySelectorAll("[data-transient]").forEach(function (notice) {
      notice.remove();
    });
  }

  document.addEventListener("click", function (evt) {
    var dismisser = evt.target.closest && evt.target.closest("[data-dismiss]");
    if (dismisser) {
      var box = dismisser.closest(".notice, .flash");
      if (box) {
        dismiss(box);
      }
      return;
    }
    if (evt.target.closest && evt.target.closest("a[href], button, summary")) {
      dropTransient();
    }
  });
  document.addEventListener("change", dropTransient);
  document.addEventListener("input", dropTransient);
  document.addEventListener("submit", dropTransient);

  // -- copy ----------------------------------------------------------------------------------
  function say(button, text) {
    var status = button.parentElement && button.parentElement.querySelector(".copy-status");
    if (status) {
      status.textContent = text;
    }
  }

  function select(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("button[data-copy]");
    if (!button) {
      return;
    }
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) {
      return;
    }
    if (!navigator.clipboard || !window.isSecureContext) {
      select(source);
      say(button, "Selected: press Ctrl+C to copy");
      return;
    }
    navigator.clipboard.writeText(source.textContent).then(
      function () {
        say(button, "Copied");
      },
      function () {
        select(source);
        say(button, "Could not copy: the text is selected, press Ctrl+C");
      }
    );
  });
})();

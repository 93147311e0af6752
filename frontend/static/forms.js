// Forms (templates/_generated_form.html): what a list of strings (a Darkroom's sub-domains) does in
// the browser. Without this file every button still works (the server adds and removes items).
//
// - "Add <noun>" appends an empty item in place and focuses it; "Remove" takes its item away (the
//   last one is only emptied) and focuses a neighbour. Items are renumbered: ids (f-<path>-<i>, and
//   the ids of their hints and errors), labels ("Sub-domain 2") and the remove buttons' values.
// - Enter in an item adds the next item (focusing an empty one that already follows) instead of
//   submitting the form, as the seed GUI did.
// The error summary's focus after a 422 needs no script: it is autofocus, which htmx honours on swap.
(() => {
  "use strict";

  const capitalised = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  function renumber(list) {
    const path = list.dataset.list;
    const noun = list.dataset.noun || "item";
    const base = "f-" + path.replaceAll(".", "-") + "-";
    const old = new RegExp("^" + base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "\\d+");
    list.querySelectorAll(":scope > li").forEach((item, index) => {
      const fresh = base + index;
      item.querySelectorAll("[id], label[for], [aria-describedby]").forEach((el) => {
        if (el.id) el.id = el.id.replace(old, fresh);
        if (el.htmlFor) el.htmlFor = el.htmlFor.replace(old, fresh);
        const described = el.getAttribute("aria-describedby");
        if (described) el.setAttribute("aria-describedby", described.split(" ").map((id) => id.replace(old, fresh)).join(" "));
      });
      const label = item.querySelector("label");
      if (label) label.textContent = capitalised(noun) + " " + (index + 1);
      const remove = item.querySelector("button[name=remove-item]");
      if (remove) {
        remove.value = path + ":" + index;
        remove.setAttribute("aria-label", "Remove " + noun + " " + (index + 1));
      }
    });
    const add = list.parentElement.querySelector("button[name=add-item]");
    const max = Number(list.dataset.max || 0);
    if (add) add.hidden = max > 0 && list.children.length >= max;
  }

  function blank(item) {
    item.classList.remove("has-error");
    item.querySelectorAll(".errors").forEach((el) => el.remove());
    const input = item.querySelector("input");
    input.value = "";
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
    return input;
  }

  function add(list) {
    const max = Number(list.dataset.max || 0);
    if (max > 0 && list.children.length >= max) return null;
    const item = list.lastElementChild.cloneNode(true);
    const input = blank(item);
    list.append(item);
    renumber(list);
    input.focus();
    return input;
  }

  function remove(item) {
    const list = item.parentElement;
    if (list.children.length === 1) {
      blank(item).focus();
      return;
    }
    const neighbour = item.nextElementSibling || item.previousElementSibling;
    item.remove();
    renumber(list);
    neighbour.querySelector("input").focus();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[name=add-item], button[name=remove-item]");
    if (!button) return;
    if (button.name === "add-item") {
      const list = button.parentElement.querySelector("ol[data-list]");
      if (!list) return;
      event.preventDefault();
      add(list);
      return;
    }
    const item = button.closest("ol[data-list] > li");
    if (!item) return;
    event.preventDefault();
    remove(item);
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || event.ctrlKey || event.metaKey || event.altKey) return;
    const input = event.target.closest && event.target.closest("ol[data-list] > li input");
    if (!input) return;
    event.preventDefault();  // never submits the form
    if (!input.value.trim()) return;
    const item = input.closest("li");
    const next = item.nextElementSibling && item.nextElementSibling.querySelector("input");
    if (next && !next.value.trim()) {
      next.focus();
      return;
    }
    add(item.parentElement);
  });
})();

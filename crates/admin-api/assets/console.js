// Halyard's console: small enhancements over plain HTML forms, which work without this file.
"use strict";

document.documentElement.classList.add("js");

// Password rules turn green as they are met. The server checks them again on submit.
const checks = {
  length: (p) => p.length >= 10 && p.length <= 128,
  repeat: (p) => !/(.)\1\1/u.test(p),
  lower: (p) => /[a-z]/.test(p),
  upper: (p) => /[A-Z]/.test(p),
  digit: (p) => /[0-9]/.test(p),
  symbol: (p) => /[^A-Za-z0-9]/.test(p),
};
for (const input of document.querySelectorAll("input[data-rules]")) {
  const list = document.getElementById(input.dataset.rules);
  if (!list) continue;
  const update = () => {
    for (const item of list.querySelectorAll("li[data-rule]")) {
      const check = checks[item.dataset.rule];
      const met = check ? check(input.value) : false;
      item.classList.toggle("met", met);
      item.setAttribute("aria-label", (met ? "met: " : "not met: ") + item.textContent);
    }
  };
  input.addEventListener("input", update);
  update();
}

// Switches flip without reloading the page; a refused switch is sent again as the plain form,
// so that the page the server answers says why.
for (const form of document.querySelectorAll("form.toggle")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) throw new Error(String(response.status));
      const state = await response.json();
      const on = state.enabled === true;
      button.setAttribute("aria-pressed", String(on));
      button.textContent = on ? "On" : "Off";
      form.querySelector("input[name=enabled]").value = on ? "false" : "true";
    } catch (_error) {
      form.submit();
    } finally {
      button.disabled = false;
    }
  });
}

// Copy buttons put their text on the clipboard.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(button.dataset.copy);
      button.textContent = "Copied";
    } catch (_error) {
      button.textContent = "Select the link and copy it";
    }
  });
}

// A constraint's hint follows the operator chosen.
const fitHint = (select) => {
  const row = select.closest(".constraint-row");
  const hint = row && row.querySelector("small[id$='-hint']");
  const chosen = select.selectedOptions[0];
  if (hint && chosen && chosen.dataset.hint) hint.textContent = chosen.dataset.hint;
};
// A constraint's values offer the legal values of the field typed, when it has them.
const offerLegal = (input) => {
  const row = input.closest(".constraint-row");
  const set = input.closest("fieldset.constraints");
  const values = row && row.querySelector("input[name$='_values']");
  const prefix = input.getAttribute("list").replace(/-fields$/u, "");
  if (!values || !set) return;
  const legal = set.querySelector(`datalist[id='${CSS.escape(prefix + "-legal-" + input.value)}']`);
  if (legal) values.setAttribute("list", legal.id);
  else values.removeAttribute("list");
};
document.addEventListener("change", (event) => {
  if (event.target.matches(".constraint-row select")) fitHint(event.target);
  if (event.target.matches(".constraint-row input[list$='-fields']")) offerLegal(event.target);
});

// "Add a constraint" copies the last row, empty, numbered after it.
for (const button of document.querySelectorAll("button[data-add-constraint]")) {
  button.addEventListener("click", () => {
    const set = button.closest("fieldset.constraints");
    const rows = set.querySelectorAll(".constraint-row");
    const last = rows[rows.length - 1];
    const index = rows.length;
    const copy = last.cloneNode(true);
    const renumber = (text) => text.replace(/c\d+([-_])/u, `c${index}$1`);
    for (const element of copy.querySelectorAll("[id], [name], [for], [aria-describedby]")) {
      for (const attribute of ["id", "name", "for", "aria-describedby"]) {
        const value = element.getAttribute(attribute);
        if (value) element.setAttribute(attribute, renumber(value));
      }
      if (element.matches("input[type=text]")) element.value = "";
      if (element.matches("input[type=checkbox]")) element.checked = false;
    }
    copy.setAttribute("aria-label", `Constraint ${index + 1}`);
    last.after(copy);
    copy.querySelector("input").focus();
  });
}

// A chosen file is read into the text area it names, for forms that post the document as text.
for (const input of document.querySelectorAll("input[type=file][data-fill]")) {
  input.addEventListener("change", async () => {
    const target = document.getElementById(input.dataset.fill);
    const file = input.files && input.files[0];
    if (target && file) target.value = await file.text();
  });
}

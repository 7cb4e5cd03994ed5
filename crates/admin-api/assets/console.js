// Halyard's console: small enhancements over plain HTML forms, which work without this file.
"use strict";

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

// Switches flip without reloading the page; on failure the page reloads to show the truth.
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
      window.location.reload();
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

/* lode's /api/docs: Swagger UI from lode's own origin. When the server has an API key it
   is asked once per browser tab (the same sessionStorage entry as the web page), the
   OpenAPI document is fetched with it, and every "try it out" request carries it. */
"use strict";
(() => {
  const KEY = "lode.apiKey";
  const body = document.body;
  const status = document.getElementById("lode-status");
  const needsKey = body.dataset.keyRequired === "true";

  const askKey = (message) =>
    new Promise((resolve) => {
      const dialog = document.getElementById("key-dialog");
      const form = document.getElementById("key-form");
      document.getElementById("err-key").textContent = message;
      form.onsubmit = (event) => {
        event.preventDefault();
        const key = form.elements.key.value.trim();
        if (!key) return;
        sessionStorage.setItem(KEY, key);
        dialog.close();
        resolve(key);
      };
      if (!dialog.open) dialog.showModal();
      form.elements.key.focus();
    });

  const authorization = () => {
    const key = sessionStorage.getItem(KEY);
    return key ? { Authorization: `Bearer ${key}` } : {};
  };

  async function loadSpec() {
    for (;;) {
      if (needsKey && !sessionStorage.getItem(KEY)) await askKey("");
      const response = await fetch(body.dataset.spec, { headers: authorization() });
      if (response.status === 401 && needsKey) {
        sessionStorage.removeItem(KEY);
        await askKey("The server refused that key; try again.");
        continue;
      }
      if (!response.ok) throw new Error(`${body.dataset.spec} answered ${response.status}`);
      return response.json();
    }
  }

  loadSpec()
    .then((spec) => {
      window.ui = window.SwaggerUIBundle({
        spec,
        dom_id: "#swagger-ui",
        deepLinking: true,
        validatorUrl: null, // Swagger UI's default validator is a remote service
        tryItOutEnabled: false,
        requestInterceptor: (request) => {
          Object.assign(request.headers, authorization());
          return request;
        },
      });
      status.textContent = "";
    })
    .catch((error) => {
      status.textContent = `Could not load the API description: ${error.message}`;
    });
})();

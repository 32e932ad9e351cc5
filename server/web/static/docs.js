/* lode's /api/docs: Swagger UI from lode's own origin. The OpenAPI document is public (it
   holds no data). When the server has an API key it is asked once per browser tab (the same
   sessionStorage entry as the web page), tried on a request that needs it, and every
   "try it out" request carries it. */
"use strict";
(() => {
  const KEY = "lode.apiKey";
  const body = document.body;
  const status = document.getElementById("lode-status");
  const needsKey = body.dataset.keyRequired === "true";
  const KEY_CHECK = "/api/v1/tasks?limit=1"; // a cheap request that needs the key

  // ---- the login link (`lode serve` prints /#token=…): the token kept for this tab, the
  // URL cleaned so it is neither bookmarked nor shown ------------------------------------
  const login = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (login) {
    sessionStorage.setItem(KEY, decodeURIComponent(login[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }

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

  async function checkKey() {
    for (let message = ""; ; message = "The server refused that key; try again.") {
      if (!sessionStorage.getItem(KEY)) await askKey(message);
      const response = await fetch(KEY_CHECK, { headers: authorization() });
      if (response.status !== 401) return;
      sessionStorage.removeItem(KEY);
    }
  }

  async function loadSpec() {
    if (needsKey) await checkKey();
    const response = await fetch(body.dataset.spec);
    if (!response.ok) throw new Error(`${body.dataset.spec} answered ${response.status}`);
    return response.json();
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

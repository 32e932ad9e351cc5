/* lode's web page: a little vanilla JS, no build step, nothing from a CDN.
   Views (body[data-view]): search, chunk, projects. HTML comes from /ui/fragments/*,
   actions go to the JSON API; the API key (when the server has one) is asked once and
   kept in sessionStorage. */
"use strict";
(() => {
  const KEY = "lode.apiKey";
  const LAST_SEARCH = "lode.lastSearch";
  const body = document.body;
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];
  const split = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

  // ---- the login link (`lode serve` prints /#token=…): the token kept for this tab, the
  // URL cleaned so it is neither bookmarked nor shown ------------------------------------
  const login = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (login) {
    sessionStorage.setItem(KEY, decodeURIComponent(login[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }

  // ---- the API key -------------------------------------------------------------------
  let keyPrompt = null;

  function askKey(message) {
    keyPrompt ??= new Promise((resolve) => {
      const dialog = $("#key-dialog");
      const form = $("#key-form");
      setError(form, "key", message);
      dialog.addEventListener("cancel", (ev) => ev.preventDefault());
      form.onsubmit = (ev) => {
        ev.preventDefault();
        const key = form.elements.key.value.trim();
        if (!key) return setError(form, "key", "Enter the server's key: LODE_API_KEY, or the token `lode service status` shows.");
        sessionStorage.setItem(KEY, key);
        form.reset();
        dialog.close();
        keyPrompt = null;
        resolve();
      };
      dialog.showModal();
    });
    return keyPrompt;
  }

  class ApiError extends Error {
    constructor(status, detail, extra) {
      super(detail);
      this.status = status;
      this.extra = Array.isArray(extra) ? extra : [];
    }
  }

  async function call(path, { method = "GET", json, signal } = {}) {
    if (body.dataset.keyRequired === "true" && !sessionStorage.getItem(KEY)) await askKey("");
    for (;;) {
      const key = sessionStorage.getItem(KEY);
      const headers = { Accept: "text/html, application/json" };
      if (key) headers.Authorization = `Bearer ${key}`;
      if (json !== undefined) headers["Content-Type"] = "application/json";
      let res;
      try {
        res = await fetch(path, { method, headers, signal, body: json === undefined ? undefined : JSON.stringify(json) });
      } catch (err) {
        if (err.name === "AbortError") throw err;
        throw new ApiError(0, "The server did not answer. Is lode serve still running?");
      }
      if (res.status === 401) {
        sessionStorage.removeItem(KEY);
        await askKey(key ? "The server refused that key; try again." : "");
        continue;
      }
      if (res.ok) return res;
      const error = await res.json().catch(() => ({ detail: `${res.status} ${res.statusText}` }));
      throw new ApiError(res.status, error.detail || `HTTP ${res.status}`, error.extra);
    }
  }

  // ---- designed states ---------------------------------------------------------------
  function setError(form, name, message) {
    const slot = form.querySelector(`[data-error-for="${name}"]`);
    const input = form.elements[name];
    if (slot) slot.textContent = message || "";
    if (input?.setAttribute) input.setAttribute("aria-invalid", message ? "true" : "false");
    return Boolean(slot);
  }

  function clearErrors(form) {
    for (const slot of $$("[data-error-for]", form)) setError(form, slot.dataset.errorFor, "");
  }

  /** Put each `extra` item of a 400 under its field; false when none has a field here. */
  function showFieldErrors(form, err) {
    let placed = false;
    for (const item of err.extra) {
      const name = String(item.key || "").replace(/[.[].*$/, "");
      placed = setError(form, name, item.message || err.message) || placed;
    }
    return placed;
  }

  function errorState(target, err) {
    const titles = { 0: "No answer", 404: "Not found", 503: "Not ready" };
    const box = document.createElement("div");
    box.className = "state error";
    box.dataset.state = "error";
    box.append(document.createElement("h2"), document.createElement("p"));
    box.firstChild.textContent = titles[err.status] || (err.status >= 500 ? "The server failed" : "Request refused");
    box.lastChild.textContent = err.message;
    target.replaceChildren(box);
  }

  // ---- search ------------------------------------------------------------------------
  function searchView() {
    const form = $("#search");
    const results = $("#results");
    const status = $("#status");
    const q = form.elements.query;
    const lists = ["languages", "node_types", "exclude_roles", "path_include", "path_exclude"];
    const fields = ["projects", "mode", "granularity", ...lists];
    const params = new URLSearchParams(location.search);
    q.value = params.get("q") || "";
    for (const name of fields) if (params.has(name)) form.elements[name].value = params.get(name);
    let timer = 0;
    let ctrl = null;
    let seq = 0;
    let selected = -1;

    const projects = form.elements.projects;
    const wanted = params.get("projects");
    if (wanted) projects.add(new Option(wanted, wanted, true, true));
    call("/api/v1/projects")
      .then((res) => res.json())
      .then((list) => {
        for (const p of list) if (p.name !== wanted) projects.add(new Option(p.name, p.name));
      })
      .catch(() => {});

    function request() {
      const data = { query: q.value, mode: form.elements.mode.value, granularity: form.elements.granularity.value };
      Object.assign(data, { limit: 20, file_limit: 10, chunks_per_file: 3 });
      if (projects.value) data.projects = [projects.value];
      for (const name of lists) {
        const values = split(form.elements[name].value);
        if (values.length) data[name] = values;
      }
      return data;
    }

    function syncUrl() {
      const out = new URLSearchParams();
      if (q.value) out.set("q", q.value);
      for (const name of fields) {
        const el = form.elements[name];
        if (el.value && el.value !== el.options?.[0]?.value) out.set(name, el.value);
      }
      const url = out.toString() ? `/?${out}` : "/";
      history.replaceState(null, "", url);
      sessionStorage.setItem(LAST_SEARCH, url);
    }

    async function run() {
      clearTimeout(timer);
      ctrl?.abort();
      ctrl = new AbortController();
      const mine = ++seq;
      const started = performance.now();
      const slow = setTimeout(() => (status.textContent = "Searching…"), 200);
      results.setAttribute("aria-busy", "true");
      syncUrl();
      try {
        const res = await call("/ui/fragments/results", { method: "POST", json: request(), signal: ctrl.signal });
        const html = await res.text();
        if (mine !== seq) return;
        clearErrors(form);
        results.innerHTML = html;
        const ms = performance.now() - started;
        body.dataset.searchMs = ms.toFixed(1);
        body.dataset.searchSeq = String(mine);
        status.textContent = "";
        $(".summary", results)?.append(` · ${ms.toFixed(0)} ms round trip`);
        selected = -1;
      } catch (err) {
        if (err.name === "AbortError" || mine !== seq) return;
        clearErrors(form);
        if (err.status === 400 && showFieldErrors(form, err)) {
          results.replaceChildren();
          status.textContent = "Fix the marked field to search.";
        } else {
          status.textContent = "";
          errorState(results, err);
        }
        body.dataset.searchSeq = String(mine);
      } finally {
        clearTimeout(slow);
        if (mine === seq) results.removeAttribute("aria-busy");
      }
    }

    function schedule(ms) {
      clearTimeout(timer);
      timer = setTimeout(run, ms);
    }

    const hits = () => $$(".hit", results);

    function select(index) {
      const list = hits();
      if (!list.length) return;
      selected = Math.max(0, Math.min(index, list.length - 1));
      list.forEach((hit, i) => {
        hit.classList.toggle("sel", i === selected);
        if (i === selected) hit.setAttribute("aria-current", "true");
        else hit.removeAttribute("aria-current");
      });
      list[selected].scrollIntoView({ block: "nearest" });
    }

    function open(index) {
      const link = hits()[index]?.querySelector(".hit-link");
      if (link) location.href = link.href;
    }

    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      run();
    });
    form.addEventListener("input", (ev) => schedule(ev.target === q ? 120 : 300));
    form.addEventListener("change", (ev) => ev.target.tagName === "SELECT" && run());
    document.addEventListener("keydown", (ev) => {
      if (ev.altKey || ev.ctrlKey || ev.metaKey || $("#key-dialog").open) return;
      const inField = ev.target.matches("input, select, textarea");
      if (ev.key === "/" && !inField) {
        ev.preventDefault();
        q.focus();
        q.select();
      } else if (inField && ev.target !== q) {
        return;
      } else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        select(selected + (ev.key === "ArrowDown" ? 1 : -1));
      } else if (ev.key === "Enter" && (ev.target === q || !ev.target.closest("a, button"))) {
        ev.preventDefault();
        if (selected >= 0) open(selected);
        else run();
      } else if (ev.key === "Escape" && selected >= 0) {
        selected = -1;
        for (const hit of hits()) {
          hit.classList.remove("sel");
          hit.removeAttribute("aria-current");
        }
      }
    });
    run();
  }

  // ---- one chunk in its file ---------------------------------------------------------
  function back() {
    const ours = document.referrer && new URL(document.referrer).origin === location.origin;
    if (ours && history.length > 1) history.back();
    else location.href = sessionStorage.getItem(LAST_SEARCH) || "/";
  }

  async function chunkView() {
    const box = $("#chunk");
    box.addEventListener("click", (ev) => {
      if (!ev.target.closest("[data-back]")) return;
      ev.preventDefault();
      back();
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.target.matches("input, select, textarea")) return;
      if (ev.key === "Escape") back();
      else if (ev.key === "e") $("[data-editor]", box)?.click();
    });
    try {
      const res = await call(`/ui/fragments/chunks/${encodeURIComponent(body.dataset.chunkId)}`);
      box.innerHTML = await res.text();
      $("[data-back]", box).href = sessionStorage.getItem(LAST_SEARCH) || "/";
      document.title = `${$(".path", box).textContent} · lode`;
      $(".ln.ck", box)?.scrollIntoView({ block: "center" });
    } catch (err) {
      errorState(box, err);
    }
  }

  // ---- projects ----------------------------------------------------------------------
  let refreshProjects = null;

  function projectsView() {
    const box = $("#projects");
    let timer = 0;
    let last = "";

    async function refresh() {
      clearTimeout(timer);
      try {
        const html = await (await call("/ui/fragments/projects")).text();
        if (html !== last) {
          const focused = document.activeElement?.closest?.("[data-action]");
          box.innerHTML = last = html;
          if (focused) {
            const { action, id } = focused.dataset;
            box.querySelector(`[data-action="${action}"][data-id="${CSS.escape(id)}"]`)?.focus();
          }
        }
      } catch (err) {
        last = "";
        errorState(box, err);
      }
      const live = $(".plist", box)?.dataset.live === "true";
      timer = setTimeout(refresh, live ? 700 : document.hidden ? 15000 : 5000);
    }

    box.addEventListener("click", async (ev) => {
      const button = ev.target.closest("button[data-action]");
      if (!button) return;
      button.disabled = true;
      const full = button.dataset.action === "rebuild";
      try {
        await call(`/api/v1/projects/${encodeURIComponent(button.dataset.id)}/index`, { method: "POST", json: { full } });
      } catch (err) {
        errorState(box, err);
      }
      last = "";  // re-render even if nothing changed, to enable the button again
      refresh();
    });
    refreshProjects = refresh;
    refresh();
  }

  // ---- adding a project (projects view and the search view's empty state) -------------
  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form[data-add-project]");
    if (!form) return;
    ev.preventDefault();
    clearErrors(form);
    const path = form.elements.path.value.trim();
    if (!path) return setError(form, "path", "Type the absolute path of a folder.");
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      await call("/api/v1/projects", { method: "POST", json: { path } });
      form.reset();
      if (refreshProjects) refreshProjects();
      else location.href = "/ui/projects";
    } catch (err) {
      if (!showFieldErrors(form, err)) setError(form, "path", err.message);
    } finally {
      button.disabled = false;
    }
  });

  ({ search: searchView, chunk: chunkView, projects: projectsView })[body.dataset.view]?.();
})();

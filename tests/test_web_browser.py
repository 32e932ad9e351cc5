"""The web page end to end in a real headless Chromium: Debian's ``chromium`` package
driven by Playwright (which never downloads a browser of its own), against a real
server on 127.0.0.1 with the fake embedder.

Writes ``test-artifacts/web-results.png`` and ``test-artifacts/web-metrics.json``, and
prints the first render's size and the search round trip (reported, not asserted).
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread

from indexer.config import load_config
from indexer.embed import FakeEmbedder

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
WAIT_SEARCH = """([seq, query]) => {
    const done = document.body.dataset.searchSeq !== seq && !document.querySelector('#results[aria-busy]');
    return done && (query === null || document.querySelector(`#results [data-query="${query}"]`) !== null);
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, a fresh profile per launch (Playwright's default)."""
    if CHROMIUM is None:
        pytest.skip(
            "Debian's chromium is not installed (scripts/setup installs it: apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base_dir = tmp_path_factory.mktemp("web")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder(delay=0.01)) as base:  # progress stays visible a while
        yield base, repo


def _search(page: Any, action: Any, query: str | None = None) -> tuple[float, float]:
    """Run ``action`` (typing or filling a field) and wait for its search: the round trip
    measured by the page (request to results in the DOM) and the server's search time, in ms."""
    before = page.evaluate("document.body.dataset.searchSeq || ''")
    action()
    page.wait_for_function(WAIT_SEARCH, arg=[before, query], timeout=30_000)
    took = page.evaluate("document.querySelector('#results .summary')?.dataset.took || 'nan'")
    return float(page.evaluate("document.body.dataset.searchMs || 'nan'")), float(took)


def _console_error(message: Any, errors: list[str]) -> None:
    """Console errors, except the browser's note on each 4xx the test provokes on purpose."""
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        errors.append(message.text)


def _first_render(page: Any, url: str) -> int:
    """Bytes of the HTML, CSS and JS of the page's first load."""
    responses: list[Any] = []

    def record(request: Any) -> None:
        responses.append(request)

    page.on("requestfinished", record)
    page.goto(url, wait_until="load")
    page.remove_listener("requestfinished", record)
    kinds = {r.resource_type: len(r.response().body()) for r in responses}
    assert set(kinds) >= {"document", "stylesheet", "script"}, kinds
    return sum(kinds[k] for k in ("document", "stylesheet", "script"))


def test_add_project_search_open_filter_and_errors(browser: Any, site: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    base, repo = site
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: _console_error(msg, errors))
    first_render = _first_render(page, base + "/")
    assert first_render < 100_000

    # No project yet: the designed empty state offers to add one.
    expect(page.locator("#results [data-state=empty]")).to_be_visible()
    page.fill("#f-empty-path", str(repo / "missing"))
    page.press("#f-empty-path", "Enter")
    expect(page.locator("#err-empty-path")).to_contain_text("does not exist")
    page.fill("#f-empty-path", str(repo))
    page.press("#f-empty-path", "Enter")
    page.wait_for_url("**/ui/projects")

    # Live progress, to the end; then the card shows the project's size.
    card = page.locator(".pcard[data-name=repo]")
    expect(card).to_have_attribute("data-state", "indexing")
    expect(card.locator(".task progress")).to_be_visible()
    expect(card).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(card.locator(".task")).to_have_count(0)
    card.locator("button[data-action=reindex]").click()
    expect(card.locator("button[data-action=reindex]")).to_be_enabled()  # posted, then re-rendered
    expect(card).to_have_attribute("data-state", "ready", timeout=60_000)
    assert len(httpx.get(f"{base}/api/v1/tasks", params={"project": "repo"}).json()) == 2
    expect(card.locator(".stats dd").first).to_have_text("11")
    expect(card.locator(".stats")).to_contain_text("100 %")

    # Results as one types, highlighted, matching lines marked.
    page.click("nav >> text=Search")
    expect(page.locator("#results [data-state=hint]")).to_be_visible()
    query = page.locator("#f-query")
    _search(page, lambda: query.press_sequentially("cart total", delay=20), "cart total")
    hits = page.locator("#results .hit")
    assert hits.count() > 3
    expect(hits.first.locator(".lines")).to_contain_text("cart.py:")
    assert page.locator("#results .hit .ln.mk").count() > 0
    assert page.locator("#results .hit pre.hl .k").count() > 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-results.png"))

    queries = ("apply discount", "parse request", "session token", "router", "widget", "price", "cart total")
    round_trips = [_search(page, partial(query.fill, text), text) for text in queries]

    # Keyboard: ↓ ↓ ↑ selects the first hit, Enter opens it in its file.
    first_id = hits.first.get_attribute("id")
    assert first_id is not None
    query.press("ArrowDown")
    query.press("ArrowDown")
    query.press("ArrowUp")
    expect(hits.first).to_have_class("hit sel")
    query.press("Enter")
    page.wait_for_url(f"**/ui/chunks/{first_id.removeprefix('hit-')}")
    article = page.locator("#chunk article[data-state=chunk]")
    expect(article).to_be_visible()
    start = int(article.get_attribute("data-start") or 0)
    end = int(article.get_attribute("data-end") or 0)
    expect(page.locator("#chunk .ln.ck")).to_have_count(end - start + 1)
    expect(page.locator(f"#L{start}")).to_be_in_viewport()
    path = page.locator("#chunk h1.path").inner_text()
    expect(page.locator("[data-editor]")).to_have_attribute("href", f"vscode://file{repo}/{path}:{start}")

    # Esc goes back to the same search.
    page.keyboard.press("Escape")
    page.wait_for_url("**/?q=cart+total*")
    expect(page.locator("#f-query")).to_have_value("cart total")
    expect(page.locator("#results [data-state=results]")).to_be_visible()

    # A language filter narrows the results.
    _search(page, lambda: page.fill("#f-languages", "go"))
    languages = page.locator("#results .hit").evaluate_all("els => els.map(e => e.dataset.lang)")
    assert languages
    assert set(languages) == {"go"}

    # A bad glob: the field's message inline, no stale results, then recovery.
    _search(page, lambda: page.fill("#f-path_include", "src/[z-a]*"))
    expect(page.locator("#err-path_include")).to_contain_text("not a valid glob")
    expect(page.locator("#f-path_include")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#results .hit")).to_have_count(0)
    _search(page, lambda: page.fill("#f-path_include", "src/**"))
    expect(page.locator("#err-path_include")).to_be_hidden()
    assert page.locator("#results .hit").count() > 0

    assert errors == []
    median = statistics.median(ms for ms, _ in round_trips)
    server = statistics.median(took for _, took in round_trips)
    metrics = {
        "first_render_bytes": first_render,
        "search_round_trip_ms": [ms for ms, _ in round_trips],
        "server_search_ms": [took for _, took in round_trips],
        "round_trip_median_ms": median,
    }
    (ARTIFACTS / "web-metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(
        f"\nweb: first render {first_render / 1000:.1f} KB (HTML+CSS+JS); search round trip in the "
        f"browser median {median:.0f} ms over {len(round_trips)} queries (server search {server:.0f} ms)"
    )
    page.close()


def test_api_key_is_asked_once_per_session(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": "s3cret"})
    with serve_in_thread(config, FakeEmbedder()) as base:
        context = browser.new_context()
        page = context.new_page()
        page.goto(base + "/")
        dialog = page.locator("#key-dialog")
        expect(dialog).to_be_visible()
        dialog.locator("input[name=key]").fill("wrong")
        dialog.locator("input[name=key]").press("Enter")
        expect(dialog.locator("#err-key")).to_contain_text("refused")
        dialog.locator("input[name=key]").fill("s3cret")
        dialog.locator("input[name=key]").press("Enter")
        expect(dialog).to_be_hidden()
        expect(page.locator("#results [data-state=empty]")).to_be_visible()

        page.goto(base + "/ui/projects")  # the same tab's session keeps the key
        expect(page.locator("#projects [data-state=empty]")).to_be_visible()
        expect(dialog).to_be_hidden()
        context.close()

        fresh = browser.new_context().new_page()  # a new session asks again
        fresh.goto(base + "/")
        expect(fresh.locator("#key-dialog")).to_be_visible()
        fresh.context.close()


def test_the_login_link_gives_the_page_the_token_once(browser: Any, tmp_path: Path) -> None:
    """``/#token=…`` (what ``lode serve`` and ``lode service status`` print): the page
    keeps the token for the tab, asks nothing, and takes it out of the address."""
    from playwright.sync_api import expect

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": "t0ken"})
    with serve_in_thread(config, FakeEmbedder()) as base:
        page = browser.new_context().new_page()
        page.goto(base + "/#token=t0ken")
        expect(page.locator("#results [data-state=empty]")).to_be_visible()
        expect(page.locator("#key-dialog")).to_be_hidden()
        assert page.url == base + "/"
        page.goto(base + "/ui/projects")  # the tab keeps it
        expect(page.locator("#projects [data-state=empty]")).to_be_visible()
        docs = page.context.new_page()  # /api/docs takes the link too
        docs.goto(base + "/api/docs#token=t0ken")
        expect(docs.locator("#key-dialog")).to_be_hidden()
        page.context.close()


_LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")


def _offline_context(browser: Any) -> tuple[Any, list[str]]:
    """A browser context with no network beyond loopback: every other request is aborted
    (as on a machine without internet) and recorded, so a test can assert none was tried."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    attempted: list[str] = []

    def route(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in _LOOPBACK:
            route.continue_()
        else:
            attempted.append(url)
            route.abort("internetdisconnected")

    context.route("**/*", route)
    return context, attempted


def _try_it_out(page: Any, method: str, path: str) -> Any:
    """Open an operation in Swagger UI, press "Try it out" then "Execute"; its live response."""
    block = page.locator(f".opblock-{method}", has=page.locator(f'[data-path="{path}"]'))
    block.locator(".opblock-summary").first.click()
    block.get_by_role("button", name="Try it out").click()
    block.get_by_role("button", name="Execute").click()
    return block.locator(".live-responses-table .response").first


def test_api_docs_render_and_try_it_out_with_no_network(browser: Any, site: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    base, _ = site
    context, attempted = _offline_context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: _console_error(msg, errors))
    page.goto(base + "/api/docs")

    spec = httpx.get(f"{base}/api/openapi.json").json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    expect(page.locator(".opblock")).to_have_count(operations, timeout=30_000)
    expect(page.locator(".info .title")).to_contain_text("lode")

    health = _try_it_out(page, "get", "/health")
    expect(health.locator(".response-col_status")).to_contain_text("200", timeout=30_000)
    expect(health.locator(".response-col_description")).to_contain_text("worker_alive")

    projects = _try_it_out(page, "get", "/api/v1/projects")
    expect(projects.locator(".response-col_status")).to_contain_text("200", timeout=30_000)

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "api-docs.png"))
    assert attempted == []
    assert errors == []
    context.close()


def test_api_docs_ask_for_the_key_and_send_it(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False, "api_key": "s3cret"})
    with serve_in_thread(config, FakeEmbedder()) as base:
        assert httpx.get(f"{base}/api/openapi.json").status_code == 200  # public: it holds no data
        context, attempted = _offline_context(browser)
        page = context.new_page()
        page.goto(base + "/api/docs")
        dialog = page.locator("#key-dialog")
        expect(dialog).to_be_visible()
        dialog.locator("input[name=key]").fill("wrong")
        dialog.locator("input[name=key]").press("Enter")
        expect(dialog.locator("#err-key")).to_contain_text("refused")
        dialog.locator("input[name=key]").fill("s3cret")
        dialog.locator("input[name=key]").press("Enter")
        expect(dialog).to_be_hidden()
        expect(page.locator(".opblock").first).to_be_visible(timeout=30_000)

        projects = _try_it_out(page, "get", "/api/v1/projects")
        expect(projects.locator(".response-col_status")).to_contain_text("200", timeout=30_000)

        page.goto(base + "/")  # the web page shares the tab's key
        expect(page.locator("#results [data-state=empty]")).to_be_visible()
        expect(page.locator("#key-dialog")).to_be_hidden()
        assert attempted == []
        context.close()

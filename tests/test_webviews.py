"""Editor webviews and browsers (issue 41): ``LODE_CORS_ORIGINS`` takes origin patterns
(``vscode-webview://*``); a refused request's 403 carries CORS headers so the page sees
it and its reason; preflights are answered; the browser guard stays on for the rest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live import serve_in_thread

from indexer.config import load_config
from indexer.embed import FakeEmbedder
from server.security import AllowedOrigins

API = "/api/v1"
WEBVIEW = "vscode-webview://1f0a9c3be2d4"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type,authorization",
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server allowing every VS Code webview and one exact origin."""
    db = tmp_path_factory.mktemp("webviews") / "db"
    origins = ("vscode-webview://*", "http://editor.test:3000")
    config = load_config(env={}, overrides={"db": db, "enabled": False, "cors_origins": origins})
    with serve_in_thread(config, FakeEmbedder()) as url:
        yield url


@pytest.fixture(scope="module")
def closed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with no CORS origin configured."""
    db = tmp_path_factory.mktemp("closed") / "db"
    config = load_config(env={}, overrides={"db": db, "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as url:
        yield url


def test_a_webview_origin_pattern_is_allowed_with_cors_headers(base: str) -> None:
    body = {"query": "cart"}
    answer = httpx.post(f"{base}{API}/search", json=body, headers={"Origin": WEBVIEW})
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == WEBVIEW
    assert "Origin" in answer.headers["vary"]
    exact = httpx.get(f"{base}{API}/projects", headers={"Origin": "http://editor.test:3000"})
    assert exact.status_code == 200
    assert exact.headers["access-control-allow-origin"] == "http://editor.test:3000"


def test_a_webview_preflight_is_answered(base: str) -> None:
    answer = httpx.options(f"{base}{API}/search", headers={"Origin": WEBVIEW, **PREFLIGHT})
    assert 200 <= answer.status_code < 300, answer.text
    assert answer.headers["access-control-allow-origin"] == WEBVIEW
    assert "POST" in answer.headers["access-control-allow-methods"]
    allowed = {h.strip().lower() for h in answer.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "authorization"} <= allowed


def test_a_foreign_origin_is_refused_with_cors_headers_and_its_reason(base: str) -> None:
    for origin in ("https://evil.example", "http://editor.test:4000", "vscode-webviewx://1f0a", "null"):
        answer = httpx.post(f"{base}{API}/search", json={"query": "cart"}, headers={"Origin": origin})
        assert answer.status_code == 403, (origin, answer.text)
        # the page can read the refusal: it sees a 403 and why, not "Failed to fetch"
        assert answer.headers["access-control-allow-origin"] == origin
        assert "Origin" in answer.headers["vary"]
        error = answer.json()
        assert error["extra"][0]["key"] == "Origin"
        assert "cors_origins" in error["detail"]
        # its preflight is answered, so the browser sends the request and shows that 403
        preflight = httpx.options(f"{base}{API}/search", headers={"Origin": origin, **PREFLIGHT})
        assert 200 <= preflight.status_code < 300
        assert preflight.headers["access-control-allow-origin"] == origin


def test_without_cors_origins_a_webview_sees_its_refusal(closed: str) -> None:
    answer = httpx.get(f"{closed}{API}/projects", headers={"Origin": WEBVIEW})
    assert answer.status_code == 403
    assert answer.headers["access-control-allow-origin"] == WEBVIEW
    assert answer.json()["extra"][0]["key"] == "Origin"


def test_the_browser_guard_stays_on_for_everything_else(base: str) -> None:
    port = base.rsplit(":", 1)[1]
    rebound = httpx.get(f"{base}{API}/projects", headers={"Host": f"evil.example:{port}", "Origin": WEBVIEW})
    assert rebound.status_code == 403
    assert rebound.json()["extra"][0]["key"] == "Host"
    cross = httpx.get(f"{base}{API}/projects", headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert cross.json()["extra"][0]["key"] == "Sec-Fetch-Site"
    own = httpx.get(f"{base}{API}/projects", headers={"Origin": f"http://localhost:{port}"})
    assert own.status_code == 200
    assert httpx.get(f"{base}{API}/projects").status_code == 200


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("vscode-webview://abc123", True),
        ("VSCODE-WEBVIEW://ABC123", True),
        ("vscode-webview://", False),
        ("vscode-webview://a/b", False),
        ("https://vscode-webview.evil", False),
        ("http://localhost:5173", True),
        ("http://localhost:5173.evil.example", False),
        ("http://localhost", False),
        ("http://editor.test:3000", True),
        ("http://editor.test:3000/", True),
        ("http://editor.test:30000", False),
    ],
)
def test_origin_patterns(origin: str, allowed: bool) -> None:
    rules = AllowedOrigins(("vscode-webview://*", "http://localhost:*", "http://editor.test:3000"))
    assert rules.allows(origin) is allowed


def test_a_star_allows_every_origin() -> None:
    assert AllowedOrigins(("*",)).allows("https://anything.example")
    assert not AllowedOrigins(()).allows("https://anything.example")


def test_a_bad_origin_pattern_is_a_config_error(tmp_path: Path) -> None:
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match="cors_origins"):
        load_config(env={"LODE_CORS_ORIGINS": "vscode-webview"}, overrides={"db": tmp_path / "db"})

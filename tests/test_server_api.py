"""The HTTP API over real HTTP on 127.0.0.1 (uvicorn), real LanceDB, fake embedder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_repo
from live import serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder

API = "/api/v1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base_dir = tmp_path_factory.mktemp("server")
    repo = make_repo(base_dir / "repo")
    config = load_config(env={}, overrides={"db": base_dir / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        yield base, repo


@pytest.fixture(scope="module")
def project(server: tuple[str, Path]) -> dict[str, Any]:
    base, repo = server
    created = httpx.post(f"{base}{API}/projects", json={"path": str(repo), "name": "shop"})
    assert created.status_code == 201, created.text
    body = created.json()
    task = wait_task(base, body["task_id"])
    assert task["status"] == "done", task
    assert task["percent"] == 100.0
    return dict(body["project"])


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"status_code", "detail", "extra"}
    assert body["status_code"] == status
    assert isinstance(body["detail"], str)
    assert body["detail"]
    assert "Traceback" not in response.text
    return dict(body)


def test_health(server: tuple[str, Path]) -> None:
    body = httpx.get(server[0] + "/health").json()
    version = body.pop("index_version")
    assert isinstance(version, int)
    assert version >= 1
    assert body == {
        "status": "ok",
        "store_open": True,
        "model_loaded": True,
        "worker_alive": True,
        "version": "0.1.0",
        "search_processes": 0,  # none with a model handed in (the fake one here)
        "role": "writer",
        "reason": None,
    }


def test_health_is_503_once_the_writer_stopped(tmp_path: Path) -> None:
    """A monitor's ``curl -f /health`` fails when the server can no longer index."""
    from litestar.testing import TestClient

    from server.app import create_app

    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    app = create_app(config, embedder=FakeEmbedder())
    with TestClient(app, base_url="http://127.0.0.1:7370", timeout=30) as client:
        assert client.get("/health").status_code == 200
        client.app.state.ctx.worker.stop()
        response = client.get("/health")
        assert response.status_code == 503
        assert response.json()["status"] == "degraded"
        assert response.json()["worker_alive"] is False


def test_project_lifecycle_and_status(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, _ = server
    listed = httpx.get(f"{base}{API}/projects").json()
    assert [p["name"] for p in listed] == ["shop"]
    one = httpx.get(f"{base}{API}/projects/{project['id']}").json()
    assert one["files"] == 11
    assert one["chunks"] > 11
    assert one["semantic_coverage"] == 1.0
    assert one["last_indexed_at"] is not None
    by_name = httpx.get(f"{base}{API}/projects/shop").json()
    assert by_name["id"] == project["id"]
    status = httpx.get(f"{base}{API}/status").json()
    assert status["model_id"] == "fake-hash-256"
    assert status["documents"] == 11
    assert status["queue"].get("done", 0) >= 1


def test_files_are_paged(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, _ = server
    page1 = httpx.get(f"{base}{API}/projects/{project['id']}/files", params={"limit": 4}).json()
    page2 = httpx.get(f"{base}{API}/projects/{project['id']}/files", params={"limit": 4, "offset": 4}).json()
    assert page1["total"] == page2["total"] == 11
    paths = [f["path"] for f in page1["files"] + page2["files"]]
    assert paths == sorted(paths)
    assert len(set(paths)) == 8
    assert {"id", "path", "language", "languages", "chunk_count", "file_size", "indexed_at"} == set(
        page1["files"][0]
    )


def test_search_both_granularities(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, _ = server
    doc = httpx.post(
        f"{base}{API}/search", json={"query": "shopping cart items", "projects": ["shop"]}
    ).json()
    assert doc["granularity"] == "document"
    assert doc["documents"][0]["file_path"] == "src/shop/cart.py"
    chunk = httpx.post(
        f"{base}{API}/search",
        json={"query": "cart", "granularity": "chunk", "node_types": ["method"], "scope_depth": [2, 2]},
    ).json()
    hits = [h for g in chunk["groups"] for h in g["chunks"]]
    assert hits
    assert all(h["node_type"] == "method" and len(h["scope_path"]) == 2 for h in hits)
    assert chunk["semantic_coverage"] == {project["id"]: 1.0}


def test_documents_and_chunks(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, _ = server
    resp = httpx.post(f"{base}{API}/search", json={"query": "apply discount", "granularity": "chunk"}).json()
    hit = resp["groups"][0]["chunks"][0]
    chunk = httpx.get(f"{base}{API}/chunks/{hit['id']}").json()
    assert chunk["content"] == hit["content"]
    assert chunk["embedded"] is True
    document = httpx.get(
        f"{base}{API}/documents/{hit['file_id']}", params={"content": True, "chunks": True}
    ).json()
    assert document["file_path"] == hit["file_path"]
    assert hit["content"] in document["content"]
    assert len(document["chunks"]) == document["chunk_count"]
    _error(httpx.get(f"{base}{API}/documents/nope"), 404)
    _error(httpx.get(f"{base}{API}/chunks/nope"), 404)


def test_search_by_names_alone(server: tuple[str, Path], project: dict[str, Any]) -> None:
    body = {"has_references": ["apply_discount"], "granularity": "chunk"}
    response = httpx.post(f"{server[0]}{API}/search", json=body)
    assert response.status_code == 200, response.text
    hits = [h for g in response.json()["groups"] for h in g["chunks"]]
    assert "total_cents" in {h["node_name"] for h in hits}
    body = {"query": "", "has_definitions": ["apply_discount"]}
    documents = httpx.post(f"{server[0]}{API}/search", json=body).json()["documents"]
    assert documents[0]["file_path"] == "src/shop/pricing.py"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": "ten"}, "limit"),
        ({"query": "x", "granularity": "page"}, "granularity"),
        ({"query": "x", "scope_depth": [-1, 1]}, "scope_depth"),
        ({"query": "x", "scope_depth": [1]}, "scope_depth"),
        ({"query": "x", "limit": "10"}, "limit"),
        ({"query": "x", "languages": ["python"] * 1001}, "languages"),
        ({"query": "x", "node_types": ["funktion"]}, "node_types"),
        ({"query": "x", "languages": ["klingon"]}, "languages"),
        ({"limit": 3}, "query"),
    ],
)
def test_search_validation_names_the_field(
    server: tuple[str, Path], body: dict[str, Any], field: str
) -> None:
    err = _error(httpx.post(f"{server[0]}{API}/search", json=body), 400)
    assert field in [e["key"] for e in err["extra"]], err


@pytest.mark.parametrize(
    ("route", "body", "why"),
    [
        ("/search", b'{"query": "\xff\xfe"}', "not UTF-8"),
        ("/search", b"[" * 5000 + b"]" * 5000, "nests too deep"),
        ("/projects", b'{"path": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nests too deep"),
        ("/search_content", b'{"exact_terms": ["\xc3\x28"]}', "not UTF-8"),
        ("/search_content", b"\xff", "malformed"),
        (
            "/discover",
            b'{"question": "x", "config": {"broad": ' + b"[" * 3000 + b"]" * 3000 + b"}}",
            "nests too deep",
        ),
        ("/search", b'{"query": ', "truncated"),
    ],
)
def test_undecodable_or_too_deep_json_is_a_400_naming_the_body(
    server: tuple[str, Path], route: str, body: bytes, why: str
) -> None:
    response = httpx.post(
        f"{server[0]}{API}{route}", content=body, headers={"content-type": "application/json"}
    )
    error = _error(response, 400)
    assert why in error["detail"]
    assert error["extra"][0]["key"] == "body"


def test_an_empty_scope_depth_range_matches_nothing_and_says_so(server: tuple[str, Path]) -> None:
    body = {"query": "cart", "granularity": "chunk", "scope_depth": [3, 1]}
    answer = httpx.post(f"{server[0]}{API}/search", json=body).json()
    assert answer["groups"] == []
    assert any("empty range" in w for w in answer["warnings"])


def test_strict_types_and_full_options_allow(server: tuple[str, Path], project: dict[str, Any]) -> None:
    """No coercion of body values ("full": 0 is not false); OPTIONS lists every method."""
    err = _error(httpx.post(f"{server[0]}{API}/projects/{project['id']}/index", json={"full": 0}), 400)
    assert err["extra"][0]["key"] == "full"
    for path, methods in (
        ("/projects", "GET, OPTIONS, POST"),
        (f"/projects/{project['id']}", "DELETE, GET, OPTIONS, PATCH"),
        ("/tasks/x", "DELETE, GET, OPTIONS"),
    ):
        answer = httpx.options(f"{server[0]}{API}{path}")
        assert answer.status_code == 204
        assert answer.headers["allow"] == methods


def test_injection_is_just_data(server: tuple[str, Path], project: dict[str, Any]) -> None:
    resp = httpx.post(
        f"{server[0]}{API}/search",
        json={"query": "cart", "granularity": "chunk", "node_name_pattern": "x' OR 1=1 --"},
    )
    assert resp.status_code == 200
    assert resp.json()["groups"] == []


def test_bad_requests(server: tuple[str, Path], project: dict[str, Any], tmp_path: Path) -> None:
    base, _ = server
    _error(
        httpx.post(f"{base}{API}/search", content=b"{not json", headers={"content-type": "application/json"}),
        400,
    )
    _error(httpx.post(f"{base}{API}/search", json={"query": "x", "bogus": 1}), 400)
    _error(httpx.post(f"{base}{API}/search", content=b"x" * 2_000_000), 413)
    missing = _error(httpx.post(f"{base}{API}/projects", json={"path": str(tmp_path / "nope")}), 400)
    assert missing["extra"][0]["key"] == "path"
    file = tmp_path / "f.txt"
    file.write_text("x")
    _error(httpx.post(f"{base}{API}/projects", json={"path": str(file)}), 400)
    _error(httpx.post(f"{base}{API}/projects", json={}), 400)
    _error(httpx.get(f"{base}{API}/projects/nope"), 404)
    _error(httpx.get(f"{base}{API}/tasks/nope"), 404)
    _error(httpx.post(f"{base}{API}/projects/{project['id']}/index", json={"paths": ["../etc"]}), 400)
    _error(httpx.get(f"{base}{API}/projects/{project['id']}/files", params={"limit": 0}), 400)
    _error(httpx.get(f"{base}/no/such/route"), 404)


def test_partial_reindex_and_coalescing(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, repo = server
    (repo / "src/shop/extra.py").write_text("def brand_new_function():\n    return 42\n")
    first = httpx.post(f"{base}{API}/projects/{project['id']}/index", json={"paths": ["src/shop/extra.py"]})
    assert first.status_code == 202
    task = wait_task(base, first.json()["id"])
    assert task["status"] == "done"
    assert task["paths"] == ["src/shop/extra.py"]
    found = httpx.post(f"{base}{API}/search", json={"query": "brand_new_function", "mode": "lexical"}).json()
    assert found["documents"][0]["file_path"] == "src/shop/extra.py"
    tasks = httpx.get(f"{base}{API}/tasks", params={"project": "shop"}).json()
    assert tasks[0]["id"] == task["id"]


def test_cancel_finished_task_conflicts(server: tuple[str, Path], project: dict[str, Any]) -> None:
    base, _ = server
    task = httpx.get(f"{base}{API}/tasks", params={"limit": 1}).json()[0]
    _error(httpx.delete(f"{base}{API}/tasks/{task['id']}"), 409)


def test_patch_and_delete_project(server: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = server
    other = make_repo(tmp_path / "other")
    created = httpx.post(f"{base}{API}/projects", json={"path": str(other), "name": "other"}).json()
    wait_task(base, created["task_id"])
    pid = created["project"]["id"]
    renamed = httpx.patch(f"{base}{API}/projects/{pid}", json={"name": "renamed", "exclude": ["docs/"]})
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "renamed"
    taken = _error(httpx.patch(f"{base}{API}/projects/{pid}", json={"name": "shop"}), 409)
    assert taken["extra"][0]["key"] == "name"
    assert httpx.delete(f"{base}{API}/projects/{pid}").status_code == 204
    _error(httpx.get(f"{base}{API}/projects/{pid}"), 404)
    assert (other / "src/shop/cart.py").exists()  # source files untouched
    resp = httpx.post(f"{base}{API}/search", json={"query": "cart", "projects": ["renamed"]})
    assert "renamed" in _error(resp, 404)["detail"]


def test_registering_a_folder_again_never_changes_it(server: tuple[str, Path], tmp_path: Path) -> None:
    """POST the same folder again: the same project and a re-index; a different name or
    globs is a 409 naming the field (PATCH changes them), never silently dropped."""
    base, _ = server
    folder = make_repo(tmp_path / "again")
    first = httpx.post(
        f"{base}{API}/projects", json={"path": str(folder), "exclude": ["docs/", "*.md"]}
    ).json()
    wait_task(base, first["task_id"])
    reordered = httpx.post(f"{base}{API}/projects", json={"path": str(folder), "exclude": ["*.md", "docs/"]})
    assert reordered.status_code == 201
    wait_task(base, reordered.json()["task_id"])
    same = httpx.post(f"{base}{API}/projects", json={"path": str(folder), "name": "again"})
    assert same.status_code == 201
    assert same.json()["project"]["id"] == first["project"]["id"]
    wait_task(base, same.json()["task_id"])
    renamed = _error(httpx.post(f"{base}{API}/projects", json={"path": str(folder), "name": "other"}), 409)
    assert renamed["extra"][0]["key"] == "name"
    globs = httpx.post(f"{base}{API}/projects", json={"path": str(folder), "exclude": ["src/"]})
    assert _error(globs, 409)["extra"][0]["key"] == "exclude"
    assert httpx.get(f"{base}{API}/projects/{first['project']['id']}").json()["exclude"] == ["docs/", "*.md"]


def test_a_delete_not_done_in_time_answers_202_with_its_task(
    server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.http import projects as project_routes

    base, _ = server
    other = make_repo(tmp_path / "slow")
    created = httpx.post(f"{base}{API}/projects", json={"path": str(other), "name": "slow"}).json()
    wait_task(base, created["task_id"])
    pid = created["project"]["id"]
    monkeypatch.setattr(project_routes, "DELETE_WAIT_SECONDS", 0.0)
    response = httpx.delete(f"{base}{API}/projects/{pid}")
    if response.status_code == 204:  # the worker was quicker than the answer: nothing to poll
        pytest.skip("the delete finished before the route looked")
    assert response.status_code == 202
    task = response.json()
    assert (task["kind"], task["project_id"]) == ("delete", pid)
    assert task["status"] in ("queued", "running")
    again = httpx.delete(f"{base}{API}/projects/{pid}")  # a retry while the first may run
    assert wait_task(base, task["id"])["status"] == "done"
    if again.status_code == 202:  # its task survives the first delete's removal of the rows
        assert wait_task(base, again.json()["id"])["status"] == "done"
    else:
        assert again.status_code in (204, 404), again.text
    _error(httpx.get(f"{base}{API}/projects/{pid}"), 404)


def test_a_nul_anywhere_is_a_client_error(server: tuple[str, Path], project: dict[str, Any]) -> None:
    """A NUL character in an id or a filter value can match nothing: 404 or 400, never 500."""
    base, _ = server
    for path in ("tasks", "documents", "chunks", "projects"):
        _error(httpx.get(f"{base}{API}/{path}/a%00b"), 404)
    _error(httpx.delete(f"{base}{API}/tasks/a%00b"), 404)
    _error(httpx.get(f"{base}{API}/projects/a%00b/files"), 404)
    nul = "\x00"
    for body in (
        {"query": f"cart{nul}", "granularity": "chunk"},
        {"query": f"cart{nul}"},
        {"query": "cart", "path_include": [f"src/{nul}"]},
        {"query": "cart", "path_exclude": [f"src/{nul}*"]},
        {"query": "cart", "projects": [f"sh{nul}op"]},
        {"query": "cart", "languages": [f"py{nul}"]},
        {"query": "cart", "node_types": [f"function{nul}"]},
        {"query": "cart", "node_name_pattern": f"Cart{nul}"},
        {"query": "cart", "has_definitions": [f"x{nul}"]},
    ):
        response = httpx.post(f"{base}{API}/search", json=body)
        assert response.status_code in (200, 400), (body, response.text)


def test_openapi_and_docs(server: tuple[str, Path]) -> None:
    base, _ = server
    spec = httpx.get(f"{base}/api/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    for path in ("/api/v1/search", "/api/v1/projects", "/api/v1/tasks/{task_id}", "/health"):
        assert path in spec["paths"]
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            ok = next(code for code in operation["responses"] if code.startswith("2"))
            content = operation["responses"][ok].get("content")
            if content:  # 204 has none; JSON, or the event stream's text
                media = content.get("application/json") or content["text/event-stream"]
                assert media["examples"], (method, path)
            errors = [r for code, r in operation["responses"].items() if code.startswith("4")]
            assert errors, (method, path)
            assert all(r["content"]["application/json"]["schema"] for r in errors), (method, path)
    search = spec["paths"]["/api/v1/search"]["post"]
    assert search["requestBody"]["content"]["application/json"]["schema"]["examples"]
    schema = spec["components"]["schemas"]["SearchRequest"]
    assert all("description" in prop or "$ref" in prop for prop in schema["properties"].values())
    docs = httpx.get(f"{base}/api/docs")
    assert docs.status_code == 200
    # the viewer is served by lode itself: every script and stylesheet is on this origin
    sources = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
    assert any("swagger-ui-bundle.js" in s for s in sources)
    for source in sources:
        assert source.startswith("/"), source
        assert httpx.get(base + source).status_code == 200, source


def test_api_key_is_required_when_configured(tmp_path: Path) -> None:
    config = load_config(env={}, overrides={"db": tmp_path / "db", "api_key": "s3cret", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        assert httpx.get(base + "/health").status_code == 200
        # the OpenAPI document and the docs page hold no data: no key needed
        assert httpx.get(base + "/api/openapi.json").status_code == 200
        assert httpx.get(base + "/api/docs").status_code == 200
        missing = httpx.get(f"{base}{API}/projects")
        _error(missing, 401)
        assert missing.headers["WWW-Authenticate"] == 'Bearer realm="lode"'  # RFC 6750: how to authenticate
        wrong = httpx.get(f"{base}{API}/projects", headers={"Authorization": "Bearer wrong"})
        _error(wrong, 401)
        assert wrong.headers["WWW-Authenticate"] == 'Bearer realm="lode", error="invalid_token"'
        ok = httpx.get(f"{base}{API}/projects", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert ok.json() == []
        # a key that is not ASCII is a wrong key too (compare_digest refuses non-ASCII text)
        raw = [(b"authorization", "Bearer sécret".encode())]
        _error(httpx.get(f"{base}{API}/projects", headers=raw), 401)


def test_cli_index_goes_through_the_running_server(
    server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lode index`` while a server runs: the server (the single writer) does the work;
    an explicitly chosen other index stays in-process."""
    import os

    from click.testing import CliRunner

    from indexer.cli import cli

    base, _ = server
    repo = make_repo(tmp_path / "other")
    env = {k: v for k, v in os.environ.items() if k != "LODE_DB"}
    env |= {"LODE_PORT": base.rsplit(":", 1)[1], "LODE_HOST": "127.0.0.1"}
    runner = CliRunner()
    out = runner.invoke(cli, ["index", str(repo), "--name", "via-cli", "--json"], env=env)
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["via"] == "server"
    assert result["task"]["status"] == "done"
    assert "via-cli" in {p["name"] for p in httpx.get(f"{base}{API}/projects").json()}

    # --db naming another index than the server's: in-process; the server's own: through it
    from indexer.cli._common import make_config, server_for

    monkeypatch.delenv("LODE_DB", raising=False)
    port = int(base.rsplit(":", 1)[1])
    other = make_config(db=tmp_path / "other-db", port=port)
    assert server_for(other, tmp_path / "other-db", local=False) is None
    served = Path(httpx.get(f"{base}{API}/status").json()["db"])
    assert server_for(make_config(db=served, port=port), served, local=False) is not None
    assert server_for(make_config(db=served, port=port), served, local=True) is None

    # an in-process write beside the server on its own index is refused, never a second writer
    for flag in ("--local", "--no-embed"):
        out = runner.invoke(cli, ["index", str(repo), flag, "--db", str(served)], env=env)
        assert out.exit_code == 2, out.output
        assert f"writes this index; {flag} would index it in-process" in out.output


def test_a_server_refusing_the_key_is_never_taken_for_another_index(tmp_path: Path) -> None:
    """``lode index --db D`` beside a keyed server: without the key lode cannot tell which
    index the server writes; it says so instead of indexing in-process beside it."""
    from indexer.cli._common import make_config, server_for
    from indexer.errors import UnauthorizedError

    config = load_config(env={}, overrides={"db": tmp_path / "db", "api_key": "s3cret", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        port = int(base.rsplit(":", 1)[1])
        other = make_config(db=tmp_path / "other", port=port, api_key=None)
        with pytest.raises(UnauthorizedError, match="refused the API key"):
            server_for(other, tmp_path / "other", local=False)
        # the same index: its writer lock names the server, so it is the writer; its calls
        # still need the key
        keyless = server_for(make_config(db=tmp_path / "db", port=port, api_key=None), tmp_path / "db", False)
        assert keyless is not None
        with pytest.raises(UnauthorizedError):
            keyless.get("/api/v1/status")
        keyed = make_config(db=tmp_path / "db", port=port, api_key="s3cret")
        assert server_for(keyed, tmp_path / "db", local=False) is not None


def test_serve_paths_with_the_same_folder_name_both_register(tmp_path: Path) -> None:
    """``lode serve ~/a/app ~/b/app`` (no way to name them): the second is named after its
    parent too, instead of failing the server's start."""
    from server.context import open_context, register_paths

    first, second = make_repo(tmp_path / "a" / "app"), make_repo(tmp_path / "b" / "app")
    config = load_config(env={}, overrides={"db": tmp_path / "db", "enabled": False})
    ctx = open_context(config, embedder=FakeEmbedder(), warm=False)
    try:
        projects = register_paths(ctx, [str(first), str(second), str(second)])
    finally:
        ctx.close()
    assert [p.name for p in projects] == ["app", "b-app", "b-app"]
    assert projects[1].id == projects[2].id


def test_browser_attacks_are_refused(server: tuple[str, Path]) -> None:
    """DNS rebinding (a foreign Host) and cross-site requests of any method (a foreign
    Origin, Sec-Fetch-Site: cross-site) get a 403 naming the header; this server's own
    origin and clients sending neither header pass."""
    base, _ = server
    port = base.rsplit(":", 1)[1]
    body = {"query": "cart", "granularity": "chunk"}
    rebound = httpx.get(f"{base}{API}/projects", headers={"Host": f"evil.example:{port}"})
    assert _error(rebound, 403)["extra"][0]["key"] == "Host"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert httpx.get(f"{base}{API}/projects", headers={"Host": host}).status_code == 200, host
    lookalike = httpx.get(f"{base}{API}/projects", headers={"Host": f"127.evil.example:{port}"})
    assert _error(lookalike, 403)["extra"][0]["key"] == "Host"
    foreign = httpx.post(f"{base}{API}/search", json=body, headers={"Origin": "https://evil.example"})
    assert _error(foreign, 403)["extra"][0]["key"] == "Origin"
    for origin in (f"http://127.evil.example:{port}", "http://localhost:abc", "http://[::1"):
        _error(httpx.post(f"{base}{API}/search", json=body, headers={"Origin": origin}), 403)
    text_plain = httpx.post(
        f"{base}{API}/projects",
        content=json.dumps({"path": "/"}),
        headers={"Origin": "null", "Content-Type": "text/plain"},
    )
    _error(text_plain, 403)
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        assert httpx.post(f"{base}{API}/search", json=body, headers={"Origin": origin}).status_code == 200
    assert httpx.post(f"{base}{API}/search", json=body).status_code == 200
    # a cross-site GET does work too (a regex grep, a search page): refused like a write, by
    # its Origin (fetch) or, with none, by Sec-Fetch-Site (an <img> or a link)
    read = httpx.get(f"{base}{API}/projects", headers={"Origin": "https://evil.example"})
    assert _error(read, 403)["extra"][0]["key"] == "Origin"
    project = httpx.get(f"{base}{API}/projects").json()[0]["id"]
    grep = f"{base}{API}/projects/{project}/outline/grep?pattern=cart"
    assert _error(httpx.get(grep, headers={"Sec-Fetch-Site": "cross-site"}), 403)["extra"][0]["key"] == (
        "Sec-Fetch-Site"
    )
    for site in ("same-origin", "same-site", "none"):
        answer = httpx.get(grep, headers={"Sec-Fetch-Site": site})
        assert answer.status_code == 200, answer.text
    own = httpx.get(f"{base}{API}/projects", headers={"Origin": f"http://localhost:{port}"})
    assert own.status_code == 200


def test_a_configured_cors_origin_may_write(tmp_path: Path) -> None:
    """``cors_origins``: that origin gets CORS headers and may write; others stay refused."""
    config = load_config(
        env={},
        overrides={"db": tmp_path / "db", "enabled": False, "cors_origins": ("http://editor.test:3000",)},
    )
    body = {"query": "cart"}
    with serve_in_thread(config, FakeEmbedder()) as base:
        allowed = httpx.post(f"{base}{API}/search", json=body, headers={"Origin": "http://editor.test:3000"})
        assert allowed.status_code == 200
        assert allowed.headers.get("access-control-allow-origin") == "http://editor.test:3000"
        other = httpx.post(f"{base}{API}/search", json=body, headers={"Origin": "http://editor.test:4000"})
        _error(other, 403)
    anyone = load_config(env={}, overrides={"db": tmp_path / "db2", "enabled": False, "cors_origins": ("*",)})
    with serve_in_thread(anyone, FakeEmbedder()) as base:
        assert (
            httpx.post(f"{base}{API}/search", json=body, headers={"Origin": "http://a.test"}).status_code
            == 200
        )


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost:7370", "localhost"),
        ("[::1]:7370", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("EVIL.example", "evil.example"),
    ],
)
def test_host_name_drops_the_port(header: str, host: str) -> None:
    from server.security import host_name

    assert host_name(header) == host


def test_a_listener_that_does_not_answer_is_not_taken_for_no_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Something accepts connections on lode's port but never answers (a busy server): the
    CLI says so instead of indexing in-process beside it; nothing listening is no server."""
    import socket

    from indexer import remote
    from indexer.cli._common import make_config, server_for
    from indexer.errors import ServerUnavailableError

    monkeypatch.setattr(remote, "_PATIENT_SECONDS", 0.5)  # (5 s: the wait is not the point)

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts; nobody reads
        port = silent.getsockname()[1]
        config = make_config(db=tmp_path / "db", port=port)
        with pytest.raises(ServerUnavailableError, match="did not answer /health"):
            server_for(config, tmp_path / "db", local=False)
    assert server_for(make_config(db=tmp_path / "db", port=port), tmp_path / "db", local=False) is None


def test_absolute_path_globs_are_made_relative_or_refused(
    server: tuple[str, Path], project: dict[str, Any]
) -> None:
    """Path globs are relative to the project root: an absolute one inside the project is
    made relative; one outside it is a 400 naming the field."""
    base, repo = server
    body = {"query": "cart", "mode": "lexical", "granularity": "chunk", "limit": 50}

    def paths(**globs: list[str]) -> list[str]:
        response = httpx.post(f"{base}{API}/search", json={**body, **globs})
        assert response.status_code == 200, response.text
        return [c["file_path"] for g in response.json()["groups"] for c in g["chunks"]]

    relative = paths(path_include=["src/**"])
    assert relative
    assert all(p.startswith("src/") for p in relative)
    assert paths(path_include=[f"{repo}/src/**"]) == relative
    assert paths(path_include=[f"{repo}/src/"]) == relative
    assert paths(path_exclude=[f"{repo}/src/**"]) == paths(path_exclude=["src/**"])
    assert paths(path_include=[str(repo)]) == paths()
    for field in ("path_include", "path_exclude"):
        refused = _error(httpx.post(f"{base}{API}/search", json={**body, field: ["/elsewhere/src/**"]}), 400)
        assert refused["extra"][0]["key"] == field
        assert "outside the project root" in refused["extra"][0]["message"]
        assert "'elsewhere/src/**'" in refused["extra"][0]["message"]  # what to write instead

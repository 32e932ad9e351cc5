"""A screenshot of lode.nvim's live picker for the docs: a lode server (in this process, the
real model) indexes a copy of tests/data/repo, Neovim runs in a tmux window of 110x30 with
the plugin, ``:Lode search`` is opened and a query typed key by key; tmux's capture of the
screen (with its colours) is written as SVG by rich, as plain text beside it, and as PNG
when Chromium is there (Playwright draws the SVG).

Example:
    .venv/bin/python editors/nvim/tools/screenshot.py docs/images/nvim-picker
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

QUERY = "apply a discount"
WIDTH, HEIGHT = 110, 30


def tmux(*args: str) -> str:
    """Run a tmux command on the screenshot's own server socket."""
    out = subprocess.run(["tmux", "-L", "lode-shot", *args], check=True, capture_output=True, text=True)
    return out.stdout


def to_png(svg: Path, png: Path) -> None:
    """The SVG drawn by Chromium (Playwright), when both are there."""
    chromium = shutil.which("chromium")
    if not chromium:
        print("no chromium: SVG only", file=sys.stderr)
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(svg.resolve().as_uri())
        page.locator("svg").screenshot(path=str(png))
        browser.close()


def main() -> int:
    """Take the screenshot; write ``<stem>.svg`` and ``<stem>.txt``."""
    from live import serve_in_thread, wait_task
    from rich.console import Console
    from rich.text import Text

    from indexer.config import load_config

    stem = Path(sys.argv[1] if len(sys.argv) > 1 else "nvim-picker")
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    with tempfile.TemporaryDirectory(prefix="lode-shot-") as tmp_name:
        tmp = Path(tmp_name)
        repo = shutil.copytree(ROOT / "tests" / "data" / "repo", tmp / "shop")
        config = load_config(env={}, overrides={"db": tmp / "db", "enabled": False})
        with serve_in_thread(config) as base:
            project = {"path": str(repo), "name": "shop"}
            created = httpx.post(f"{base}/api/v1/projects", json=project, timeout=60)
            wait_task(base, created.json()["task_id"], timeout=300)
            init = tmp / "init.lua"
            init.write_text(
                f"vim.opt.runtimepath:prepend('{ROOT / 'editors' / 'nvim'}')\n"
                "vim.opt.swapfile = false\nvim.g.loaded_python3_provider = 0\n"
                "vim.opt.termguicolors = true\n"
            )
            command = f"LODE_URL={base} {nvim} --clean -i NONE -u {init} {repo / 'src/shop/cart.py'}"
            tmux("new-session", "-d", "-s", "shot", "-x", str(WIDTH), "-y", str(HEIGHT), command)
            try:
                time.sleep(2)
                tmux("send-keys", "-t", "shot", ":Lode search", "Enter")
                time.sleep(1)
                for key in QUERY:
                    tmux("send-keys", "-t", "shot", "-l", key)
                    time.sleep(0.12)
                time.sleep(3)
                ansi = tmux("capture-pane", "-p", "-e", "-t", "shot")
            finally:
                tmux("kill-server")
    text = Text.from_ansi(ansi)
    console = Console(record=True, width=WIDTH, file=open("/dev/null", "w"), force_terminal=True)  # noqa: SIM115
    console.print(text)
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".svg").write_text(console.export_svg(title=f":Lode search {QUERY}"))
    stem.with_suffix(".txt").write_text(text.plain)
    to_png(stem.with_suffix(".svg"), stem.with_suffix(".png"))
    print(text.plain)
    return 0


if __name__ == "__main__":
    sys.exit(main())

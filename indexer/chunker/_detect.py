"""Language detection from a file's extension, well-known name or shebang line."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["KNOWN_LANGUAGES", "SEMANTIC_LANGUAGES", "detect_language"]

#: Languages cut into semantic units (markdown into heading sections), sorted.
SEMANTIC_LANGUAGES: Final[tuple[str, ...]] = (
    "bash",
    "c",
    "cpp",
    "csharp",
    "go",
    "java",
    "javascript",
    "kotlin",
    "markdown",
    "php",
    "python",
    "ruby",
    "rust",
    "scala",
    "swift",
    "tsx",
    "typescript",
)

_EXTENSIONS: Final[dict[str, str]] = {
    # semantic
    "py": "python", "pyi": "python", "pyw": "python",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript", "tsx": "tsx",
    "go": "go", "rs": "rust", "java": "java",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
    "h++": "cpp", "ipp": "cpp", "tpp": "cpp", "inl": "cpp",
    "cs": "csharp", "rb": "ruby", "rake": "ruby", "gemspec": "ruby", "php": "php",
    "kt": "kotlin", "kts": "kotlin", "scala": "scala", "sc": "scala", "swift": "swift",
    "sh": "bash", "bash": "bash", "zsh": "bash", "ksh": "bash",
    "md": "markdown", "markdown": "markdown", "mdx": "markdown",
    # text fallback, conventional names
    "json": "json", "jsonc": "json", "json5": "json", "yaml": "yaml", "yml": "yaml", "toml": "toml",
    "html": "html", "htm": "html", "xml": "xml", "svg": "xml", "css": "css", "scss": "scss",
    "less": "less", "sql": "sql", "rst": "rst", "txt": "text", "ini": "ini", "cfg": "ini",
    "proto": "proto", "graphql": "graphql", "gql": "graphql", "lua": "lua", "pl": "perl",
    "pm": "perl", "r": "r", "dart": "dart", "ex": "elixir", "exs": "elixir", "erl": "erlang",
    "hs": "haskell", "ml": "ocaml", "clj": "clojure", "zig": "zig", "nim": "nim", "jl": "julia",
    "vue": "vue", "svelte": "svelte", "tf": "terraform", "hcl": "hcl", "cmake": "cmake",
    "mk": "make", "dockerfile": "dockerfile", "ps1": "powershell", "fish": "fish",
    "groovy": "groovy", "gradle": "groovy", "m": "objc", "mm": "objc", "tex": "latex",
    "csv": "csv", "tsv": "tsv", "bat": "batch", "cmd": "batch", "vim": "vim", "nix": "nix",
}  # fmt: skip

_FILE_NAMES: Final[dict[str, str]] = {
    "makefile": "make", "gnumakefile": "make", "dockerfile": "dockerfile",
    "containerfile": "dockerfile", "cmakelists.txt": "cmake", "gemfile": "ruby",
    "rakefile": "ruby", "vagrantfile": "ruby", "podfile": "ruby", "brewfile": "ruby",
    "jenkinsfile": "groovy", "justfile": "make", ".bashrc": "bash", ".bash_profile": "bash",
    ".zshrc": "bash", ".profile": "bash", "pkgbuild": "bash", "build": "starlark",
    "build.bazel": "starlark", "workspace": "starlark", "go.mod": "gomod", "go.sum": "gosum",
    "cargo.lock": "toml", "pipfile": "toml", "license": "text", "readme": "text",
    ".gitignore": "gitignore", ".dockerignore": "gitignore", ".editorconfig": "ini",
}  # fmt: skip

_INTERPRETERS: Final[dict[str, str]] = {
    "python": "python", "pypy": "python", "node": "javascript", "nodejs": "javascript",
    "deno": "typescript", "bun": "javascript", "ts-node": "typescript", "tsx": "typescript",
    "ruby": "ruby", "php": "php", "sh": "bash", "bash": "bash", "zsh": "bash", "ksh": "bash",
    "dash": "bash", "ash": "bash", "kotlin": "kotlin", "scala": "scala", "swift": "swift",
    "perl": "perl", "lua": "lua", "make": "make",
}  # fmt: skip

#: Every language name ``detect_language`` can return.
KNOWN_LANGUAGES: Final[frozenset[str]] = frozenset(
    {*SEMANTIC_LANGUAGES, *_EXTENSIONS.values(), *_FILE_NAMES.values(), *_INTERPRETERS.values(), "text"}
)

_CPP_HINT = re.compile(
    rb"^[ \t]*(?:namespace[ \t]+\w+|template[ \t]*<|class[ \t]+\w+[^;\n]*\{|using[ \t]+namespace)|std::", re.M
)
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")
_VERSION_SUFFIX = re.compile(r"[\d.]+$")


def _from_shebang(head: bytes) -> str | None:
    match = _SHEBANG.match(head)
    if match is None:
        return None
    program = match.group(1).decode("ascii", "replace").rsplit("/", 1)[-1]
    if program == "env" and match.group(2):
        program = match.group(2).decode("ascii", "replace").rsplit("/", 1)[-1]
    return _INTERPRETERS.get(_VERSION_SUFFIX.sub("", program) or program)


def detect_language(path: str, head: bytes = b"") -> str:
    """The language of ``path`` (tree-sitter-language-pack names), ``"text"`` when unknown.

    Looks at well-known file names first (``Makefile``, ``Dockerfile``), then the
    extension, then the shebang line in ``head`` (the first bytes of the file). A ``.h``
    header whose ``head`` obviously holds C++ (``namespace``, ``template<``, ``std::``)
    is ``cpp``.
    """
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    known = _FILE_NAMES.get(name)
    if known is not None:
        return known
    if name.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    if name.startswith("makefile.") or name.endswith(".mk"):
        return "make"
    if "." in name.lstrip("."):
        language = _EXTENSIONS.get(name.rsplit(".", 1)[-1])
        if language == "c" and name.endswith(".h") and _CPP_HINT.search(head):
            return "cpp"
        if language is not None:
            return language
    return _from_shebang(head[:256]) or "text"

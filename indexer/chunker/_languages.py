"""One ``LanguageSpec`` per language with semantic chunking.

Node kinds were read from the grammars bundled in tree-sitter-language-pack 0.13.0
(parse a sample and print ``root_node``); ``tests/test_chunker_languages.py`` pins them.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from indexer.chunker import _assignments as assigned
from indexer.chunker import _classify as hook
from indexer.chunker._spec import STOP_WORDS as _STOP
from indexer.chunker._spec import LanguageSpec

__all__ = ["spec_for"]


_PYTHON = LanguageSpec(
    name="python",
    units={"function_definition": "function", "class_definition": "class"},
    special={"expression_statement": hook.py_assignment, "assignment": hook.py_assignment},
    wrappers={"decorated_definition": ("definition",)},
    containers=frozenset({"class_definition"}),
    body_kinds=frozenset({"block"}),
    constructors=frozenset({"__init__"}),
    def_patterns="""
    (function_definition name: (identifier) @def)
    (class_definition name: (identifier) @def)
    (parameters (identifier) @def)
    (lambda_parameters (identifier) @def)
    (typed_parameter (identifier) @def)
    (default_parameter name: (identifier) @def)
    (typed_default_parameter name: (identifier) @def)
    (list_splat_pattern (identifier) @def)
    (dictionary_splat_pattern (identifier) @def)
    (assignment left: (identifier) @def)
    (assignment left: (pattern_list (identifier) @def))
    (assignment left: (tuple_pattern (identifier) @def))
    (assignment left: (attribute object: (identifier) @_self attribute: (identifier) @def)
      (#eq? @_self "self"))
    (augmented_assignment left: (identifier) @def)
    (for_statement left: (identifier) @def)
    (for_statement left: (pattern_list (identifier) @def))
    (for_in_clause left: (identifier) @def)
    (named_expression name: (identifier) @def)
    (as_pattern alias: (as_pattern_target (identifier) @def))
    (import_statement name: (dotted_name . (identifier) @def))
    (import_from_statement name: (dotted_name (identifier) @def))
    (aliased_import alias: (identifier) @def)
    (global_statement (identifier) @def)
    """,
    stop_words=_STOP,
)

_JS_DEFS = """
    (function_declaration name: (identifier) @def)
    (generator_function_declaration name: (identifier) @def)
    (class_declaration name: (_) @def)
    (method_definition name: (property_identifier) @def)
    (variable_declarator name: (identifier) @def)
    (arrow_function parameter: (identifier) @def)
    (assignment_pattern left: (identifier) @def)
    (rest_pattern (identifier) @def)
    (shorthand_property_identifier_pattern) @def
    (pair_pattern value: (identifier) @def)
    (array_pattern (identifier) @def)
    (catch_clause parameter: (identifier) @def)
    (import_specifier name: (identifier) @def)
    (import_clause (identifier) @def)
    (namespace_import (identifier) @def)
    (assignment_expression left: (member_expression object: (this) property: (property_identifier) @def))
"""
_JS_ONLY_DEFS = """
    (formal_parameters (identifier) @def)
    (field_definition property: (property_identifier) @def)
"""
_TS_DEFS = (
    _JS_DEFS
    + """
    (required_parameter pattern: (identifier) @def)
    (optional_parameter pattern: (identifier) @def)
    (public_field_definition name: (property_identifier) @def)
    (interface_declaration name: (type_identifier) @def)
    (type_alias_declaration name: (type_identifier) @def)
    (enum_declaration name: (identifier) @def)
    (abstract_class_declaration name: (type_identifier) @def)
    (property_signature name: (property_identifier) @def)
    (method_signature name: (property_identifier) @def)
    (type_parameter name: (type_identifier) @def)
    (internal_module name: (identifier) @def)
"""
)
_JS_UNITS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "class": "class",
    "method_definition": "function",
}
_TS_UNITS = {
    **_JS_UNITS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "module",
    "function_signature": "function",
    "abstract_method_signature": "function",
    "method_signature": "function",
}
_JS_IDENTS = (
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "private_property_identifier",
)
_JAVASCRIPT = LanguageSpec(
    name="javascript",
    units=_JS_UNITS,
    special={
        "lexical_declaration": hook.js_declaration,
        "variable_declaration": hook.js_declaration,
        "expression_statement": assigned.js_assignment,
    },
    wrappers={"export_statement": ("declaration",)},
    containers=frozenset({"class_declaration", "class"}),
    comments=frozenset({"comment", "hash_bang_line"}),
    body_kinds=frozenset({"class_body", "statement_block", "interface_body", "enum_body", "object_type"}),
    constructors=frozenset({"constructor"}),
    ident_kinds=_JS_IDENTS,
    def_patterns=_JS_DEFS + _JS_ONLY_DEFS,
    stop_words=_STOP,
    name_hooks={"assignment_expression": assigned.assigned_name},
    qualifier_joiner=".",
    value_fields=("value", "right"),
    inline_body=assigned.iife_body,
    hosts=frozenset({"function_declaration", "variable_declarator", "assignment_expression"}),
    host_member=assigned.this_member,
)
_TYPESCRIPT = replace(
    _JAVASCRIPT,
    name="typescript",
    units=_TS_UNITS,
    containers=frozenset(
        {
            "class_declaration",
            "class",
            "abstract_class_declaration",
            "interface_declaration",
            "internal_module",
            "module",
        }
    ),
    wrappers={"export_statement": ("declaration",), "ambient_declaration": ("declaration",)},
    ident_kinds=(*_JS_IDENTS, "type_identifier"),
    def_patterns=_TS_DEFS,
)
_TSX = replace(_TYPESCRIPT, name="tsx")

_RUBY = LanguageSpec(
    name="ruby",
    units={
        "method": "function",
        "singleton_method": "method",
        "class": "class",
        "module": "module",
        "singleton_class": "class",
    },
    special={"assignment": hook.ruby_assignment},
    containers=frozenset({"class", "module", "singleton_class"}),
    body_kinds=frozenset({"body_statement"}),
    constructors=frozenset({"initialize"}),
    fixed_names={"singleton_class": "self"},
    ident_kinds=("identifier", "constant", "instance_variable"),
    def_patterns="""
    (method name: (_) @def)
    (singleton_method name: (_) @def)
    (class name: (constant) @def)
    (module name: (constant) @def)
    (method_parameters (identifier) @def)
    (optional_parameter name: (identifier) @def)
    (keyword_parameter name: (identifier) @def)
    (splat_parameter name: (identifier) @def)
    (block_parameters (identifier) @def)
    (lambda_parameters (identifier) @def)
    (assignment left: (identifier) @def)
    (assignment left: (instance_variable) @def)
    (assignment left: (constant) @def)
    """,
    stop_words=_STOP,
)

_PHP = LanguageSpec(
    name="php",
    units={
        "function_definition": "function",
        "method_declaration": "method",
        "class_declaration": "class",
        "interface_declaration": "interface",
        "trait_declaration": "trait",
        "enum_declaration": "enum",
    },
    special={"const_declaration": hook.php_const, "namespace_definition": hook.php_namespace},
    containers=frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
            "enum_declaration",
            "namespace_definition",
        }
    ),
    body_kinds=frozenset({"declaration_list", "compound_statement", "enum_declaration_list"}),
    constructors=frozenset({"__construct"}),
    ident_kinds=("name",),
    def_patterns="""
    (function_definition name: (name) @def)
    (method_declaration name: (name) @def)
    (class_declaration name: (name) @def)
    (interface_declaration name: (name) @def)
    (trait_declaration name: (name) @def)
    (simple_parameter name: (variable_name (name) @def))
    (property_promotion_parameter name: (variable_name (name) @def))
    (property_element (variable_name (name) @def))
    (assignment_expression left: (variable_name (name) @def))
    (const_element (name) @def)
    """,
    stop_words=_STOP | {"parent", "static"},
)

_BASH = LanguageSpec(
    name="bash",
    units={"function_definition": "function"},
    body_kinds=frozenset({"compound_statement"}),
    ident_kinds=("variable_name", "command_name"),
    def_patterns="""
    (function_definition name: (word) @def)
    (variable_assignment name: (variable_name) @def)
    (for_statement variable: (variable_name) @def)
    """,
)

_SCRIPTING: dict[str, LanguageSpec] = {
    spec.name: spec for spec in (_PYTHON, _JAVASCRIPT, _TYPESCRIPT, _TSX, _RUBY, _PHP, _BASH)
}


@functools.cache
def spec_for(language: str) -> LanguageSpec | None:
    """The spec of ``language``, or ``None`` when it has no semantic chunking."""
    from indexer.chunker._languages_compiled import COMPILED_SPECS

    return _SCRIPTING.get(language) or COMPILED_SPECS.get(language)

"""Language specs for compiled languages: Go, Rust, Java, C, C++, C#, Kotlin, Scala, Swift."""

from __future__ import annotations

from indexer.chunker import _classify as hook
from indexer.chunker._spec import STOP_WORDS as _STOP
from indexer.chunker._spec import LanguageSpec

__all__ = ["COMPILED_SPECS"]


_GO = LanguageSpec(
    name="go",
    units={"function_declaration": "function", "method_declaration": "method", "method_elem": "method"},
    special={
        "type_declaration": hook.go_type,
        "const_declaration": hook.first_spec("constant"),
        "var_declaration": hook.first_spec("variable"),
    },
    containers=frozenset({"type_spec"}),
    body_kinds=frozenset({"block", "field_declaration_list", "interface_type", "struct_type"}),
    ident_kinds=("identifier", "type_identifier", "field_identifier", "package_identifier"),
    def_patterns="""
    (function_declaration name: (identifier) @def)
    (method_declaration name: (field_identifier) @def)
    (parameter_declaration name: (identifier) @def)
    (variadic_parameter_declaration name: (identifier) @def)
    (short_var_declaration left: (expression_list (identifier) @def))
    (var_spec name: (identifier) @def)
    (const_spec name: (identifier) @def)
    (type_spec name: (type_identifier) @def)
    (type_alias name: (type_identifier) @def)
    (field_declaration name: (field_identifier) @def)
    (method_elem name: (field_identifier) @def)
    (range_clause left: (expression_list (identifier) @def))
    (type_parameter_declaration name: (identifier) @def)
    """,
    stop_words=_STOP | {"nil", "iota"},
)

_RUST = LanguageSpec(
    name="rust",
    units={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "union_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
        "type_item": "type",
        "const_item": "constant",
        "static_item": "constant",
        "macro_definition": "macro",
    },
    special={"macro_invocation": hook.rust_macro, "expression_statement": hook.rust_macro},
    containers=frozenset({"impl_item", "trait_item", "mod_item"}),
    comments=frozenset({"line_comment", "block_comment"}),
    attributes=frozenset({"attribute_item"}),
    body_kinds=frozenset({"declaration_list", "block", "field_declaration_list", "enum_variant_list"}),
    name_fields=("name", "type"),
    name_hooks={"macro_invocation": hook.rust_macro_name},
    ident_kinds=("identifier", "type_identifier", "field_identifier"),
    def_patterns="""
    (function_item name: (identifier) @def)
    (function_signature_item name: (identifier) @def)
    (parameter pattern: (identifier) @def)
    (closure_parameters (identifier) @def)
    (let_declaration pattern: (identifier) @def)
    (tuple_pattern (identifier) @def)
    (struct_item name: (type_identifier) @def)
    (enum_item name: (type_identifier) @def)
    (trait_item name: (type_identifier) @def)
    (type_item name: (type_identifier) @def)
    (const_item name: (identifier) @def)
    (static_item name: (identifier) @def)
    (mod_item name: (identifier) @def)
    (field_declaration name: (field_identifier) @def)
    (enum_variant name: (identifier) @def)
    (for_expression pattern: (identifier) @def)
    (macro_definition name: (identifier) @def)
    (type_parameter name: (type_identifier) @def)
    """,
    stop_words=_STOP | {"ref"},
)

_JAVA = LanguageSpec(
    name="java",
    units={
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "annotation_type_declaration": "interface",
        "method_declaration": "method",
        "constructor_declaration": "constructor",
        "compact_constructor_declaration": "constructor",
    },
    containers=frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        }
    ),
    transparent=frozenset({"enum_body_declarations"}),
    comments=frozenset({"line_comment", "block_comment"}),
    body_kinds=frozenset({"class_body", "interface_body", "enum_body", "annotation_type_body", "block"}),
    ident_kinds=("identifier", "type_identifier"),
    def_patterns="""
    (class_declaration name: (identifier) @def)
    (interface_declaration name: (identifier) @def)
    (enum_declaration name: (identifier) @def)
    (record_declaration name: (identifier) @def)
    (method_declaration name: (identifier) @def)
    (constructor_declaration name: (identifier) @def)
    (formal_parameter name: (identifier) @def)
    (variable_declarator name: (identifier) @def)
    (lambda_expression parameters: (identifier) @def)
    (inferred_parameters (identifier) @def)
    (enhanced_for_statement name: (identifier) @def)
    (catch_formal_parameter name: (identifier) @def)
    (enum_constant name: (identifier) @def)
    (type_parameter (type_identifier) @def)
    """,
    stop_words=_STOP,
)

_C_DEFS = """
    (function_declarator declarator: (identifier) @def)
    (parameter_declaration declarator: (identifier) @def)
    (pointer_declarator declarator: (identifier) @def)
    (array_declarator declarator: (identifier) @def)
    (init_declarator declarator: (identifier) @def)
    (declaration declarator: (identifier) @def)
    (field_declaration declarator: (field_identifier) @def)
    (pointer_declarator declarator: (field_identifier) @def)
    (struct_specifier name: (type_identifier) @def)
    (enum_specifier name: (type_identifier) @def)
    (union_specifier name: (type_identifier) @def)
    (enumerator name: (identifier) @def)
    (type_definition declarator: (type_identifier) @def)
    (preproc_def name: (identifier) @def)
    (preproc_function_def name: (identifier) @def)
    (preproc_params (identifier) @def)
"""
_C_TRANSPARENT = frozenset(
    {
        "preproc_ifdef",
        "preproc_if",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
    }
)
_C = LanguageSpec(
    name="c",
    units={"function_definition": "function", "preproc_def": "constant", "preproc_function_def": "macro"},
    special={
        "struct_specifier": hook.c_specifier,
        "union_specifier": hook.c_specifier,
        "enum_specifier": hook.c_specifier,
        "type_definition": hook.c_typedef,
        "declaration": hook.c_declaration,
    },
    transparent=_C_TRANSPARENT,
    body_kinds=frozenset({"compound_statement", "field_declaration_list", "enumerator_list"}),
    ident_kinds=("identifier", "type_identifier", "field_identifier"),
    def_patterns=_C_DEFS,
    stop_words=_STOP | {"NULL"},
)
_CPP = LanguageSpec(
    name="cpp",
    units={
        "function_definition": "function",
        "preproc_def": "constant",
        "preproc_function_def": "macro",
        "namespace_definition": "namespace",
        "alias_declaration": "type",
        "concept_definition": "type",
    },
    special={
        **_C.special,
        "class_specifier": hook.c_specifier,
        "field_declaration": hook.c_declaration,
    },
    wrappers={
        "template_declaration": (
            "class_specifier",
            "struct_specifier",
            "union_specifier",
            "function_definition",
            "declaration",
            "alias_declaration",
            "concept_definition",
            "template_declaration",
        )
    },
    containers=frozenset({"class_specifier", "struct_specifier", "union_specifier", "namespace_definition"}),
    transparent=_C_TRANSPARENT | {"declaration_list"},
    body_kinds=frozenset(
        {"compound_statement", "field_declaration_list", "enumerator_list", "declaration_list"}
    ),
    ident_kinds=("identifier", "type_identifier", "field_identifier", "namespace_identifier"),
    def_patterns=_C_DEFS
    + """
    (function_declarator declarator: (field_identifier) @def)
    (class_specifier name: (type_identifier) @def)
    (namespace_definition name: (namespace_identifier) @def)
    (alias_declaration name: (type_identifier) @def)
    (reference_declarator (identifier) @def)
    (optional_parameter_declaration declarator: (identifier) @def)
    (type_parameter_declaration (type_identifier) @def)
    (for_range_loop declarator: (identifier) @def)
    """,
    stop_words=_STOP | {"NULL", "nullptr", "std"},
)

_CSHARP = LanguageSpec(
    name="csharp",
    units={
        "class_declaration": "class",
        "struct_declaration": "struct",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "delegate_declaration": "type",
        "namespace_declaration": "namespace",
        "file_scoped_namespace_declaration": "namespace",
        "method_declaration": "method",
        "constructor_declaration": "constructor",
        "destructor_declaration": "method",
        "operator_declaration": "method",
        "local_function_statement": "function",
    },
    containers=frozenset(
        {
            "class_declaration",
            "struct_declaration",
            "interface_declaration",
            "record_declaration",
            "namespace_declaration",
            "file_scoped_namespace_declaration",
        }
    ),
    body_kinds=frozenset({"declaration_list", "block", "enum_member_declaration_list"}),
    ident_kinds=("identifier",),
    def_patterns="""
    (class_declaration name: (identifier) @def)
    (struct_declaration name: (identifier) @def)
    (interface_declaration name: (identifier) @def)
    (enum_declaration name: (identifier) @def)
    (record_declaration name: (identifier) @def)
    (method_declaration name: (identifier) @def)
    (constructor_declaration name: (identifier) @def)
    (property_declaration name: (identifier) @def)
    (parameter name: (identifier) @def)
    (variable_declarator name: (identifier) @def)
    (enum_member_declaration name: (identifier) @def)
    (local_function_statement name: (identifier) @def)
    (foreach_statement left: (identifier) @def)
    (type_parameter name: (identifier) @def)
    (lambda_expression parameters: (implicit_parameter) @def)
    """,
    stop_words=_STOP | {"var", "value"},
)

_KOTLIN = LanguageSpec(
    name="kotlin",
    units={
        "function_declaration": "function",
        "object_declaration": "class",
        "companion_object": "class",
        "secondary_constructor": "constructor",
        "anonymous_initializer": "constructor",
        "type_alias": "type",
    },
    special={"class_declaration": hook.kotlin_class, "property_declaration": hook.kotlin_property},
    containers=frozenset({"class_declaration", "object_declaration", "companion_object"}),
    comments=frozenset({"line_comment", "multiline_comment"}),
    body_kinds=frozenset({"class_body", "enum_class_body", "function_body"}),
    fixed_names={
        "secondary_constructor": "constructor",
        "anonymous_initializer": "init",
        "companion_object": "Companion",
    },
    name_kinds=("simple_identifier", "type_identifier"),
    ident_kinds=("simple_identifier", "type_identifier"),
    def_patterns="""
    (class_declaration (type_identifier) @def)
    (object_declaration (type_identifier) @def)
    (function_declaration (simple_identifier) @def)
    (parameter (simple_identifier) @def)
    (class_parameter (simple_identifier) @def)
    (variable_declaration (simple_identifier) @def)
    (type_alias (type_identifier) @def)
    (enum_entry (simple_identifier) @def)
    (type_parameter (type_identifier) @def)
    """,
    stop_words=_STOP | {"it"},
)

_SCALA = LanguageSpec(
    name="scala",
    units={
        "class_definition": "class",
        "object_definition": "class",
        "trait_definition": "trait",
        "enum_definition": "enum",
        "function_definition": "function",
        "function_declaration": "function",
        "type_definition": "type",
        "package_object": "module",
    },
    containers=frozenset({"class_definition", "object_definition", "trait_definition", "enum_definition"}),
    comments=frozenset({"comment", "block_comment"}),
    body_kinds=frozenset({"template_body", "block", "enum_body"}),
    constructors=frozenset({"this"}),
    ident_kinds=("identifier", "type_identifier"),
    def_patterns="""
    (class_definition name: (identifier) @def)
    (object_definition name: (identifier) @def)
    (trait_definition name: (identifier) @def)
    (function_definition name: (identifier) @def)
    (function_declaration name: (identifier) @def)
    (parameter name: (identifier) @def)
    (class_parameter name: (identifier) @def)
    (val_definition pattern: (identifier) @def)
    (var_definition pattern: (identifier) @def)
    (type_definition name: (type_identifier) @def)
    (binding name: (identifier) @def)
    """,
    stop_words=_STOP,
)

_SWIFT = LanguageSpec(
    name="swift",
    units={
        "protocol_declaration": "interface",
        "function_declaration": "function",
        "init_declaration": "constructor",
        "deinit_declaration": "method",
        "protocol_function_declaration": "function",
        "typealias_declaration": "type",
    },
    special={"class_declaration": hook.swift_class},
    containers=frozenset({"class_declaration", "protocol_declaration"}),
    comments=frozenset({"comment", "multiline_comment"}),
    body_kinds=frozenset({"class_body", "enum_class_body", "protocol_body", "function_body"}),
    fixed_names={"init_declaration": "init", "deinit_declaration": "deinit"},
    name_kinds=("simple_identifier", "type_identifier"),
    ident_kinds=("simple_identifier", "type_identifier"),
    def_patterns="""
    (function_declaration name: (simple_identifier) @def)
    (class_declaration name: (type_identifier) @def)
    (protocol_declaration name: (type_identifier) @def)
    (parameter name: (simple_identifier) @def)
    (property_declaration name: (pattern bound_identifier: (simple_identifier) @def))
    (typealias_declaration name: (type_identifier) @def)
    (enum_entry name: (simple_identifier) @def)
    (lambda_parameter name: (simple_identifier) @def)
    """,
    stop_words=_STOP,
)

COMPILED_SPECS: dict[str, LanguageSpec] = {
    spec.name: spec for spec in (_GO, _RUST, _JAVA, _C, _CPP, _CSHARP, _KOTLIN, _SCALA, _SWIFT)
}

// Turning a tree-sitter syntax tree into an outline. One generic walk over the tree; each
// language has a handler that recognises its declaration nodes (class, function, …) and says
// what the symbol is, where its signature ends and where its nested symbols are to be found.
import type { Node } from "web-tree-sitter";
import type { OutlineSymbol, SymbolKind } from "./types.js";

export const SIGNATURE_MAX = 120;

/** What a language handler found at a node. */
interface Found {
  kind: SymbolKind;
  name: string;
  /** The node whose lines the symbol spans (e.g. including decorators or `export`). */
  range: Node;
  signature: string;
  decorators?: string[];
  /** Where to look for nested symbols; null for none. */
  inner: Node | null;
  /** An earlier start line than `range` (e.g. Rust attributes above an item). */
  startNode?: Node;
}

interface WalkContext {
  /** Kind of the nearest enclosing symbol, if any. */
  parentKind: SymbolKind | undefined;
}

/** A handler returns the symbols declared by a node, or undefined to descend into it. */
type Handler = (node: Node, cx: WalkContext) => Found[] | undefined;

const CONTAINERS = new Set<SymbolKind>(["class", "interface", "struct", "enum", "trait", "impl"]);

function inContainer(cx: WalkContext): boolean {
  return cx.parentKind !== undefined && CONTAINERS.has(cx.parentKind);
}

// ---------------------------------------------------------------------------------------------
// Signatures

/** Collapses whitespace, tidies brackets and clips to SIGNATURE_MAX characters. */
export function tidySignature(text: string): string {
  let s = text.replace(/\s+/g, " ").trim();
  s = s
    .replace(/([([]) /g, "$1")
    .replace(/,? ([)\]])/g, "$1")
    .replace(/(\w)< /g, "$1<")
    .replace(/, >/g, ">");
  if (s.length > SIGNATURE_MAX) s = `${s.slice(0, SIGNATURE_MAX - 1).trimEnd()}…`;
  return s;
}

const SKIPPED_PREFIX = new Set(["decorator", "comment", "line_comment", "block_comment", "attribute_item"]);

/** Where a declaration's head starts: after leading decorators, comments and annotations. */
function headStart(node: Node): number {
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (!c || SKIPPED_PREFIX.has(c.type)) continue;
    if (c.type === "modifiers") {
      // Java: annotations live inside the modifiers; start at the first real modifier.
      for (let j = 0; j < c.childCount; j++) {
        const m = c.child(j);
        if (m && m.type !== "marker_annotation" && m.type !== "annotation" && !SKIPPED_PREFIX.has(m.type)) {
          return m.startIndex;
        }
      }
      continue;
    }
    return c.startIndex;
  }
  return node.startIndex;
}

/** End of the last token before `body`, skipping comments between the head and the body. */
function headEnd(body: Node): number {
  let prev = body.previousSibling;
  while (prev && (prev.isExtra || SKIPPED_PREFIX.has(prev.type))) prev = prev.previousSibling;
  return prev ? prev.endIndex : body.startIndex;
}

/**
 * The text of a declaration up to its body (or the whole declaration when it has none),
 * without a trailing `:`, `;` or `{`.
 */
function signatureOf(source: string, node: Node, body: Node | null, start = headStart(node)): string {
  const end = body ? headEnd(body) : node.endIndex;
  let text = source.slice(start, Math.max(start, end)).trimEnd();
  text = text.replace(/[;{:]$/, "").trimEnd();
  return tidySignature(text);
}

function field(node: Node, name: string): Node | null {
  return node.childForFieldName(name);
}

function nameOf(node: Node, fieldName = "name"): string | undefined {
  return field(node, fieldName)?.text;
}

function found(
  kind: SymbolKind,
  name: string,
  node: Node,
  source: string,
  body: Node | null,
  extra?: Partial<Found>,
): Found[] {
  return [{ kind, name, range: node, signature: signatureOf(source, node, body), inner: body, ...extra }];
}

// ---------------------------------------------------------------------------------------------
// Python

function pythonHandler(source: string): Handler {
  const handle: Handler = (node, cx) => {
    switch (node.type) {
      case "class_definition": {
        const body = field(node, "body");
        return found("class", nameOf(node) ?? "?", node, source, body);
      }
      case "function_definition": {
        const body = field(node, "body");
        return found(
          cx.parentKind === "class" ? "method" : "function",
          nameOf(node) ?? "?",
          node,
          source,
          body,
        );
      }
      case "decorated_definition": {
        const def = field(node, "definition");
        if (!def) return undefined;
        const inner = handle(def, cx);
        if (!inner) return undefined;
        const decorators = node.namedChildren
          .filter((c): c is Node => c?.type === "decorator")
          .map((c) => tidySignature(c.text));
        return inner.map((f) => ({ ...f, range: node, decorators }));
      }
      case "type_alias_statement": {
        const left = node.namedChildren[0];
        return found("type", left?.text ?? "?", node, source, null);
      }
      case "expression_statement": {
        // Module-level constants: UPPER_CASE = …
        if (node.parent?.type !== "module") return [];
        const assign = node.namedChildren[0];
        if (assign?.type !== "assignment") return [];
        const left = field(assign, "left");
        if (left?.type !== "identifier" || !/^[A-Z][A-Z0-9_]*$/.test(left.text)) return [];
        return found("const", left.text, node, source, null);
      }
      default:
        return undefined;
    }
  };
  return handle;
}

// ---------------------------------------------------------------------------------------------
// JavaScript / TypeScript / TSX

const FUNCTION_VALUES = new Set(["arrow_function", "function_expression", "function", "generator_function"]);
const CLASS_VALUES = new Set(["class"]);

function exportPrefix(node: Node): string {
  const parent = node.parent;
  if (parent?.type !== "export_statement") return "";
  return parent.children.some((c) => c?.type === "default") ? "export default " : "export ";
}

/** The node whose lines a declaration spans: the `export …` statement when exported. */
function exportRange(node: Node): Node {
  return node.parent?.type === "export_statement" ? node.parent : node;
}

/** Module level: the program, a namespace's body, or `export` at one of those. */
function isModuleLevel(node: Node): boolean {
  let parent = node.parent;
  if (parent?.type === "export_statement") parent = parent.parent;
  if (!parent) return false;
  if (parent.type === "program") return true;
  return (
    parent.type === "statement_block" &&
    (parent.parent?.type === "internal_module" || parent.parent?.type === "module")
  );
}

/** `a = b = function …`: the value at the end of a chain of assignments. */
function assignedValue(node: Node): Node | null {
  let value = field(node, "right");
  while (value?.type === "assignment_expression") value = field(value, "right");
  return value;
}

/** `X.prototype.m`, `exports.f`, `obj.m`, `m`: the assigned-to name as written (no computed keys). */
function assignedName(left: Node | null): string | undefined {
  if (!left) return undefined;
  if (left.type === "identifier") return left.text;
  if (left.type !== "member_expression" && left.type !== "subscript_expression") return undefined;
  // `proto[method] = function` is written per method at run time: keep it as written.
  return /^[\w$.]+(\[[\w$.'"]+\])?$/.test(left.text) ? left.text : undefined;
}

/** An object literal's key as a name: `a`, `"a-b"`, `1`; undefined for a computed key. */
function keyName(key: Node | null): string | undefined {
  if (!key) return undefined;
  if (key.type === "string") return key.text.slice(1, -1);
  if (key.type === "computed_property_name") return undefined;
  return key.text;
}

function scriptHandler(source: string): Handler {
  const declared = (kind: SymbolKind, node: Node, body: Node | null, name?: string): Found[] => [
    {
      kind,
      name: name ?? nameOf(node) ?? (exportPrefix(node) === "export default " ? "default" : "?"),
      range: exportRange(node),
      signature: tidySignature(exportPrefix(node) + signatureOf(source, node, body)),
      inner: body,
    },
  ];

  return (node, cx) => {
    switch (node.type) {
      case "function_declaration":
      case "generator_function_declaration":
      case "function_signature":
        return declared("function", node, field(node, "body"));
      case "class_declaration":
      case "abstract_class_declaration":
        return declared("class", node, field(node, "body"));
      case "interface_declaration":
        return declared("interface", node, field(node, "body"));
      case "enum_declaration":
        return declared("enum", node, field(node, "body"), undefined).map((f) => ({ ...f, inner: null }));
      case "type_alias_declaration":
        return declared("type", node, null);
      case "internal_module":
      case "module":
        return declared("namespace", node, field(node, "body"));
      case "method_definition":
      case "method_signature":
      case "abstract_method_signature":
        return found("method", nameOf(node) ?? "?", node, source, field(node, "body"));
      case "public_field_definition":
      case "field_definition": {
        const value = field(node, "value");
        if (!value || !FUNCTION_VALUES.has(value.type)) return [];
        const name = nameOf(node) ?? nameOf(node, "property") ?? "?";
        const body = field(value, "body");
        return found(inContainer(cx) ? "method" : "function", name, node, source, body);
      }
      case "expression_statement": {
        // `obj.m = function`, `X.prototype.m = function`, `exports.f = …`, `module.exports.f = () => …`
        const expr = node.namedChild(0);
        if (expr?.type !== "assignment_expression") return undefined;
        const value = assignedValue(expr);
        const name = assignedName(field(expr, "left"));
        if (!value || !name) return undefined;
        const isFunction = FUNCTION_VALUES.has(value.type);
        if (!isFunction && !CLASS_VALUES.has(value.type)) return undefined;
        const body = field(value, "body");
        const kind: SymbolKind = !isFunction ? "class" : /\.prototype[.[]/.test(name) ? "method" : "function";
        // A module's single export is known by its own name when it has one.
        const exportsItself = name === "module.exports" || name === "exports";
        return [
          {
            kind,
            name: (exportsItself ? nameOf(value) : undefined) ?? name,
            range: node,
            signature: tidySignature(source.slice(node.startIndex, body ? headEnd(body) : node.endIndex)),
            inner: body,
          },
        ];
      }
      case "function_expression":
      case "function":
      case "generator_function": {
        // A named function passed or returned as a value (`on('end', function onend() {…})`);
        // anonymous ones are looked into but not listed.
        const name = nameOf(node);
        return name ? found("function", name, node, source, field(node, "body")) : undefined;
      }
      case "class": {
        // A named class expression (`return class BoundPool extends Pool {…}`), or `export default class {…}`.
        if (exportPrefix(node) === "export default ") return declared("class", node, field(node, "body"));
        const name = nameOf(node);
        return name ? found("class", name, node, source, field(node, "body")) : undefined;
      }
      case "pair": {
        // An object literal's method written as `key: function …` or `key: (…) => …`.
        const value = field(node, "value");
        if (!value || !FUNCTION_VALUES.has(value.type)) return undefined;
        const name = nameOf(value) ?? keyName(field(node, "key"));
        if (!name) return undefined;
        const body = field(value, "body");
        return [
          {
            kind: "method",
            name,
            range: node,
            signature: tidySignature(source.slice(node.startIndex, body ? headEnd(body) : node.endIndex)),
            inner: body,
          },
        ];
      }
      case "lexical_declaration":
      case "variable_declaration": {
        if (!isModuleLevel(node)) return localFunctions(node);
        const keyword = node.child(0)?.text ?? "const";
        const exported = exportPrefix(node);
        const declarators = node.namedChildren.filter((c): c is Node => c?.type === "variable_declarator");
        const single = declarators.length === 1;
        const out: Found[] = [];
        for (const d of declarators) {
          const name = nameOf(d) ?? "?";
          // `var proto = module.exports = function …`: the value at the end of the chain.
          let value = field(d, "value");
          while (value?.type === "assignment_expression") value = field(value, "right");
          const range = single ? exportRange(node) : d;
          if (value && FUNCTION_VALUES.has(value.type)) {
            const body = field(value, "body");
            const head = source.slice(d.startIndex, body ? headEnd(body) : d.endIndex);
            out.push({
              kind: "function",
              name,
              range,
              signature: tidySignature(`${exported}${keyword} ${head}`),
              inner: body,
            });
          } else if (value && CLASS_VALUES.has(value.type)) {
            const body = field(value, "body");
            const head = source.slice(d.startIndex, body ? headEnd(body) : d.endIndex);
            out.push({
              kind: "class",
              name,
              range,
              signature: tidySignature(`${exported}${keyword} ${head}`),
              inner: body,
            });
          } else if (exported && keyword === "const") {
            const firstLine = d.text.split("\n")[0] ?? "";
            out.push({
              kind: "const",
              name,
              range,
              signature: tidySignature(`${exported}const ${firstLine}`),
              inner: null,
            });
          }
        }
        // Nothing listed (`var x = wrap(function named() {…})`): look inside instead.
        return out.length > 0 ? out : undefined;
      }
      default:
        return undefined;
    }
  };

  /** Inside a function: `var f = function …` / `const f = () => …` are functions; other locals are not listed. */
  function localFunctions(node: Node): Found[] | undefined {
    const keyword = node.child(0)?.text ?? "var";
    const out: Found[] = [];
    for (const d of node.namedChildren) {
      if (d?.type !== "variable_declarator") continue;
      const value = field(d, "value");
      if (!value || !FUNCTION_VALUES.has(value.type)) continue;
      const body = field(value, "body");
      out.push({
        kind: "function",
        name: nameOf(d) ?? "?",
        range: d,
        signature: tidySignature(
          `${keyword} ${source.slice(d.startIndex, body ? headEnd(body) : d.endIndex)}`,
        ),
        inner: body,
      });
    }
    // Plain locals may hold functions further in (`var o = { m() {} }`): look inside those.
    return out.length > 0 ? out : undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Go

function goHandler(source: string): Handler {
  return (node, cx) => {
    switch (node.type) {
      case "function_declaration":
        return found("function", nameOf(node) ?? "?", node, source, field(node, "body"));
      case "method_declaration":
        return found("method", nameOf(node) ?? "?", node, source, field(node, "body"));
      case "method_elem":
      case "method_spec":
        return inContainer(cx) ? found("method", nameOf(node) ?? "?", node, source, null) : [];
      case "type_spec":
      case "type_alias": {
        const name = nameOf(node) ?? "?";
        const type = field(node, "type");
        const decl = node.parent;
        const single = decl?.type === "type_declaration" && decl.namedChildren.length === 1;
        const range = single && decl ? decl : node;
        if (node.type === "type_spec" && (type?.type === "struct_type" || type?.type === "interface_type")) {
          const isStruct = type.type === "struct_type";
          const head = source.slice(node.startIndex, type.startIndex);
          return [
            {
              kind: isStruct ? "struct" : "interface",
              name,
              range,
              signature: tidySignature(`type ${head}${isStruct ? "struct" : "interface"}`),
              inner: isStruct ? null : type,
            },
          ];
        }
        return [{ kind: "type", name, range, signature: tidySignature(`type ${node.text}`), inner: null }];
      }
      case "const_declaration": {
        if (node.parent?.type !== "source_file") return [];
        const out: Found[] = [];
        for (const spec of node.namedChildren) {
          if (spec?.type !== "const_spec") continue;
          const names = spec.childrenForFieldName("name").filter((n): n is Node => n !== null);
          for (const n of names) {
            if (!/^\p{Lu}/u.test(n.text)) continue;
            out.push({
              kind: "const",
              name: n.text,
              range: spec,
              signature: tidySignature(`const ${spec.text}`),
              inner: null,
            });
          }
        }
        return out;
      }
      case "var_declaration":
        return [];
      default:
        return undefined;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Rust

/** The first of the `#[…]` attributes right above a Rust item, if any. */
function leadingAttributes(node: Node): Node | undefined {
  let first: Node | undefined;
  let prev = node.previousNamedSibling;
  while (prev && (prev.type === "attribute_item" || prev.type === "line_comment")) {
    if (prev.type === "attribute_item") first = prev;
    prev = prev.previousNamedSibling;
  }
  return first;
}

function rustHandler(source: string): Handler {
  const handle = rustItem(source);
  return (node, cx) => {
    const result = handle(node, cx);
    if (!result || result.length === 0) return result;
    const attrs = leadingAttributes(node);
    return attrs ? result.map((f) => ({ ...f, startNode: attrs })) : result;
  };
}

function rustItem(source: string): Handler {
  return (node, cx) => {
    const body = () => field(node, "body");
    switch (node.type) {
      case "function_item":
        return found(inContainer(cx) ? "method" : "function", nameOf(node) ?? "?", node, source, body());
      case "function_signature_item":
        return found(inContainer(cx) ? "method" : "function", nameOf(node) ?? "?", node, source, null);
      case "struct_item":
      case "union_item":
        return found("struct", nameOf(node) ?? "?", node, source, body(), { inner: null });
      case "enum_item":
        return found("enum", nameOf(node) ?? "?", node, source, body(), { inner: null });
      case "trait_item":
        return found("trait", nameOf(node) ?? "?", node, source, body());
      case "impl_item": {
        const type = field(node, "type")?.text ?? "?";
        const trait = field(node, "trait")?.text;
        return found("impl", trait ? `${trait} for ${type}` : type, node, source, body());
      }
      case "mod_item":
        return found("module", nameOf(node) ?? "?", node, source, body());
      case "type_item":
        return found("type", nameOf(node) ?? "?", node, source, null);
      case "const_item":
      case "static_item": {
        const parent = node.parent?.type;
        if (parent !== "source_file" && parent !== "declaration_list") return [];
        return found("const", nameOf(node) ?? "?", node, source, null);
      }
      case "macro_definition":
        return [
          {
            kind: "macro",
            name: nameOf(node) ?? "?",
            range: node,
            signature: `macro_rules! ${nameOf(node) ?? "?"}`,
            inner: null,
          },
        ];
      default:
        return undefined;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Java

function javaHandler(source: string): Handler {
  return (node) => {
    const body = () => field(node, "body");
    switch (node.type) {
      case "class_declaration":
      case "record_declaration":
        return found("class", nameOf(node) ?? "?", node, source, body());
      case "interface_declaration":
      case "annotation_type_declaration":
        return found("interface", nameOf(node) ?? "?", node, source, body());
      case "enum_declaration":
        return found("enum", nameOf(node) ?? "?", node, source, body());
      case "method_declaration":
      case "constructor_declaration":
      case "compact_constructor_declaration":
        return found("method", nameOf(node) ?? "?", node, source, body());
      default:
        return undefined;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// C / C++

const C_DECLARATOR_WRAPPERS = new Set([
  "pointer_declarator",
  "reference_declarator",
  "parenthesized_declarator",
  "attributed_declarator",
]);

/** The function_declarator inside a (possibly pointer/reference) declarator, if any. */
function functionDeclarator(declarator: Node | null): Node | null {
  let d = declarator;
  while (d && C_DECLARATOR_WRAPPERS.has(d.type)) d = field(d, "declarator") ?? d.namedChildren.at(-1) ?? null;
  return d?.type === "function_declarator" ? d : null;
}

const C_DECLARATION_SCOPES = new Set([
  "translation_unit",
  "declaration_list",
  "field_declaration_list",
  "linkage_specification",
  "template_declaration",
  "preproc_if",
  "preproc_ifdef",
  "preproc_else",
  "preproc_elif",
]);

const C_TYPE_SPECIFIERS: Record<string, SymbolKind> = {
  struct_specifier: "struct",
  union_specifier: "struct",
  class_specifier: "class",
  enum_specifier: "enum",
};

function cHandler(source: string): Handler {
  const handle = cItem(source);
  return (node, cx) => {
    const result = handle(node, cx);
    const parent = node.parent;
    if (!result || parent?.type !== "template_declaration") return result;
    return result.map((f) => ({ ...f, range: parent }));
  };
}

function cItem(source: string): Handler {
  return (node, cx) => {
    const fnKind = (): SymbolKind => (inContainer(cx) ? "method" : "function");
    switch (node.type) {
      case "function_definition": {
        const fd = functionDeclarator(field(node, "declarator"));
        if (!fd) return undefined;
        return found(fnKind(), field(fd, "declarator")?.text ?? "?", node, source, field(node, "body"), {
          inner: null,
        });
      }
      case "declaration":
      case "field_declaration": {
        if (!C_DECLARATION_SCOPES.has(node.parent?.type ?? "")) return [];
        const fd = functionDeclarator(field(node, "declarator"));
        if (!fd) return undefined;
        return found(fnKind(), field(fd, "declarator")?.text ?? "?", node, source, null);
      }
      case "struct_specifier":
      case "union_specifier":
      case "class_specifier":
      case "enum_specifier": {
        const body = field(node, "body");
        const name = nameOf(node);
        if (!body || !name) return undefined;
        const kind = C_TYPE_SPECIFIERS[node.type] ?? "struct";
        return found(kind, name, node, source, body, { inner: kind === "enum" ? null : body });
      }
      case "type_definition": {
        const name = field(node, "declarator")?.text ?? "?";
        const type = field(node, "type");
        const typeBody = type ? field(type, "body") : null;
        if (type && typeBody) {
          const kind = C_TYPE_SPECIFIERS[type.type] ?? "type";
          const head = source.slice(headStart(node), headEnd(typeBody));
          return found(kind, name, node, source, typeBody, {
            inner: kind === "enum" ? null : typeBody,
            signature: tidySignature(`${head} {…} ${name}`),
          });
        }
        return found("type", name, node, source, null);
      }
      case "alias_declaration":
        return found("type", nameOf(node) ?? "?", node, source, null);
      case "namespace_definition":
        return found("namespace", nameOf(node) ?? "(anonymous)", node, source, field(node, "body"));
      case "compound_statement":
        return [];
      default:
        return undefined;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// The walk

const HANDLERS: Record<string, (source: string) => Handler> = {
  python: pythonHandler,
  javascript: scriptHandler,
  typescript: scriptHandler,
  tsx: scriptHandler,
  go: goHandler,
  rust: rustHandler,
  java: javaHandler,
  c: cHandler,
  cpp: cHandler,
};

/** Node types that never contain declarations worth listing. */
const LEAFY = new Set(["comment", "string", "template_string", "string_literal", "raw_string_literal"]);

function lineSpan(node: Node): { startLine: number; endLine: number } {
  const startLine = node.startPosition.row + 1;
  const end = node.endPosition;
  // A node that ends at the start of a line (after a newline) ends on the previous line.
  const endLine = end.column === 0 && end.row > node.startPosition.row ? end.row : end.row + 1;
  return { startLine, endLine };
}

export function hasHandler(language: string): boolean {
  return language in HANDLERS;
}

/** Extracts the outline of a parsed file. */
export function extractSymbols(root: Node, source: string, language: string): OutlineSymbol[] {
  const make = HANDLERS[language];
  if (!make) throw new Error(`unsupported language: ${language}`);
  const handle = make(source);
  const top: OutlineSymbol[] = [];

  const walk = (node: Node, into: OutlineSymbol[], cx: WalkContext): void => {
    for (let i = 0; i < node.namedChildCount; i++) {
      const child = node.namedChild(i);
      if (!child || LEAFY.has(child.type)) continue;
      const result = handle(child, cx);
      if (result === undefined) {
        walk(child, into, cx);
        continue;
      }
      for (const f of result) {
        const span = lineSpan(f.range);
        if (f.startNode) span.startLine = Math.min(span.startLine, f.startNode.startPosition.row + 1);
        const symbol: OutlineSymbol = {
          kind: f.kind,
          name: f.name,
          ...span,
          signature: f.signature || `${f.kind} ${f.name}`,
        };
        if (f.decorators && f.decorators.length > 0) symbol.decorators = f.decorators;
        if (f.inner) {
          const children: OutlineSymbol[] = [];
          walk(f.inner, children, { parentKind: f.kind });
          if (children.length > 0) symbol.children = children;
        }
        into.push(symbol);
      }
    }
  };

  walk(root, top, { parentKind: undefined });
  return top;
}

/** The first ERROR or MISSING node of a tree, descending only into subtrees that have one. */
export function firstErrorNode(root: Node): Node | undefined {
  if (!root.hasError) return undefined;
  let node = root;
  for (;;) {
    if (node.isError || node.isMissing) return node;
    let next: Node | undefined;
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (c && (c.hasError || c.isMissing || c.isError)) {
        next = c;
        break;
      }
    }
    if (!next) return node;
    node = next;
  }
}

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  grammarWasmPath,
  languageForPath,
  type OutlineSymbol,
  outlineSource,
  parseOutline,
  SUPPORTED_LANGUAGES,
} from "../outline/index.js";
import { codeOutlineTool } from "./code-outline.js";
import type { ToolContext, ToolResult } from "./types.js";

let root: string;
let ctx: ToolContext;

before(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "hands-outline-")));
  const workspace = path.join(root, "ws");
  await mkdir(workspace);
  ctx = {
    workspace,
    readRoots: [],
    sandbox: () => Promise.reject(new Error("no sandbox in this test")),
    signal: new AbortController().signal,
  };
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes `lines` to a file of the workspace and outlines it with the tool. */
async function outline(rel: string, lines: string[]): Promise<ToolResult> {
  const file = path.join(ctx.workspace, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, lines.join("\n"));
  return codeOutlineTool.execute({ path: rel }, ctx);
}

/** "kind name start-end" per symbol, children indented by two spaces. */
function shape(symbols: readonly OutlineSymbol[], depth = 0): string[] {
  return symbols.flatMap((s) => [
    `${"  ".repeat(depth)}${s.kind} ${s.name} ${s.startLine}-${s.endLine}`,
    ...shape(s.children ?? [], depth + 1),
  ]);
}

function symbolsOf(result: ToolResult): OutlineSymbol[] {
  assert.equal(result.isError, undefined, result.output);
  return (result.data as { symbols: OutlineSymbol[] }).symbols;
}

function find(symbols: readonly OutlineSymbol[], name: string): OutlineSymbol {
  for (const s of symbols) {
    if (s.name === name) return s;
    const inner = s.children ? findOrUndefined(s.children, name) : undefined;
    if (inner) return inner;
  }
  assert.fail(`no symbol named ${name}`);
}

function findOrUndefined(symbols: readonly OutlineSymbol[], name: string): OutlineSymbol | undefined {
  try {
    return find(symbols, name);
  } catch {
    return undefined;
  }
}

test("the tool object follows the contract", () => {
  assert.equal(codeOutlineTool.name, "code_outline");
  assert.equal(codeOutlineTool.readOnly, true);
  assert.deepEqual((codeOutlineTool.parameters as { required: string[] }).required, ["path"]);
  assert.match(codeOutlineTool.description, /line ranges/);
});

test("python: classes, methods, decorators, nested functions, module constants", async () => {
  const result = await outline("src/shapes.py", [
    "import math", // 1
    "", // 2
    "MAX_SIDES = 12", // 3
    "helper_value = 3", // 4
    "", // 5
    "", // 6
    "class Shape(Base):", // 7
    '    """A shape."""', // 8
    "", // 9
    "    def __init__(self, name):", // 10
    "        self.name = name", // 11
    "", // 12
    "    @property", // 13
    "    def area(self, scale: float) -> float:  # the area", // 14
    "        return 0.0", // 15
    "", // 16
    "    @staticmethod", // 17
    "    @functools.cache", // 18
    "    async def make(kind: str,", // 19
    "                   size: int = 1) -> 'Shape':", // 20
    "        def build(x):", // 21
    "            return Shape(x)", // 22
    "        return build(kind)", // 23
    "", // 24
    "", // 25
    "def make(kind: str) -> Shape:", // 26
    "    class Local:", // 27
    "        pass", // 28
    "    return Local()", // 29
    "",
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "const MAX_SIDES 3-3",
    "class Shape 7-23",
    "  method __init__ 10-11",
    "  method area 13-15",
    "  method make 17-23",
    "    function build 21-22",
    "function make 26-29",
    "  class Local 27-28",
  ]);
  assert.equal(find(symbols, "area").signature, "def area(self, scale: float) -> float");
  assert.deepEqual(find(symbols, "area").decorators, ["@property"]);
  assert.equal(symbols[2]?.signature, "def make(kind: str) -> Shape");
  assert.equal(symbols[1]?.children?.[2]?.signature, "async def make(kind: str, size: int = 1) -> 'Shape'");
  assert.deepEqual(symbols[1]?.children?.[2]?.decorators, ["@staticmethod", "@functools.cache"]);
  assert.equal(symbols[1]?.signature, "class Shape(Base)");

  assert.equal(
    result.output,
    [
      "src/shapes.py (python, 29 lines)",
      "MAX_SIDES = 12  [3-3]",
      "class Shape(Base)  [7-23]",
      "  def __init__(self, name)  [10-11]",
      "  @property def area(self, scale: float) -> float  [13-15]",
      "  @staticmethod @functools.cache async def make(kind: str, size: int = 1) -> 'Shape'  [17-23]",
      "    def build(x)  [21-22]",
      "def make(kind: str) -> Shape  [26-29]",
      "  class Local  [27-28]",
    ].join("\n"),
  );
  assert.deepEqual(
    {
      path: result.data?.["path"],
      language: result.data?.["language"],
      hasErrors: result.data?.["hasErrors"],
    },
    { path: "src/shapes.py", language: "python", hasErrors: false },
  );
});

test("typescript: exported arrow consts, classes with methods and fields, interfaces, types, enums", async () => {
  const result = await outline("src/service.ts", [
    'import { Dep } from "./dep.js";', // 1
    "", // 2
    'export const VERSION = "1.0";', // 3
    "const internal = 5;", // 4
    "export const add = (a: number, b: number): number => a + b;", // 5
    "", // 6
    '@Injectable({ scope: "app" })', // 7
    "export class Service<T> extends Base implements Api {", // 8
    "  private count = 0;", // 9
    "  onEvent = (e: Event): void => {", // 10
    "    this.count++;", // 11
    "  };", // 12
    "  constructor(private readonly dep: Dep) {", // 13
    "    super();", // 14
    "  }", // 15
    "  async bar(x: number): Promise<void> {", // 16
    "    function inner(): void {}", // 17
    "    await inner();", // 18
    "  }", // 19
    "  static get size(): number {", // 20
    "    return 1;", // 21
    "  }", // 22
    "}", // 23
    "", // 24
    "export interface Api {", // 25
    "  bar(x: number): Promise<void>;", // 26
    "  readonly name: string;", // 27
    "}", // 28
    "", // 29
    "export type Id = string | number;", // 30
    "enum Color {", // 31
    "  Red,", // 32
    "  Green,", // 33
    "}", // 34
    "export default function main(argv: string[]): number {", // 35
    "  return argv.length;", // 36
    "}", // 37
    "namespace Util {", // 38
    "  export const twice = async (n: number) => n * 2;", // 39
    "}", // 40
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "const VERSION 3-3",
    "function add 5-5",
    "class Service 7-23",
    "  method onEvent 10-12",
    "  method constructor 13-15",
    "  method bar 16-19",
    "    function inner 17-17",
    "  method size 20-22",
    "interface Api 25-28",
    "  method bar 26-26",
    "type Id 30-30",
    "enum Color 31-34",
    "function main 35-37",
    "namespace Util 38-40",
    "  function twice 39-39",
  ]);
  assert.equal(find(symbols, "add").signature, "export const add = (a: number, b: number): number =>");
  assert.equal(find(symbols, "Service").signature, "export class Service<T> extends Base implements Api");
  assert.equal(symbols[2]?.children?.[2]?.signature, "async bar(x: number): Promise<void>");
  assert.equal(find(symbols, "size").signature, "static get size(): number");
  assert.equal(find(symbols, "onEvent").signature, "onEvent = (e: Event): void =>");
  assert.equal(find(symbols, "main").signature, "export default function main(argv: string[]): number");
  assert.equal(find(symbols, "Id").signature, "export type Id = string | number");
  assert.equal(find(symbols, "VERSION").signature, 'export const VERSION = "1.0"');
  assert.equal(result.data?.["language"], "typescript");
});

test("tsx: components as functions and arrow consts", async () => {
  const result = await outline("ui/App.tsx", [
    'import React from "react";', // 1
    "", // 2
    "export function App({ title }: Props): JSX.Element {", // 3
    '  return <div className="app">{title}</div>;', // 4
    "}", // 5
    "", // 6
    "export const Button = ({ label }: { label: string }) => (", // 7
    "  <button>{label}</button>", // 8
    ");", // 9
  ]);
  assert.deepEqual(shape(symbolsOf(result)), ["function App 3-5", "function Button 7-9"]);
  assert.equal(result.data?.["language"], "tsx");
  assert.equal(result.data?.["hasErrors"], false);
});

test("javascript: classes, generators, field arrows, function expressions", async () => {
  const result = await outline("lib/foo.mjs", [
    'import fs from "node:fs";', // 1
    "export class Foo extends Bar {", // 2
    "  #secret = 1;", // 3
    "  static create(opts) {", // 4
    "    return new Foo(opts);", // 5
    "  }", // 6
    "  onClick = () => {};", // 7
    "}", // 8
    "function* ids(start) {", // 9
    "  yield start;", // 10
    "}", // 11
    "export const sum = function (a, b) {", // 12
    "  return a + b;", // 13
    "};", // 14
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "class Foo 2-8",
    "  method create 4-6",
    "  method onClick 7-7",
    "function ids 9-11",
    "function sum 12-14",
  ]);
  assert.equal(find(symbols, "create").signature, "static create(opts)");
  assert.equal(find(symbols, "ids").signature, "function* ids(start)");
  assert.equal(find(symbols, "sum").signature, "export const sum = function (a, b)");
});

test("javascript: CommonJS shapes — assigned functions, prototypes, exports, object-literal methods", async () => {
  const result = await outline("lib/app.js", [
    '"use strict";', // 1
    "var proto = module.exports = function (options) {", // 2
    "  function router(req, res) {}", // 3
    "  return router;", // 4
    "};", // 5
    "app.init = function init() {", // 6
    "  this.on('mount', function onmount(parent) {", // 7
    "    parent.x = 1;", // 8
    "  });", // 9
    "};", // 10
    "View.prototype.render = function (options, callback) {", // 11
    "  callback();", // 12
    "};", // 13
    "exports.compileTrust = (val) => val;", // 14
    "module.exports.parse = async (text) => JSON.parse(text);", // 15
    "app.del = app.delete = function () {};", // 16
    "proto[method] = function (path) {};", // 17
    "var helpers = {", // 18
    "  escape: function (s) { return s; },", // 19
    "  'to-json': (v) => JSON.stringify(v),", // 20
    "  trim(s) { return s.trim(); },", // 21
    "  limit: 10,", // 22
    "};", // 23
    "Object.defineProperty(app, 'router', {", // 24
    "  get: function getrouter() { return 1; },", // 25
    "});", // 26
    "function createApplication() {", // 27
    "  var app = function (req, res, next) {};", // 28
    "  var count = 0, name = 'x';", // 29
    "  return app;", // 30
    "}", // 31
    "obj.value = 42;", // 32
    "items[i + 1] = function () {};", // 33
    "exports.Store = class Store {};", // 34
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "function proto 2-5",
    "  function router 3-3",
    "function app.init 6-10",
    "  function onmount 7-9",
    "method View.prototype.render 11-13",
    "function exports.compileTrust 14-14",
    "function module.exports.parse 15-15",
    "function app.del 16-16",
    "function proto[method] 17-17",
    "method escape 19-19",
    "method to-json 20-20",
    "method trim 21-21",
    "method getrouter 25-25",
    "function createApplication 27-31",
    "  function app 28-28",
    "class exports.Store 34-34",
  ]);
  assert.equal(find(symbols, "app.init").signature, "app.init = function init()");
  assert.equal(
    find(symbols, "View.prototype.render").signature,
    "View.prototype.render = function (options, callback)",
  );
  assert.equal(find(symbols, "module.exports.parse").signature, "module.exports.parse = async (text) =>");
  assert.equal(find(symbols, "escape").signature, "escape: function (s)");
  assert.equal(find(symbols, "app").signature, "var app = function (req, res, next)");
  // A module's one export is listed under the function's own name when it has one.
  const single = symbolsOf(
    await outline("lib/query.js", ["module.exports = function query(options) {", "  return 1;", "};"]),
  );
  assert.deepEqual(shape(single), ["function query 1-3"]);
});

test("javascript: .cjs, .mjs and .jsx files; a named class expression; an anonymous one is not listed", async () => {
  const cjs = symbolsOf(
    await outline("lib/pool.cjs", [
      "module.exports = (Pool) => {", // 1
      "  return class BoundPool extends Pool {", // 2
      "    connect() {}", // 3
      "  };", // 4
      "};", // 5
      "const Anon = wrap(class { m() {} });", // 6
    ]),
  );
  assert.deepEqual(shape(cjs), [
    "function module.exports 1-5",
    "  class BoundPool 2-4",
    "    method connect 3-3",
    "method m 6-6",
  ]);
  const mjs = symbolsOf(
    await outline("lib/esm.mjs", ["export const z = () => 1;", "export default class { run = () => 2; }"]),
  );
  assert.deepEqual(shape(mjs), ["function z 1-1", "class default 2-2", "  method run 2-2"]);
  const jsx = symbolsOf(
    await outline("ui/List.jsx", [
      "export function List({ items }) {", // 1
      "  const renderItem = (item) => <li>{item}</li>;", // 2
      "  return <ul>{items.map(renderItem)}</ul>;", // 3
      "}", // 4
    ]),
  );
  assert.deepEqual(shape(jsx), ["function List 1-4", "  function renderItem 2-2"]);
});

test("typescript: namespaces, declare, overloads and export =", async () => {
  const symbols = symbolsOf(
    await outline("types/lib.d.ts", [
      "declare namespace Lib {", // 1
      "  function parse(text: string): Node;", // 2
      "  class Node { walk(): void; }", // 3
      "}", // 4
      'declare module "fs-extra" {', // 5
      "  export function copy(src: string): Promise<void>;", // 6
      "}", // 7
      "declare function load(path: string): void;", // 8
      "export function pick(a: string): string;", // 9
      "export function pick(a: number): number;", // 10
      "export function pick(a: unknown): unknown { return a; }", // 11
      "namespace Outer.Inner { export const h = () => 1; }", // 12
      "export = Lib;", // 13
    ]),
  );
  assert.deepEqual(shape(symbols), [
    "namespace Lib 1-4",
    "  function parse 2-2",
    "  class Node 3-3",
    "    method walk 3-3",
    'namespace "fs-extra" 5-7',
    "  function copy 6-6",
    "function load 8-8",
    "function pick 9-9",
    "function pick 10-10",
    "function pick 11-11",
    "namespace Outer.Inner 12-12",
    "  function h 12-12",
  ]);
});

test("go: structs, interfaces, methods with receivers, exported consts", async () => {
  const result = await outline("pkg/shapes/shapes.go", [
    "package shapes", // 1
    "", // 2
    'import "math"', // 3
    "", // 4
    "const (", // 5
    "\tTau    = math.Pi * 2", // 6
    "\thidden = 1", // 7
    ")", // 8
    "", // 9
    "// Shape is anything with an area.", // 10
    "type Shape interface {", // 11
    "\tArea() float64", // 12
    "\tScale(f float64) Shape", // 13
    "}", // 14
    "", // 15
    "type Circle struct {", // 16
    "\tR float64", // 17
    "}", // 18
    "", // 19
    "type ID = string", // 20
    "", // 21
    "func (c *Circle) Area() float64 {", // 22
    "\treturn math.Pi * c.R * c.R", // 23
    "}", // 24
    "", // 25
    "func NewCircle[T any](r float64,", // 26
    "\topts ...T) *Circle {", // 27
    "\treturn &Circle{R: r}", // 28
    "}", // 29
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "const Tau 6-6",
    "interface Shape 11-14",
    "  method Area 12-12",
    "  method Scale 13-13",
    "struct Circle 16-18",
    "type ID 20-20",
    "method Area 22-24",
    "function NewCircle 26-29",
  ]);
  assert.equal(symbols[4]?.signature, "func (c *Circle) Area() float64");
  assert.equal(find(symbols, "NewCircle").signature, "func NewCircle[T any](r float64, opts ...T) *Circle");
  assert.equal(find(symbols, "Circle").signature, "type Circle struct");
  assert.equal(find(symbols, "Scale").signature, "Scale(f float64) Shape");
});

test("rust: structs, enums, traits, impl blocks, modules, macros", async () => {
  const result = await outline("src/lib.rs", [
    "use std::fmt;", // 1
    "", // 2
    "pub const MAX: usize = 10;", // 3
    "", // 4
    "#[derive(Debug, Clone)]", // 5
    "pub struct Point<T> {", // 6
    "    x: T,", // 7
    "}", // 8
    "", // 9
    "pub enum Color {", // 10
    "    Red,", // 11
    "    Green(u8),", // 12
    "}", // 13
    "", // 14
    "pub trait Shape: fmt::Debug {", // 15
    "    fn area(&self) -> f64;", // 16
    "    fn name(&self) -> String {", // 17
    '        String::from("shape")', // 18
    "    }", // 19
    "}", // 20
    "", // 21
    "impl<T: fmt::Debug> fmt::Display for Point<T> {", // 22
    "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {", // 23
    '        write!(f, "{:?}", self.x)', // 24
    "    }", // 25
    "}", // 26
    "", // 27
    "impl Point<f64> {", // 28
    "    pub fn new(x: f64) -> Self {", // 29
    "        fn clamp(v: f64) -> f64 { v }", // 30
    "        Point { x: clamp(x) }", // 31
    "    }", // 32
    "}", // 33
    "", // 34
    "mod inner {", // 35
    "    pub(crate) async fn fetch() {}", // 36
    "}", // 37
    "", // 38
    "macro_rules! square {", // 39
    "    ($x:expr) => { $x * $x };", // 40
    "}", // 41
    "type Pair = (i32, i32);", // 42
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "const MAX 3-3",
    "struct Point 5-8",
    "enum Color 10-13",
    "trait Shape 15-20",
    "  method area 16-16",
    "  method name 17-19",
    "impl fmt::Display for Point<T> 22-26",
    "  method fmt 23-25",
    "impl Point<f64> 28-33",
    "  method new 29-32",
    "    function clamp 30-30",
    "module inner 35-37",
    "  function fetch 36-36",
    "macro square 39-41",
    "type Pair 42-42",
  ]);
  assert.equal(find(symbols, "fmt").signature, "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result");
  assert.equal(symbols[4]?.signature, "impl<T: fmt::Debug> fmt::Display for Point<T>");
  assert.equal(find(symbols, "Point").signature, "pub struct Point<T>");
  assert.equal(find(symbols, "fetch").signature, "pub(crate) async fn fetch()");
  assert.equal(find(symbols, "area").signature, "fn area(&self) -> f64");
});

test("java: classes, constructors, annotated methods, nested enums and interfaces", async () => {
  const result = await outline("src/main/java/A.java", [
    "package x;", // 1
    "", // 2
    "@Entity", // 3
    "public class Account<T> extends Base implements Api {", // 4
    "  private int balance;", // 5
    "", // 6
    "  @Override", // 7
    "  public String toString() {", // 8
    '    return "";', // 9
    "  }", // 10
    "", // 11
    "  Account(int balance) { this.balance = balance; }", // 12
    "", // 13
    "  enum Kind { SAVINGS; boolean isSavings() { return true; } }", // 14
    "", // 15
    "  interface Listener {", // 16
    "    void changed(int delta);", // 17
    "  }", // 18
    "}", // 19
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "class Account 3-19",
    "  method toString 7-10",
    "  method Account 12-12",
    "  enum Kind 14-14",
    "    method isSavings 14-14",
    "  interface Listener 16-18",
    "    method changed 17-17",
  ]);
  assert.equal(find(symbols, "toString").signature, "public String toString()");
  assert.equal(symbols[0]?.signature, "public class Account<T> extends Base implements Api");
  assert.equal(find(symbols, "changed").signature, "void changed(int delta)");
});

test("c: structs, typedefs, functions and prototypes", async () => {
  const result = await outline("src/main.c", [
    "#include <stdio.h>", // 1
    "struct point { int x; int y; };", // 2
    "typedef struct { int w; } size_t2;", // 3
    "int area(struct point *p);", // 4
    "static char *dup(const char *s) {", // 5
    "  return 0;", // 6
    "}", // 7
    "int main(int argc, char **argv) {", // 8
    "  int local(int);", // 9
    "  return 0;", // 10
    "}", // 11
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "struct point 2-2",
    "struct size_t2 3-3",
    "function area 4-4",
    "function dup 5-7",
    "function main 8-11",
  ]);
  assert.equal(find(symbols, "dup").signature, "static char *dup(const char *s)");
  assert.equal(find(symbols, "size_t2").signature, "typedef struct {…} size_t2");
  assert.equal(find(symbols, "area").signature, "int area(struct point *p)");
});

test("c++: namespaces, classes with methods, templates, out-of-class definitions", async () => {
  const result = await outline("src/geo.hpp", [
    "#pragma once", // 1
    "namespace geo {", // 2
    "class Shape : public Base {", // 3
    " public:", // 4
    "  Shape();", // 5
    "  virtual double area() const = 0;", // 6
    "  int id() const { return id_; }", // 7
    " private:", // 8
    "  int id_;", // 9
    "};", // 10
    "}  // namespace geo", // 11
    "", // 12
    "template <typename T>", // 13
    "T maxOf(T a, T b) { return a > b ? a : b; }", // 14
    "", // 15
    "double geo::Shape::scale(double f) {", // 16
    "  return f;", // 17
    "}", // 18
    "enum class Color { Red, Green };", // 19
  ]);
  const symbols = symbolsOf(result);
  assert.deepEqual(shape(symbols), [
    "namespace geo 2-11",
    "  class Shape 3-10",
    "    method Shape 5-5",
    "    method area 6-6",
    "    method id 7-7",
    "function maxOf 13-14",
    "function geo::Shape::scale 16-18",
    "enum Color 19-19",
  ]);
  assert.equal(find(symbols, "id").signature, "int id() const");
  assert.equal(find(symbols, "maxOf").signature, "T maxOf(T a, T b)");
  assert.equal(result.data?.["language"], "cpp");
});

test("a file with syntax errors still outlines and says so", async () => {
  const result = await outline("broken.py", [
    "def ok():", // 1
    "    return 1", // 2
    "", // 3
    "def broken(:", // 4
    "    return 2", // 5
    "", // 6
    "class After:", // 7
    "    def method(self):", // 8
    "        pass", // 9
  ]);
  const symbols = symbolsOf(result);
  assert.equal(result.data?.["hasErrors"], true);
  assert.equal(result.data?.["firstErrorLine"], 4);
  assert.match(
    result.output,
    /^note: the file has syntax errors \(first near line 4\); this outline is best-effort\.$/m,
  );
  assert.deepEqual(find(symbols, "ok").startLine, 1);
  assert.deepEqual(shape([find(symbols, "After")]), ["class After 7-9", "  method method 8-9"]);
});

test("unsupported extension: an error that lists the supported languages", async () => {
  const result = await outline("notes.txt", ["hello"]);
  assert.equal(result.isError, true);
  assert.match(result.output, /^ERROR: /);
  assert.match(result.output, /python \(\.py/);
  assert.match(result.output, /rust \(\.rs\)/);
  assert.match(result.output, /typescript/);
});

test("missing file, directory, binary and too-big files are errors, not exceptions", async () => {
  const missing = await codeOutlineTool.execute({ path: "nope/missing.py" }, ctx);
  assert.equal(missing.isError, true);
  assert.match(missing.output, /^ERROR: .*(not found|no such|does not exist)/i);

  await mkdir(path.join(ctx.workspace, "pkg.py"), { recursive: true });
  const dir = await codeOutlineTool.execute({ path: "pkg.py" }, ctx);
  assert.equal(dir.isError, true);
  assert.match(dir.output, /^ERROR: .*directory/);

  await writeFile(path.join(ctx.workspace, "blob.py"), Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01, 0x02]));
  const binary = await codeOutlineTool.execute({ path: "blob.py" }, ctx);
  assert.equal(binary.isError, true);
  assert.match(binary.output, /^ERROR: .*binary/);

  await writeFile(path.join(ctx.workspace, "huge.py"), `x = 1\n${"#".repeat(2 * 1024 * 1024)}\n`);
  const huge = await codeOutlineTool.execute({ path: "huge.py" }, ctx);
  assert.equal(huge.isError, true);
  assert.match(huge.output, /^ERROR: .*too big/);
});

test("a path outside the workspace is refused", async () => {
  await writeFile(path.join(root, "x.py"), "def secret():\n    pass\n");
  const result = await codeOutlineTool.execute({ path: "../x.py" }, ctx);
  assert.equal(result.isError, true);
  assert.match(result.output, /^ERROR: /);
  assert.doesNotMatch(result.output, /secret/);
});

test("a 5,000-function file outlines in well under 2 seconds", async () => {
  const lines: string[] = [];
  for (let i = 0; i < 5000; i++) {
    lines.push(
      `export function fn${i}(a: number, b = ${i}): number {`,
      "  const x = a + b;",
      `  return x * ${i};`,
      "}",
    );
  }
  await outline("warmup.ts", ["function warm() {}"]);
  const started = performance.now();
  const result = await outline("big.ts", lines);
  const elapsed = performance.now() - started;
  const symbols = symbolsOf(result);
  assert.equal(symbols.length, 5000);
  assert.deepEqual(shape([symbols[4999]!]), ["function fn4999 19997-20000"]);
  assert.equal(result.data?.["symbolCount"], 5000);
  assert.ok(elapsed < 2000, `took ${elapsed.toFixed(0)} ms`);
  // The text is capped for the model; the data keeps every symbol.
  assert.match(result.output, /… 3000 more symbols not shown$/);
});

test("library: outlineSource works for every supported language, grammars resolved from node_modules", async () => {
  const snippets: Record<string, [string, string]> = {
    python: ["def f(x):\n    return x\n", "function f"],
    javascript: ["function f(x) { return x; }\n", "function f"],
    typescript: ["function f(x: number): number { return x; }\n", "function f"],
    tsx: ["const f = () => <b />;\n", "function f"],
    go: ["package p\nfunc f() {}\n", "function f"],
    rust: ["fn f() {}\n", "function f"],
    java: ["class f {}\n", "class f"],
    c: ["int f(void) { return 0; }\n", "function f"],
    cpp: ["int f() { return 0; }\n", "function f"],
  };
  assert.deepEqual([...SUPPORTED_LANGUAGES].sort(), Object.keys(snippets).sort());
  for (const language of SUPPORTED_LANGUAGES) {
    const wasm = grammarWasmPath(language);
    assert.ok(wasm.includes(`${path.sep}node_modules${path.sep}`), wasm);
    assert.ok(existsSync(wasm), wasm);
    const [source, expected] = snippets[language]!;
    const symbols = await outlineSource(source, language);
    assert.deepEqual(
      symbols.map((s) => `${s.kind} ${s.name}`),
      [expected],
      language,
    );
  }
  await assert.rejects(outlineSource("x", "cobol"), /unsupported language "cobol"/);
  const parsed = await parseOutline("def f(:\n", "python");
  assert.equal(parsed.hasErrors, true);
});

test("language detection from file extensions", () => {
  assert.equal(languageForPath("a/b/c.py"), "python");
  assert.equal(languageForPath("X.TSX"), "tsx");
  assert.equal(languageForPath("x.d.ts"), "typescript");
  assert.equal(languageForPath("lib.rs"), "rust");
  assert.equal(languageForPath("a.hpp"), "cpp");
  assert.equal(languageForPath("Makefile"), undefined);
  assert.equal(languageForPath(".py"), undefined);
});

// What the model is told about each built-in tool (name, description, JSON schema) and whether
// it only reads: everything the first request needs. The implementations load on first call
// (tools/index.ts), so start-up does not read or compile them and their libraries.
import { fmtInt } from "./fs/text.js";
import { FILE_PATH_PARAM } from "./paths.js";
import type { Tool } from "./types.js";

/** A tool without its implementation. */
export type ToolSpec = Omit<Tool, "execute">;

export const EXEC_DEFAULT_TIMEOUT_S = 60;
export const EXEC_MAX_TIMEOUT_S = 600;
export const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_LIMIT = 10_000;
export const READ_MAX_LINE_CHARS = 2000;
export const LIST_MAX_ENTRIES = 500;
/** Deepest level shown (1 = only the folder's own entries); reduced when the tree is too big. */
export const LIST_MAX_DEPTH = 3;
export const GLOB_MAX_RESULTS = 1000;
export const GREP_MAX_MATCHES = 200;
/** Files larger than this are skipped. */
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024;

export const readFileSpec: ToolSpec = {
  name: "read_file",
  description: `Read a text file: up to ${fmtInt(READ_DEFAULT_LIMIT)} lines from \`offset\` (1-based); when more remain, it ends with the call that reads on. Lines over ${fmtInt(READ_MAX_LINE_CHARS)} characters are clipped.`,
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      offset: { type: "integer", minimum: 1 },
      limit: { type: "integer", minimum: 1, maximum: READ_MAX_LIMIT },
      line_numbers: { type: "boolean" },
    },
    required: ["path"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const writeFileSpec: ToolSpec = {
  name: "write_file",
  description:
    "Create or overwrite a whole file (parent folders are made). To change part of one, use edit_file.",
  parameters: {
    type: "object",
    properties: { path: FILE_PATH_PARAM, content: { type: "string" } },
    required: ["path", "content"],
    additionalProperties: false,
  },
  readOnly: false,
  reportsWrites: true,
};

export const editFileSpec: ToolSpec = {
  name: "edit_file",
  description:
    "Replace `old_string` with `new_string` in a file. old_string must match exactly (whitespace too) and once, unless replace_all. An empty old_string creates the file.",
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      old_string: { type: "string" },
      new_string: { type: "string" },
      replace_all: { type: "boolean" },
    },
    required: ["path", "old_string", "new_string"],
    additionalProperties: false,
  },
  readOnly: false,
  reportsWrites: true,
};

export const listDirSpec: ToolSpec = {
  name: "list_dir",
  description: `List a folder (default: the workspace) as a tree ${LIST_MAX_DEPTH} levels deep: folders end in /, files show their size. node_modules and .git are not expanded.`,
  parameters: {
    type: "object",
    properties: { path: { type: "string" } },
    additionalProperties: false,
  },
  readOnly: true,
};

export const globSpec: ToolSpec = {
  name: "glob",
  description: `Find files by pattern (\`**/*.ts\`; \`*\` stays in one folder) under \`path\` (default: the workspace), newest first, at most ${fmtInt(GLOB_MAX_RESULTS)}. Skips .gitignored files, and node_modules unless named.`,
  parameters: {
    type: "object",
    properties: { pattern: { type: "string" }, path: { type: "string" } },
    required: ["pattern"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const grepSpec: ToolSpec = {
  name: "grep",
  description: `Search files with a JavaScript regex: \`path:line:text\` per match, at most ${GREP_MAX_MATCHES}. \`path\`: a folder or file (default: the workspace); \`glob\` filters files (\`*.ts\`, \`src/**/*.py\`). Skips .gitignored files, node_modules, binaries.`,
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string" },
      path: { type: "string" },
      glob: { type: "string" },
      ignore_case: { type: "boolean" },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const runCommandSpec: ToolSpec = {
  name: "run_command",
  description:
    "Run a bash command in the workspace root (no terminal or stdin: use non-interactive flags). Shows its output; a failure also the exit code and stderr. cd does not carry over; processes left running are killed unless keep_background.",
  parameters: {
    type: "object",
    properties: {
      command: { type: "string" },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Seconds (default ${EXEC_DEFAULT_TIMEOUT_S})`,
      },
      keep_background: { type: "boolean" },
    },
    required: ["command"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const executePythonSpec: ToolSpec = {
  name: "execute_python",
  description:
    "Run a Python 3 script (a fresh process, no stdin) in the workspace root; the result reads as run_command's.",
  parameters: {
    type: "object",
    properties: {
      code: { type: "string" },
      timeout: { type: "number", minimum: 1, maximum: EXEC_MAX_TIMEOUT_S },
    },
    required: ["code"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const codeOutlineSpec: ToolSpec = {
  name: "code_outline",
  description:
    "Outline a source file (Python, JS/TS, Go, Rust, Java, C, C++): classes, functions, methods, types and constants, with signatures and line ranges.",
  parameters: {
    type: "object",
    properties: { path: FILE_PATH_PARAM },
    required: ["path"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const REPO_MAP_DEFAULT_TOKENS = 1024;
export const REPO_MAP_MAX_TOKENS = 8192;

export const repoMapSpec: ToolSpec = {
  name: "repo_map",
  description:
    "The workspace's files and definitions (line, signature) most related to `query` (task, names, paths) or `files`, ranked by references.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string" },
      files: { type: "array", items: { type: "string" } },
      tokens: { type: "integer", minimum: 128 },
    },
    additionalProperties: false,
  },
  readOnly: true,
};

export const WEB_DEFAULT_TIMEOUT_S = 30;
export const WEB_MAX_TIMEOUT_S = 120;

export const webFetchSpec: ToolSpec = {
  name: "web_fetch",
  description: `Fetch a URL over HTTP(S): GET by default, or POST/PUT/PATCH/DELETE with a \`body\` to call an API. Only hosts the session's allow-list names can be reached. HTML comes back as readable markdown, JSON pretty-printed, text as is; binary content is refused. Redirects are followed (each hop checked); the body is cut at 5 MB; timeout in seconds (default ${WEB_DEFAULT_TIMEOUT_S}).`,
  parameters: {
    type: "object",
    properties: {
      url: { type: "string", description: "Absolute http:// or https:// URL" },
      method: { type: "string", enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] },
      headers: { type: "object", additionalProperties: { type: "string" } },
      body: { type: "string", description: "Request body (not for GET/HEAD); set content-type in headers" },
      timeout: { type: "number", minimum: 1, maximum: WEB_MAX_TIMEOUT_S },
    },
    required: ["url"],
    additionalProperties: false,
  },
  // Not read-only: a request can send data out (and a POST can change things), so it is approved like a command.
  readOnly: false,
};

export const DB_DEFAULT_MAX_ROWS = 100;
export const DB_MAX_ROWS = 1000;
export const DB_DEFAULT_TIMEOUT_S = 30;
export const DB_MAX_TIMEOUT_S = 300;

const DB_PARAMS = {
  database: {
    type: "string",
    description: "A database named in the settings, or the path of an SQLite file in the workspace",
  },
  sql: { type: "string", description: "One SQL statement" },
  max_rows: {
    type: "integer",
    minimum: 1,
    maximum: DB_MAX_ROWS,
    description: `Rows shown (default ${DB_DEFAULT_MAX_ROWS})`,
  },
  timeout: {
    type: "number",
    minimum: 1,
    maximum: DB_MAX_TIMEOUT_S,
    description: `Seconds (default ${DB_DEFAULT_TIMEOUT_S})`,
  },
};

export const queryDatabaseSpec: ToolSpec = {
  name: "query_database",
  description: `Query an SQLite file in the workspace or a database named in the settings, read-only (the database refuses writes). mode "query" (default) runs one SQL statement and shows the rows as a table, at most max_rows (default ${DB_DEFAULT_MAX_ROWS}; it says when more follow); mode "schema" lists the tables and views with their columns and indexes (\`table\` narrows it to one).`,
  parameters: {
    type: "object",
    properties: {
      ...DB_PARAMS,
      mode: { type: "string", enum: ["query", "schema"] },
      table: { type: "string", description: 'mode "schema": only this table' },
    },
    required: ["database"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const writeDatabaseSpec: ToolSpec = {
  name: "write_database",
  description:
    "Run a statement that changes a database (INSERT, UPDATE, DELETE, DDL) on a database whose settings allow writes. A person approves each call.",
  parameters: {
    type: "object",
    properties: DB_PARAMS,
    required: ["database", "sql"],
    additionalProperties: false,
  },
  readOnly: false,
};

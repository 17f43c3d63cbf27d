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
  description: `Read a text file. Lines come numbered (\`N<tab>text\`; the numbers are not part of the file). Up to ${fmtInt(READ_DEFAULT_LIMIT)} lines from \`offset\`; when more remain, the output ends with the call that reads on. Lines over ${fmtInt(READ_MAX_LINE_CHARS)} characters are clipped.`,
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      offset: { type: "integer", minimum: 1, description: "First line (1-based)" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: READ_MAX_LIMIT,
        description: `Max lines (default ${READ_DEFAULT_LIMIT})`,
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const writeFileSpec: ToolSpec = {
  name: "write_file",
  description:
    "Create or overwrite a file with `content`, the whole file (parent folders are made). To change part of a file, use edit_file. Files in .git/ cannot be written.",
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
    "Replace `old_string` with `new_string` in a file. old_string must match the file exactly (whitespace too, without read_file's line numbers) and occur once, unless replace_all. A miss shows the closest lines. An empty old_string creates the file.",
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      old_string: { type: "string" },
      new_string: { type: "string" },
      replace_all: { type: "boolean", description: "Replace every occurrence" },
    },
    required: ["path", "old_string", "new_string"],
    additionalProperties: false,
  },
  readOnly: false,
  reportsWrites: true,
};

export const listDirSpec: ToolSpec = {
  name: "list_dir",
  description: `List a folder as a tree (default: the workspace root): folders end in /, files show their size. Up to ${LIST_MAX_DEPTH} levels and ${LIST_MAX_ENTRIES} entries; node_modules, .git and folders too big to show are not expanded.`,
  parameters: {
    type: "object",
    properties: { path: { type: "string" } },
    additionalProperties: false,
  },
  readOnly: true,
};

export const globSpec: ToolSpec = {
  name: "glob",
  description: `Find files by glob pattern (\`**/*.ts\`, \`src/**/*.{js,jsx}\`; \`*\` stays in one folder, so \`*.json\` matches the top level only) under \`path\` (default: the workspace root). Respects .gitignore; skips .git, and node_modules unless named. Paths newest first, at most ${fmtInt(GLOB_MAX_RESULTS)}.`,
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
  description: `Search file contents with a JavaScript regex; prints \`path:line:text\` per matching line, at most ${GREP_MAX_MATCHES}. Searches \`path\` (a folder or file; default: the workspace root), respecting .gitignore and skipping .git, node_modules, binaries and files over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB. \`glob\` filters the files: \`*.ts\` by name at any depth, \`src/**/*.py\` by path.`,
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
    "Run a bash command in the workspace root; returns exit code, stdout and stderr. cd and variables may not carry over (use `cd dir && cmd`). No terminal, no stdin: use non-interactive flags. Processes left running are killed before the next command unless keep_background. Long output is cut in the middle.",
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
      keep_background: {
        type: "boolean",
        description: "Keep processes it leaves running (their later output is not shown)",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const executePythonSpec: ToolSpec = {
  name: "execute_python",
  description:
    "Run a Python 3 script, fresh each call, in the workspace root with no stdin; returns exit code, stdout and stderr (print what you need).",
  parameters: {
    type: "object",
    properties: {
      code: { type: "string" },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Seconds (default ${EXEC_DEFAULT_TIMEOUT_S})`,
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const codeOutlineSpec: ToolSpec = {
  name: "code_outline",
  description:
    "Outline a source file: its classes, functions, methods, types and constants with signatures and line ranges, nested under their parents. Use it on a long file, then read_file the lines you need. Python, JS/TS, Go, Rust, Java, C, C++.",
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
    "Map of the workspace's code: the files and definitions (line, signature) most related to `query`, ranked by which files use which names. Then code_outline or read_file.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", description: "Task, names or paths to look for" },
      files: { type: "array", items: { type: "string" }, description: "Files to focus on" },
      tokens: { type: "integer", minimum: 128, description: `Map size (default ${REPO_MAP_DEFAULT_TOKENS})` },
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

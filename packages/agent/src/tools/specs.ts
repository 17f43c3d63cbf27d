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
  description: [
    "Read a text file from the workspace. Returns numbered lines like `cat -n` (line number, tab, text).",
    "The numbers are for reference only — they are not part of the file; never copy them into edit_file's old_string.",
    `Reads up to ${fmtInt(READ_DEFAULT_LIMIT)} lines by default. For large files, page with \`offset\` (1-based line to start at) and \`limit\`; the output ends with the exact call that reads on when lines remain.`,
    `Lines longer than ${fmtInt(READ_MAX_LINE_CHARS)} characters are clipped.`,
    "Always read a file (or the relevant part of it) before editing it. Use list_dir/glob to find files and grep to locate code, then read the lines you need.",
    "Binary files and folders cannot be read with this tool.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      offset: {
        type: "integer",
        minimum: 1,
        description:
          "1-based line number to start reading at (default 1). Use the value suggested at the end of a previous read to continue.",
      },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: READ_MAX_LIMIT,
        description: `Maximum number of lines to return (default ${READ_DEFAULT_LIMIT}).`,
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const writeFileSpec: ToolSpec = {
  name: "write_file",
  description: [
    "Create a new file, or replace the entire content of an existing file, in the workspace. Parent folders are created as needed.",
    "The write is atomic: the file is either fully written or left as it was.",
    "Write the complete file content — nothing is merged. To change part of an existing file, prefer edit_file (smaller, safer); if you must overwrite an existing file, read it first.",
    "After writing code, run it or its tests (run_command / execute_python) to verify it works.",
    "Files inside .git/ cannot be written.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      content: { type: "string", description: "The complete new content of the file." },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const editFileSpec: ToolSpec = {
  name: "edit_file",
  description: [
    "Edit a file by replacing an exact piece of text: `old_string` must appear in the file exactly as written (same whitespace, indentation and line breaks) and is replaced by `new_string`.",
    "Read the file first and copy old_string from it, without read_file's line-number prefixes.",
    "By default old_string must occur exactly once — include enough surrounding lines to make it unique; set replace_all=true to replace every occurrence (e.g. renaming a variable).",
    "If there is no exact match, the error shows the most similar lines so you can correct old_string.",
    "To create a new file, pass an empty old_string with the full content as new_string (or use write_file).",
    "The write is atomic. After editing code, run it or its tests to verify the change.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      path: FILE_PATH_PARAM,
      old_string: {
        type: "string",
        description: "The exact text to replace (empty only to create a new file or fill an empty one).",
      },
      new_string: { type: "string", description: "The replacement text (must differ from old_string)." },
      replace_all: {
        type: "boolean",
        description: "Replace every occurrence instead of requiring exactly one (default false).",
      },
    },
    required: ["path", "old_string", "new_string"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const listDirSpec: ToolSpec = {
  name: "list_dir",
  description: [
    "List a folder of the workspace as a tree: folders first (marked with a trailing /), then files with their sizes; symbolic links are shown as `name -> target`.",
    `Shows up to ${LIST_MAX_DEPTH} levels when the tree is small, fewer when it is large (folders not expanded show their entry count), at most ${LIST_MAX_ENTRIES} entries.`,
    "Heavy folders such as node_modules and .git are shown but not expanded.",
    "Use it to get oriented in a project; use glob to find files by name pattern and grep to search their contents.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Folder to list, relative to the workspace root (default: the workspace root).",
      },
    },
    additionalProperties: false,
  },
  readOnly: true,
};

export const globSpec: ToolSpec = {
  name: "glob",
  description: [
    "Find files by name with a glob pattern (picomatch syntax: `*` within one folder level, `**` across levels, `{a,b}` alternatives), matched against paths relative to `path` (default: the workspace root).",
    "Examples: `**/*.ts` (all TypeScript files), `src/**/*.test.ts`, `*.json` (top level only — a pattern without `/` does not search subfolders; use `**/` for that), `**/{package,tsconfig}.json`.",
    "Respects .gitignore files (root and nested), never looks inside .git, and skips node_modules unless the pattern names it.",
    `Returns matching file paths relative to the workspace root (ready for read_file), newest modification first, at most ${fmtInt(GLOB_MAX_RESULTS)}.`,
    "Use grep to search file contents.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", description: "Glob pattern, e.g. `**/*.py` or `src/**/index.{ts,js}`." },
      path: {
        type: "string",
        description: "Folder to search in, relative to the workspace root (default: the workspace root).",
      },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const grepSpec: ToolSpec = {
  name: "grep",
  description: [
    'Search the contents of files in the workspace with a JavaScript regular expression (e.g. `function\\s+load`, `TODO|FIXME`, `import .* from "react"`). Escape regex characters for literal text (`\\(`, `\\.`).',
    "Output: one line per matching line, as `path:line:text` (paths relative to the workspace root; long lines are clipped around the match).",
    `Searches \`path\` (a folder or one file; default the whole workspace), respects .gitignore, skips .git, node_modules, binary files and files over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB.`,
    "`glob` filters which files are searched: `*.ts` matches by file name at any depth, a pattern with `/` (e.g. `src/**/*.py`) matches paths relative to `path`.",
    `At most ${GREP_MAX_MATCHES} matches are shown. Use it to find definitions and usages, then read_file around the line numbers.`,
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", description: "JavaScript regular expression (without slashes or flags)." },
      path: {
        type: "string",
        description:
          "Folder or file to search, relative to the workspace root (default: the workspace root).",
      },
      glob: {
        type: "string",
        description: "Only search files matching this glob, e.g. `*.ts` or `src/**/*.{js,jsx}`.",
      },
      ignore_case: { type: "boolean", description: "Case-insensitive search (default false)." },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
  readOnly: true,
};

export const runCommandSpec: ToolSpec = {
  name: "run_command",
  description: [
    "Run a shell command (bash) in the workspace root and get its exit code, stdout and stderr.",
    "Use it to build, run tests, run scripts, use git, or inspect the environment — and to verify your changes after editing code.",
    "Depending on the sandbox, `cd`, variables and background processes may or may not carry over to the next call, so do not rely on them: use `cd sub && cmd` in one call. There is no terminal and stdin is closed, so commands must be non-interactive (pass -y / --yes flags, avoid editors and pagers).",
    `Timeout: \`timeout\` seconds (default ${EXEC_DEFAULT_TIMEOUT_S}, max ${EXEC_MAX_TIMEOUT_S}); on timeout the command and everything it started are killed.`,
    "Prefer read_file, list_dir, glob and grep over cat/ls/find/grep for looking at files. Very long output is cut in the middle; redirect to a file and search it when you need everything.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      command: {
        type: "string",
        description: "The shell command line to run, e.g. `npm test -- --grep parser`.",
      },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Timeout in seconds (default ${EXEC_DEFAULT_TIMEOUT_S}). Raise it for slow builds or installs.`,
      },
      keep_background: {
        type: "boolean",
        description:
          "Keep processes this command leaves running (e.g. a server started with `&`). Otherwise the result lists them and they are killed before the next command. Their later output is not shown anywhere: redirect it to a file.",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  readOnly: false,
};

export const executePythonSpec: ToolSpec = {
  name: "execute_python",
  description: [
    "Run a Python 3 program and get its exit code, stdout and stderr (tracebacks included).",
    "The code runs as a fresh script with the workspace root as the current directory, so it can read and write project files; nothing persists between calls — print() whatever you need to see.",
    "Good for quick calculations, data inspection, and checking that code you wrote actually works (import it and call it).",
    `Timeout: \`timeout\` seconds (default ${EXEC_DEFAULT_TIMEOUT_S}, max ${EXEC_MAX_TIMEOUT_S}). stdin is not available to the program (input() fails).`,
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      code: { type: "string", description: "Complete Python 3 source code to run." },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Timeout in seconds (default ${EXEC_DEFAULT_TIMEOUT_S}).`,
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
    "Show the structure of a source file without reading all of it: its classes, functions, methods, " +
    "interfaces, structs, enums, traits/impls, type aliases and exported constants, each with a short " +
    "signature and its line range [start-end], nested symbols indented under their parent. Use it first " +
    "on a file you have not seen (especially a long one) to find where things are, then call read_file " +
    "with offset/limit on just the lines you need. Built on a real parser, so it is reliable even for " +
    "files with syntax errors (it then says so). Languages: Python, JavaScript, TypeScript/TSX, Go, Rust, " +
    "Java, C, C++ (chosen by file extension).",
  parameters: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Path of the source file, relative to the workspace root (or absolute inside it).",
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  readOnly: true,
};

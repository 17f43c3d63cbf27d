// The built-in tool set, in the order the model sees them.
import { codeOutlineTool } from "./code-outline.js";
import { editFileTool } from "./edit-file.js";
import { executePythonTool } from "./execute-python.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";

export { type RecallSource, recallTool } from "./recall.js";

import { runCommandTool } from "./run-command.js";
import type { Tool } from "./types.js";
import { writeFileTool } from "./write-file.js";

export function builtinTools(): Tool[] {
  return [
    readFileTool,
    writeFileTool,
    editFileTool,
    listDirTool,
    globTool,
    grepTool,
    runCommandTool,
    executePythonTool,
    codeOutlineTool,
  ] as Tool[];
}

export {
  codeOutlineTool,
  editFileTool,
  executePythonTool,
  globTool,
  grepTool,
  listDirTool,
  readFileTool,
  runCommandTool,
  writeFileTool,
};

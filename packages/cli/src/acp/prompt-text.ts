// An ACP prompt (text, resource links, embedded resources) as the task text of one Hands
// request. Attached files are read through the editor when it offers fs/read_text_file (so an
// unsaved buffer is what the model sees), else from disk — either way only inside the
// workspace: a link is a pointer the editor sent, not a licence to read the machine.
import { realpath } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { isInside } from "@hands/sandbox/base";
import { fileText } from "./file-text.js";

/** Attached text beyond this is cut (the model can read the rest with read_file). */
export const MAX_ATTACHED_CHARS = 100_000;

export interface PromptSources {
  workspace: string;
  /** The editor's fs/read_text_file, when it offers it. */
  readThroughEditor?: (path: string) => Promise<string>;
}

export async function promptText(blocks: ContentBlock[], sources: PromptSources): Promise<string> {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === "text") parts.push(b.text);
    else if (b.type === "resource_link") parts.push(await linked(b.uri, b.name, sources));
    else if (b.type === "resource") {
      const r = b.resource;
      if ("text" in r) parts.push(attachment(displayUri(r.uri, sources.workspace), r.text));
      else parts.push(`[attached ${r.uri}: binary content (${r.mimeType ?? "unknown type"}), not included]`);
    } else parts.push(`[attached ${b.type}: not supported by this agent, not included]`);
  }
  return parts.join("\n\n").trim();
}

async function linked(uri: string, name: string, sources: PromptSources): Promise<string> {
  const path = filePath(uri);
  if (!path) return `[linked ${name}: ${uri}]`;
  const shown = displayUri(uri, sources.workspace);
  try {
    // Inside the workspace (symbolic links resolved) before anything is read, the editor's copy too.
    const real = await realpath(path);
    const ws = await realpath(sources.workspace);
    if (!isInside(ws, real)) return `[linked ${shown}: outside the workspace, not read]`;
    if (sources.readThroughEditor) return attachment(shown, await sources.readThroughEditor(real));
    const text = fileText(real, MAX_ATTACHED_CHARS * 4);
    return text === null ? `[linked ${shown}: not a readable text file, not read]` : attachment(shown, text);
  } catch (e) {
    return `[linked ${shown}: could not be read (${(e as Error).message})]`;
  }
}

function filePath(uri: string): string | undefined {
  if (uri.startsWith("/")) return uri;
  if (!uri.startsWith("file:")) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** A path relative to the workspace when it is inside it (what the model's tools take). */
function displayUri(uri: string, workspace: string): string {
  const path = filePath(uri);
  if (!path) return uri;
  const prefix = workspace.endsWith("/") ? workspace : `${workspace}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

function attachment(name: string, text: string): string {
  const cut = text.length > MAX_ATTACHED_CHARS;
  const body = cut
    ? `${text.slice(0, MAX_ATTACHED_CHARS)}\n… (cut at ${MAX_ATTACHED_CHARS} characters)`
    : text;
  return `<attached path=${JSON.stringify(name)}>\n${body}\n</attached>`;
}

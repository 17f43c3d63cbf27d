// Hands' approval questions as ACP permission requests: allow once / allow always / reject,
// mapped back to the gate's yes / always / no. A write into .hands/ offers no "always" (the
// gate asks for those every time), and an editor that cancels the request is a no.
import type {
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolCallContent,
} from "@agentclientprotocol/sdk";
import type { ApprovalPrompt, UserAnswer } from "@hands/agent";
import { fileText } from "./file-text.js";
import { toolKind, toolTitle } from "./updates.js";

const ALLOW_ONCE: PermissionOption = { optionId: "allow_once", name: "Allow", kind: "allow_once" };
const ALLOW_ALWAYS: PermissionOption = {
  optionId: "allow_always",
  name: "Always allow (this session)",
  kind: "allow_always",
};
const REJECT: PermissionOption = { optionId: "reject_once", name: "Reject", kind: "reject_once" };

/** The request for one approval; `toolCallId` is the call's own (its tool_call update's) when known. */
export function permissionRequest(
  sessionId: string,
  toolCallId: string,
  p: ApprovalPrompt,
  /** The editor's buffer of the file (unsaved changes included), when it gave it. */
  buffer?: string,
): RequestPermissionRequest {
  const content: ToolCallContent[] = [];
  const absPath = p.preview?.abs;
  if (p.kind === "write" && p.preview) {
    // Shown as the editor's own diff, against its buffer when known; else an edit as the gate's
    // unified diff (of the disk's text).
    const after = p.name === "write_file" ? p.args["content"] : editedText(buffer, p.args);
    if (typeof after === "string" && p.preview.abs)
      content.push({
        type: "diff",
        path: p.preview.abs,
        oldText: buffer ?? fileText(p.preview.abs),
        newText: after,
      });
    else content.push({ type: "content", content: { type: "text", text: p.preview.diff } });
  }
  if (p.kind === "command" && p.command !== undefined)
    content.push({ type: "content", content: { type: "text", text: p.command } });
  const why = [
    p.policy?.action === "ask"
      ? `policy: ${p.policy.rule?.name ?? ""}${p.policy.reason ? ` — ${p.policy.reason}` : ""}`
      : "",
    p.settingsPath !== undefined
      ? `${p.settingsPath} is Hands' own settings for this project (asked every time)`
      : "",
  ].filter(Boolean);
  for (const text of why) content.push({ type: "content", content: { type: "text", text } });
  return {
    sessionId,
    toolCall: {
      toolCallId,
      title: toolTitle(p.name, p.args),
      kind: toolKind(p.name),
      status: "pending",
      content,
      rawInput: p.args,
      ...(absPath ? { locations: [{ path: absPath }] } : {}),
    },
    options: p.settingsPath !== undefined ? [ALLOW_ONCE, REJECT] : [ALLOW_ONCE, ALLOW_ALWAYS, REJECT],
  };
}

/** The editor's choice as the gate's answer; anything unknown is a refusal. */
export function answerOf(r: RequestPermissionResponse, offered: PermissionOption[]): UserAnswer {
  if (r.outcome.outcome !== "selected") return { answer: "no", reason: "the user cancelled the request" };
  const id = (r.outcome as { optionId: string }).optionId;
  const option = offered.find((o) => o.optionId === id);
  if (!option) return { answer: "no", reason: `the editor chose an option that was not offered (${id})` };
  if (option.kind === "allow_once") return { answer: "yes" };
  if (option.kind === "allow_always") return { answer: "always" };
  return { answer: "no", reason: "the user rejected it in the editor" };
}

/** edit_file's result on the editor's buffer, or undefined (no buffer, or old_string not in it). */
function editedText(buffer: string | undefined, args: Record<string, unknown>): string | undefined {
  const oldStr = args["old_string"];
  const newStr = args["new_string"];
  if (buffer === undefined || typeof oldStr !== "string" || typeof newStr !== "string") return undefined;
  if (oldStr === "") return buffer === "" ? newStr : undefined;
  if (!buffer.includes(oldStr)) return undefined;
  return args["replace_all"] === true
    ? buffer.split(oldStr).join(newStr)
    : buffer.replace(oldStr, () => newStr);
}

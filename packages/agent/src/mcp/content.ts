// What the model reads of an MCP tool result. Tool results are text here, so every block
// becomes a line: text as is, resources with their URIs (the model can name them, ask for
// them, pass them on), binary data as its type and size rather than base64 noise.

type Block = Record<string, unknown> & { type?: unknown };

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Decoded size of base64 data, for "(3.2 kB)"-style notes. */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
}

function binaryNote(kind: string, mimeType: unknown, data: unknown): string {
  return `[${kind}${str(mimeType) ? ` ${mimeType}` : ""}, ${base64Bytes(data)} bytes]`;
}

function resourceLink(b: Block): string {
  const label = str(b.title) ?? str(b.name);
  const details = [str(b.mimeType), str(b.description)].filter(Boolean).join(", ");
  return `[resource link${label ? ` "${label}"` : ""}: ${String(b.uri)}${details ? ` (${details})` : ""}]`;
}

function embeddedResource(b: Block): string {
  const r = (typeof b.resource === "object" && b.resource !== null ? b.resource : {}) as Block;
  const head = `[resource ${String(r.uri)}${str(r.mimeType) ? ` (${r.mimeType})` : ""}`;
  if (typeof r.text === "string") return `${head}]\n${r.text}`;
  return `${head}: binary, ${base64Bytes(r.blob)} bytes]`;
}

export function renderBlock(block: unknown): string {
  const b = (typeof block === "object" && block !== null ? block : {}) as Block;
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? b.text : "";
    case "image":
      return binaryNote("image", b.mimeType, b.data);
    case "audio":
      return binaryNote("audio", b.mimeType, b.data);
    case "resource_link":
      return resourceLink(b);
    case "resource":
      return embeddedResource(b);
    default:
      return `[${String(b.type)} content]`;
  }
}

/** The text of a `tools/call` result: its blocks, or its structured content when it has none. */
export function renderToolResult(result: Record<string, unknown>): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts = blocks.map(renderBlock).filter((p) => p !== "");
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join("\n");
}

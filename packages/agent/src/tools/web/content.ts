// What web_fetch makes of a body, by its media type: HTML as readable markdown (Readability
// picks the article out of the page's chrome, linkedom is its DOM, turndown writes markdown),
// JSON pretty-printed, other text as it is. Anything else is binary and is refused by its type
// before its body is read (binaryType); an unlabelled body is sniffed.
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { looksBinary } from "../fs/text.js";
import { decodeBody } from "./charset.js";

export type BodyKind = "html" | "json" | "text" | "binary";

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The kind a media type names; undefined when there is none to go by (sniff the body). */
export function kindOf(type: string): BodyKind | undefined {
  if (!type) return undefined;
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/json" || type.endsWith("+json") || type === "text/json") return "json";
  if (
    type.startsWith("text/") ||
    type.endsWith("+xml") ||
    [
      "application/xml",
      "application/javascript",
      "application/ecmascript",
      "application/x-javascript",
      "application/x-www-form-urlencoded",
      "application/x-sh",
      "application/x-yaml",
      "application/yaml",
      "application/toml",
      "application/sql",
      "application/graphql",
    ].includes(type)
  )
    return "text";
  return "binary";
}

/** The kind of an unlabelled body, by its first bytes. */
export function sniffKind(bytes: Uint8Array): BodyKind {
  if (looksBinary(bytes.subarray(0, 8192))) return "binary";
  const head = Buffer.from(bytes.subarray(0, 512)).toString("latin1").trimStart().toLowerCase();
  if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
  if (head.startsWith("{") || head.startsWith("[")) return "json";
  return "text";
}

export interface Rendered {
  text: string;
  title?: string;
  encoding: string;
  charsetNote?: string;
  /** JSON that did not parse is shown as text, with this note. */
  note?: string;
}

let turndown: TurndownService | undefined;
function markdownWriter(): TurndownService {
  if (turndown) return turndown;
  turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  turndown.remove(["script", "style", "noscript", "iframe", "template"] as never);
  return turndown;
}

/** An HTML page as markdown: the article Readability finds, else the whole body. */
export function htmlToMarkdown(html: string, url: string): { markdown: string; title?: string } {
  const { document } = parseHTML(html);
  // Readability resolves relative links against the document's URL.
  const base = document.createElement("base");
  base.setAttribute("href", url);
  document.head?.prepend(base);
  const title = document.title?.trim() || undefined;
  let article: ReturnType<Readability["parse"]> = null;
  try {
    article = new Readability(document as never, { charThreshold: 200 }).parse();
  } catch {
    article = null; // a page Readability cannot walk is shown whole
  }
  const source = article?.content || document.body?.innerHTML || html;
  const markdown = markdownWriter().turndown(source).trim();
  const articleTitle = article?.title?.trim() || title;
  return { markdown, ...(articleTitle ? { title: articleTitle } : {}) };
}

export function renderBody(
  bytes: Uint8Array,
  kind: Exclude<BodyKind, "binary">,
  contentType: string | undefined,
  url: string,
  partial: boolean,
): Rendered {
  const decoded = decodeBody(bytes, contentType, kind === "html", partial);
  const base = { encoding: decoded.encoding, ...(decoded.note ? { charsetNote: decoded.note } : {}) };
  if (kind === "html") {
    const { markdown, title } = htmlToMarkdown(decoded.text, url);
    return { ...base, text: markdown, ...(title ? { title } : {}) };
  }
  if (kind === "json") {
    if (!partial)
      try {
        return { ...base, text: JSON.stringify(JSON.parse(decoded.text), null, 2) };
      } catch (e) {
        return {
          ...base,
          text: decoded.text,
          note: `not valid JSON (${(e as Error).message}); shown as sent`,
        };
      }
    return { ...base, text: decoded.text, note: "JSON cut at the size cap; shown as sent" };
  }
  return { ...base, text: decoded.text };
}

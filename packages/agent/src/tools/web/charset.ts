// Decodes a fetched body to text. The order follows the WHATWG encoding sniffing rules in
// short: a byte order mark wins, then the Content-Type charset, then (for HTML) a <meta>
// charset in the first 1024 bytes, else UTF-8. Servers lie: a label TextDecoder does not know,
// or "UTF-8" over bytes that are not, falls back to windows-1252 (what browsers do for the
// Latin-1 pages such servers usually send) and says so, instead of handing the model U+FFFD soup.

export interface Decoded {
  text: string;
  /** The encoding actually used. */
  encoding: string;
  /** Set when the declared charset was wrong or unknown. */
  note?: string;
}

function bomEncoding(bytes: Uint8Array): { encoding: string; skip: number } | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: "utf-8", skip: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: "utf-16le", skip: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: "utf-16be", skip: 2 };
  return undefined;
}

/** The encoding TextDecoder uses for `label`, or undefined when it knows no such label. */
function known(label: string): string | undefined {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/** The charset parameter of a Content-Type value. */
export function charsetParam(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? "");
  return m?.[2];
}

/** A <meta charset> or http-equiv Content-Type charset in the first 1024 bytes. */
function metaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString("latin1");
  const m =
    /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head) ??
    /<meta[^>]+content\s*=\s*["'][^"']*charset=([\w.:-]+)/i.exec(head);
  return m?.[1];
}

/**
 * `bytes` as text. `partial`: the body was cut at the size cap, so a multi-byte character
 * split at the end is dropped rather than counted as invalid.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | undefined,
  html: boolean,
  partial: boolean,
): Decoded {
  const bom = bomEncoding(bytes);
  if (bom)
    return {
      text: new TextDecoder(bom.encoding).decode(bytes.subarray(bom.skip), { stream: partial }),
      encoding: bom.encoding,
    };
  const declared = charsetParam(contentType) ?? (html ? metaCharset(bytes) : undefined);
  const encoding = declared ? known(declared) : "utf-8";
  let note: string | undefined;
  if (declared && !encoding) note = `unknown charset "${declared}"`;
  if (encoding && encoding !== "utf-8")
    return { text: new TextDecoder(encoding).decode(bytes, { stream: partial }), encoding };
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: partial });
    return { text, encoding: "utf-8", ...(note ? { note: `${note}; decoded as UTF-8` } : {}) };
  } catch {
    const why =
      note ??
      (declared
        ? `declared ${declared} but the bytes are not valid UTF-8`
        : "no charset given and the bytes are not UTF-8");
    return {
      text: new TextDecoder("windows-1252").decode(bytes),
      encoding: "windows-1252",
      note: `${why}; decoded as windows-1252`,
    };
  }
}

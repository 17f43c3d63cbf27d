// What a create asks of a sandbox's network and lifecycle beyond the row's columns, in E2B's
// terms: egress rules (`network.allowOut` / `denyOut`, changed later by updateNetwork), who may
// reach its ports (`allowPublicTraffic`), the Host its servers are shown (`maskRequestHost`),
// and whether traffic resumes it when paused (`autoResume`). Kept with the row (one JSON column),
// so a resume, a fork and every node see the same. Checked here; what is not supported is
// refused with the reason rather than ignored.
import { parseEgressPolicy } from "@hands/sandbox";

export interface NetworkSettings {
  allowOut: string[];
  denyOut: string[];
  /** Ports other than envd's and the interpreter's open without the traffic access token. */
  allowPublicTraffic: boolean;
  maskRequestHost?: string;
}

export interface SandboxSettings {
  network: NetworkSettings;
  autoResume: boolean;
  /** false: a timeout's pause keeps the files only (E2B's keepMemory: false); else memory too. */
  autoPauseMemory?: boolean;
}

export const DEFAULT_SETTINGS: SandboxSettings = {
  network: { allowOut: [], denyOut: [], allowPublicTraffic: false },
  autoResume: false,
};

export class SettingsError extends Error {}

function stringList(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((e) => typeof e !== "string" || e.length > 300))
    throw new SettingsError(`${what} must be a list of addresses, CIDR blocks or domain names`);
  return v as string[];
}

/** The egress part of a create's or an update's `network`; throws SettingsError. */
export function egressOf(n: Record<string, unknown>): Pick<NetworkSettings, "allowOut" | "denyOut"> {
  for (const k of ["rules", "egressProxy", "transform"])
    if (n[k] !== undefined && n[k] !== null)
      throw new SettingsError(`network.${k} is not supported by hands serve`);
  const allowOut = stringList(n.allowOut, "network.allowOut");
  const denyOut = stringList(n.denyOut, "network.denyOut");
  try {
    parseEgressPolicy({ allowOut, denyOut });
  } catch (e) {
    throw new SettingsError(`network: ${(e as Error).message}`);
  }
  return { allowOut, denyOut };
}

/** A create's `network`, `autoResume` and `allow_internet_access`; throws SettingsError. */
export function settingsOf(
  body: {
    network?: unknown;
    autoResume?: unknown;
    autoPause?: unknown;
    allow_internet_access?: unknown;
  },
  publicByDefault = false,
): SandboxSettings {
  const n = body.network ?? {};
  if (typeof n !== "object" || n === null || Array.isArray(n))
    throw new SettingsError("network must be an object");
  const net = n as Record<string, unknown>;
  const egress = egressOf(net);
  const pub = net.allowPublicTraffic;
  if (pub !== undefined && pub !== null && typeof pub !== "boolean")
    throw new SettingsError("network.allowPublicTraffic must be a boolean");
  const mask = net.maskRequestHost;
  if (
    mask !== undefined &&
    mask !== null &&
    (typeof mask !== "string" || !/^[A-Za-z0-9.:_${}[\]-]{1,255}$/.test(mask))
  )
    // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's literal ${PORT} placeholder
    throw new SettingsError("network.maskRequestHost must be a host[:port] (${PORT} stands for the port)");
  if (net.httpsPorts !== undefined && net.httpsPorts !== null)
    throw new SettingsError("network.httpsPorts is not supported by hands serve");
  const ar = body.autoResume;
  let autoResume = false;
  if (ar !== undefined && ar !== null) {
    const enabled = typeof ar === "object" && !Array.isArray(ar) ? (ar as { enabled?: unknown }).enabled : ar;
    if (typeof enabled !== "boolean") throw new SettingsError("autoResume.enabled must be a boolean");
    if (enabled && body.autoPause !== true)
      throw new SettingsError("autoResume needs lifecycle.onTimeout 'pause' (autoPause: true)");
    autoResume = enabled;
  }
  // allowInternetAccess: false is E2B's denyOut of everything: with rules, allowOut alone gets out.
  if (
    body.allow_internet_access === false &&
    (egress.allowOut.length > 0 || egress.denyOut.length > 0) &&
    !egress.denyOut.includes("0.0.0.0/0")
  )
    egress.denyOut = [...egress.denyOut, "0.0.0.0/0"];
  return {
    network: {
      ...egress,
      allowPublicTraffic: typeof pub === "boolean" ? pub : publicByDefault,
      ...(typeof mask === "string" ? { maskRequestHost: mask } : {}),
    },
    autoResume,
  };
}

/** Whether the sandbox's egress goes through the rule-checking proxy. */
export function hasEgressRules(s: SandboxSettings | undefined): boolean {
  return !!s && (s.network.allowOut.length > 0 || s.network.denyOut.length > 0);
}

// The SDK's template (POST /v2/templates/{id}/builds/{build}: fromImage or fromTemplate, steps of
// RUN/COPY/ENV/WORKDIR/USER, startCmd, readyCmd) as a Hands container build. Every field comes
// from a tenant and is checked here; what Hands cannot do is refused with a message the SDK shows
// (no registry pulls: containers here have no network of their own).
import type { BuildStep } from "@hands/sandbox/backends";

export interface ParsedBuild {
  /** A docker image, or `template:<id>` of one of the tenant's ready templates. */
  from: { image: string } | { template: string };
  steps: BuildStep[];
  /** Content hashes the COPY steps need uploaded. */
  files: string[];
  startCmd?: string;
  readyCmd?: string;
}

/** E2B's base images that the Hands sandbox image stands for (it has what they promise: python3, node, git, curl). */
const BASE_ALIASES = [/^e2bdev\/base(:.*)?$/, /^e2bdev\/code-interpreter(:.*)?$/, /^hands-sandbox(:.*)?$/];

export class StepError extends Error {
  constructor(
    message: string,
    /** The SDK's step name: "base", a step's index, or "finalize". */
    readonly step?: string,
  ) {
    super(message);
  }
}

const str = (v: unknown, what: string, step: string): string => {
  if (typeof v !== "string") throw new StepError(`${what} must be a string`, step);
  return v;
};

export function parseE2bTemplate(body: Record<string, unknown>): ParsedBuild {
  let from: ParsedBuild["from"];
  if (body.fromImageRegistry !== undefined)
    throw new StepError("private registries are not supported: the image must be on the service", "base");
  if (typeof body.fromTemplate === "string") from = { template: body.fromTemplate };
  else if (typeof body.fromImage === "string") {
    if (!BASE_ALIASES.some((r) => r.test(body.fromImage as string)))
      throw new StepError(
        `base image '${body.fromImage}' is not available on this service (no registry pulls): use Template().fromBaseImage() or fromTemplate(NAME)`,
        "base",
      );
    from = { image: body.fromImage };
  } else throw new StepError("fromImage or fromTemplate is required", "base");
  const raw = body.steps ?? [];
  if (!Array.isArray(raw) || raw.length > 200) throw new StepError("steps must be a list of at most 200");
  const steps: BuildStep[] = [];
  const files: string[] = [];
  raw.forEach((s, i) => {
    const at = String(i + 1);
    if (!s || typeof s !== "object") throw new StepError("a step must be an object", at);
    const { type, args, filesHash } = s as { type?: unknown; args?: unknown; filesHash?: unknown };
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string"))
      throw new StepError("a step's args must be strings", at);
    const a = args as string[];
    switch (type) {
      case "RUN":
        steps.push({ kind: "run", cmd: str(a[0], "RUN's command", at), ...(a[1] ? { user: a[1] } : {}) });
        break;
      case "COPY": {
        const hash = str(filesHash, "COPY's filesHash", at);
        if (!/^[0-9a-f]{64}$/.test(hash)) throw new StepError("COPY's filesHash must be a sha256", at);
        files.push(hash);
        steps.push({
          kind: "copy",
          archive: hash,
          to: str(a[1], "COPY's destination", at),
          ...(a[2] ? { user: a[2] } : {}),
          ...(a[3] ? { mode: a[3] } : {}),
        });
        break;
      }
      case "ENV": {
        const vars: Record<string, string> = {};
        for (let k = 0; k + 1 < a.length; k += 2) vars[a[k] as string] = a[k + 1] as string;
        steps.push({ kind: "env", vars });
        break;
      }
      case "WORKDIR":
        steps.push({ kind: "workdir", path: str(a[0], "WORKDIR", at) });
        break;
      case "USER":
        steps.push({ kind: "user", name: str(a[0], "USER", at) });
        break;
      default:
        throw new StepError(`unknown step type ${JSON.stringify(type)}`, at);
    }
  });
  const opt = (v: unknown, what: string) => {
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string" || v.length > 16 * 1024)
      throw new StepError(`${what} must be a string`, "finalize");
    return v;
  };
  const startCmd = opt(body.startCmd, "startCmd");
  const readyCmd = opt(body.readyCmd, "readyCmd");
  return { from, steps, files, ...(startCmd ? { startCmd } : {}), ...(readyCmd ? { readyCmd } : {}) };
}

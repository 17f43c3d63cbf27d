// What a sandbox's image has, asked of the image itself: the languages and tools with their
// versions and the notable Python libraries, probed by one script inside a real sandbox of that
// backend (the docker image, or for bwrap the host's /usr it binds), so the list cannot drift
// from what commands will find.
import type { Sandbox } from "./types.js";

export interface ImageRuntime {
  name: string;
  /** Its first version line, or undefined when it is not there. */
  version?: string;
  kind: "language" | "tool" | "python-library";
}

const LANGUAGES: [string, string][] = [
  ["python3", "python3 --version"],
  ["node", "node --version"],
  ["deno", "deno --version"],
  ["perl", "perl -e 'print \"perl $^V\\n\"'"],
  ["ruby", "ruby --version"],
  ["go", "go version"],
  ["java", "java -version 2>&1"],
  ["R", "Rscript -e 'cat(R.version.string, \"\\\\n\")'"],
  ["gcc", "gcc --version"],
  ["bash", "bash --version"],
];
const TOOLS: [string, string][] = [
  ["git", "git --version"],
  ["curl", "curl --version"],
  ["jq", "jq --version"],
  ["make", "make --version"],
  ["pip", "python3 -m pip --version"],
  ["npm", "npm --version"],
  ["sqlite3", "sqlite3 --version"],
  ["jupyter", "jupyter --version 2>&1 | grep -m1 -i 'core\\|jupyter'"],
];
const PY_LIBS = ["numpy", "pandas", "matplotlib", "scipy", "requests", "ipykernel", "jupyter_client", "PIL"];

/** The probe: one line per entry, `kind<TAB>name<TAB>first version line` (empty when missing). */
export function imageProbeScript(): string {
  const lines = [
    'export LC_ALL=C; p() { v=$( (eval "$3") 2>/dev/null | head -n1 ); printf "%s\\t%s\\t%s\\n" "$1" "$2" "$v"; }',
  ];
  for (const [name, cmd] of LANGUAGES)
    lines.push(
      `command -v ${name.split(" ")[0]} >/dev/null 2>&1 && p language ${name} ${sq(cmd)} || p language ${name} ''`,
    );
  for (const [name, cmd] of TOOLS)
    lines.push(
      `command -v ${cmd.split(" ")[0]} >/dev/null 2>&1 && p tool ${name} ${sq(cmd)} || p tool ${name} ''`,
    );
  for (const lib of PY_LIBS)
    lines.push(
      `p python-library ${lib} ${sq(`python3 -c "import ${lib} as m; print(getattr(m, '__version__', 'installed'))"`)}`,
    );
  return lines.join("\n");
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function parseImageProbe(stdout: string): ImageRuntime[] {
  const out: ImageRuntime[] = [];
  for (const line of stdout.split("\n")) {
    const [kind, name, version] = line.split("\t");
    if (!name || (kind !== "language" && kind !== "tool" && kind !== "python-library")) continue;
    const v = version?.trim().slice(0, 100);
    out.push({ name, kind, ...(v ? { version: v } : {}) });
  }
  return out;
}

/** Runs the probe in `sandbox` (network off is fine: nothing is fetched). */
export async function listImageRuntimes(sandbox: Sandbox): Promise<ImageRuntime[]> {
  const r = await sandbox.exec(imageProbeScript(), { timeoutMs: 60_000 });
  if (r.exitCode !== 0 && r.stdout === "")
    throw new Error(`the probe failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
  return parseImageProbe(r.stdout);
}

// Which Jupyter kernel runs a language, as the bridge (bridge.ts) starts it in the sandbox: the
// names E2B's SDK sends, and for each kernel its command line and the files it needs written
// first. Python is IPython's kernel (Debian's python3-ipykernel), R is IRkernel (r-cran-irkernel),
// JavaScript and TypeScript are Deno's kernel (`deno jupyter`, the binary from npm's
// @deno/linux-x64-glibc: the sandbox image has it, bwrap finds it in the host's /usr/local/bin),
// Bash is bash-kernel.ts. Java has no kernel that Debian or npm ship (IJava is neither).
import { BASH_KERNEL_SOURCE } from "./bash-kernel.js";
import { PYTHON_STARTUP_SOURCE } from "./python-startup.js";

export interface KernelSpec {
  /** The language as contexts report it. */
  language: string;
  /** The kernel's command ({connection_file} and {resource_dir} are jupyter_client's). */
  argv: string[];
  /** Files written in the kernel's resource dir before it starts, by name. */
  files?: Record<string, string>;
  /** IPython start-up files (in the bridge's private IPYTHONDIR), by name. */
  ipythonStartup?: Record<string, string>;
}

const PYTHON: KernelSpec = {
  language: "python",
  argv: ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
  ipythonStartup: { "00-hands.py": PYTHON_STARTUP_SOURCE },
};
const DENO = (language: string): KernelSpec => ({
  language,
  argv: ["deno", "jupyter", "--kernel", "--conn", "{connection_file}"],
});
const SPECS: Record<string, KernelSpec> = {
  python: PYTHON,
  javascript: DENO("javascript"),
  typescript: DENO("typescript"),
  r: {
    language: "r",
    argv: [
      "R",
      "--no-save",
      "--no-restore",
      "--slave",
      "-e",
      "IRkernel::main()",
      "--args",
      "{connection_file}",
    ],
  },
  bash: {
    language: "bash",
    argv: ["python3", "{resource_dir}/bash_kernel.py", "-f", "{connection_file}"],
    files: { "bash_kernel.py": BASH_KERNEL_SOURCE },
  },
};
/** Other names E2B's SDK and users send for the same languages. */
const ALIASES: Record<string, string> = {
  python3: "python",
  js: "javascript",
  node: "javascript",
  ts: "typescript",
  deno: "typescript",
  R: "r",
  sh: "bash",
  shell: "bash",
};

/** Languages E2B runs that no kernel here can (named in the refusal). */
const NOT_AVAILABLE: Record<string, string> = {
  java: "no Java kernel is packaged by Debian or npm (E2B uses IJava)",
};

export type KernelChoice = { ok: true; spec: KernelSpec } | { ok: false; reason: string };

/** The kernel of a language (undefined or null: Python, as E2B's default context). */
export function kernelFor(language: unknown): KernelChoice {
  if (language === undefined || language === null || language === "") return { ok: true, spec: PYTHON };
  if (typeof language !== "string") return { ok: false, reason: "language must be a string" };
  const name = ALIASES[language] ?? language.toLowerCase();
  const spec = SPECS[name];
  if (spec) return { ok: true, spec };
  const why = NOT_AVAILABLE[name];
  const known = Object.keys(SPECS).join(", ");
  return {
    ok: false,
    reason: why
      ? `language '${language}' is not available: ${why}; this server runs ${known}`
      : `language '${language}' is not supported; this server runs ${known}`,
  };
}

/** The bridge's second argument: what it writes and starts. */
export function specArgument(spec: KernelSpec): string {
  return JSON.stringify({
    argv: spec.argv,
    language: spec.language,
    files: spec.files ?? {},
    ipython_startup: spec.ipythonStartup ?? {},
  });
}

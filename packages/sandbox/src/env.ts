// Environment scrubbing: commands the agent runs must not see the user's secrets (API keys,
// tokens, cloud credentials, Hands' own configuration), and they must never sit waiting for
// a terminal that nobody is looking at.

/** Variables whose name starts with one of these are always dropped. */
export const SECRET_ENV_PREFIXES: readonly string[] = [
  "AWS_",
  "AZURE_",
  "GCP_",
  "GOOGLE_",
  "OPENAI_",
  "ANTHROPIC_",
  "HANDS_",
  "GITHUB_",
  "GITLAB_",
  "HF_",
  "HUGGING_FACE_",
  "VAULT_",
];

/** Exact names that are always dropped. */
export const SECRET_ENV_NAMES: readonly string[] = [
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "NPM_TOKEN",
  "NODE_AUTH_TOKEN",
  "SSH_AUTH_SOCK",
  "KUBECONFIG",
  "DOCKER_AUTH_CONFIG",
  "PGPASSWORD",
  "MYSQL_PWD",
];

/** A name containing one of these `_`-separated words is dropped. */
const SECRET_WORDS = new Set([
  "SECRET",
  "SECRETS",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "TOKEN",
  "CREDENTIAL",
  "CREDENTIALS",
  "APIKEY",
  "PRIVATE",
]);

/** Names kept even if they would match a rule above (harmless and useful). */
const ALWAYS_KEEP = new Set(["PWD", "OLDPWD"]);

/** Hints that keep tools from paging, prompting or waiting for a TTY. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  CI: "1",
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "",
  LESS: "-FRX",
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_ASKPASS: "true",
  SSH_ASKPASS: "true",
  GCM_INTERACTIVE: "never",
  EDITOR: "true",
  VISUAL: "true",
  DEBIAN_FRONTEND: "noninteractive",
  PYTHONUNBUFFERED: "1",
  PIP_NO_INPUT: "1",
  PIP_DISABLE_PIP_VERSION_CHECK: "1",
  NPM_CONFIG_YES: "true",
  NPM_CONFIG_FUND: "false",
  NPM_CONFIG_UPDATE_NOTIFIER: "false",
  NO_UPDATE_NOTIFIER: "1",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
  HOMEBREW_NO_AUTO_UPDATE: "1",
};

/** True when `name` (with `value`) looks like it carries a secret. */
export function isSecretEnv(name: string, value = ""): boolean {
  const upper = name.toUpperCase();
  if (ALWAYS_KEEP.has(upper)) return false;
  if (SECRET_ENV_NAMES.includes(upper)) return true;
  if (SECRET_ENV_PREFIXES.some((p) => upper.startsWith(p))) return true;
  const words = upper.split("_").filter((w) => w.length > 0);
  if (words.some((w) => SECRET_WORDS.has(w))) return true;
  const last = words[words.length - 1] ?? "";
  // *_PASS, *_PWD (but not PWD itself, kept above).
  if ((last === "PASS" || last === "PWD") && words.length > 1) return true;
  // API_KEY, *_API_KEY, *_ACCESS_KEY, *_KEY_ID …
  if (upper.includes("API_KEY") || upper.includes("ACCESS_KEY") || upper.endsWith("_KEY_ID")) return true;
  // Other *_KEY (or a bare KEY) are dropped when the value looks like a key rather than a
  // setting: 8+ characters, no spaces, not a file path.
  if (last === "KEY" && looksLikeSecretValue(value)) return true;
  // URLs with embedded credentials (DATABASE_URL=postgres://user:pass@host/db).
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i.test(value)) return true;
  return false;
}

function looksLikeSecretValue(value: string): boolean {
  if (value.length < 8) return false;
  if (/\s/.test(value)) return false;
  if (value.startsWith("/") || value.startsWith("~") || value.startsWith(".")) return false;
  return true;
}

/**
 * Returns a copy of `env` without secrets (see `isSecretEnv`), plus the non-interactive
 * hints (`NON_INTERACTIVE_ENV`). Undefined values are dropped. Nothing else is changed:
 * PATH, HOME, LANG, TERM, USER, SHELL, TMPDIR … pass through.
 */
export function scrubEnv(
  env: Record<string, string | undefined> | NodeJS.ProcessEnv,
  options: { hints?: boolean } = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (isSecretEnv(name, value)) continue;
    out[name] = value;
  }
  if (options.hints !== false) Object.assign(out, NON_INTERACTIVE_ENV);
  return out;
}

// Where Hands keeps its data and configuration (XDG locations unless overridden).
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANDS_DATA_DIR) return env.HANDS_DATA_DIR;
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "hands");
}

/**
 * The folder of the bin's V8 code cache and its key (packages/cli/bin/hands.js, which finds it
 * the same way): the user's default data folder, whatever HANDS_DATA_DIR says — both are the
 * account's. Undefined when only a relative path is known.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_DATA_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".local", "share");
  return isAbsolute(base) ? join(base, "hands") : undefined;
}

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "hands", "config.json");
}

export function projectConfigPath(workspace: string): string {
  return join(workspace, ".hands", "config.json");
}

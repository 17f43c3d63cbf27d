// Where Hands keeps its data and configuration (XDG locations unless overridden).
import { homedir } from "node:os";
import { join } from "node:path";

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANDS_DATA_DIR) return env.HANDS_DATA_DIR;
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "hands");
}

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "hands", "config.json");
}

export function projectConfigPath(workspace: string): string {
  return join(workspace, ".hands", "config.json");
}

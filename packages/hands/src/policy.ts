// The command policy as this workspace and user configure it: the built-in rules, the user's
// policy.json and the project's (whose "allow" rules count only in a trusted folder).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  builtinRules,
  CommandPolicy,
  loadShellParser,
  PolicyError,
  type PolicyRule,
  parsePolicyRules,
  readPolicyFile,
  readSettingsFile,
  UnsafeFileError,
} from "@hands/agent";
import { SettingsError } from "./errors.js";
import { userConfigPath } from "./paths.js";
import { untrustedPolicy } from "./trust.js";

export function policyPaths(workspace: string, env: NodeJS.ProcessEnv = process.env) {
  return {
    project: join(workspace, ".hands", "policy.json"),
    user: join(dirname(userConfigPath(env)), "policy.json"),
  };
}

/**
 * Project rules first, then the user's, between the built-in denials and "ask" rules. An
 * untrusted folder's "allow" rules are left out (`ignored` names them).
 */
export async function loadPolicy(
  workspace: string,
  trusted: boolean,
  env: NodeJS.ProcessEnv = process.env,
  /** false: the built-in rules only (no policy file is read). */
  files = true,
): Promise<{ policy: CommandPolicy; ignored: string[] }> {
  const paths = policyPaths(workspace, env);
  // A policy file's examples are checked by the shell parser, which otherwise loads only when
  // the first command is judged.
  if (files && (existsSync(paths.project) || existsSync(paths.user))) await loadShellParser();
  try {
    const project = files ? readProjectRules(paths.project) : [];
    const { rules, ignored } = trusted ? { rules: project, ignored: [] } : untrustedPolicy(project);
    const { deny, ask } = builtinRules();
    const user = files ? readPolicyFile(paths.user) : [];
    return { policy: new CommandPolicy([...rules, ...user], deny, ask), ignored };
  } catch (err) {
    if (err instanceof PolicyError) throw new SettingsError(`invalid command policy: ${err.message}`);
    throw err;
  }
}

/** The workspace's rules, read so that a FIFO or a huge file planted there cannot hang the start. */
function readProjectRules(path: string): PolicyRule[] {
  let text: string | undefined;
  try {
    text = readSettingsFile(path);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new SettingsError(`invalid command policy: ${err.message}`);
    throw err;
  }
  return text === undefined ? [] : parsePolicyRules(text, path);
}

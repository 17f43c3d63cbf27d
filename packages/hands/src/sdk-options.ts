// Options objects are checked key by key: a misspelled option (`baseUrl` for `baseURL`,
// `maxStep` for `maxSteps`) would otherwise be ignored without a word, and the run would go
// somewhere else or with other limits than the caller meant.
import { SettingsError } from "./errors.js";
import { nearestName } from "./settings-schema.js";

/** Throws a SettingsError naming every key of `value` not in `known`, with the nearest known key. */
export function checkOptions(value: unknown, known: readonly string[], what: string): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SettingsError(`the ${what}s must be an object`);
  const problems = Object.keys(value)
    .filter((k) => !known.includes(k))
    .map((k) => {
      const near = nearestName(k, known);
      return `unknown ${what} "${k}"${near ? ` (did you mean "${near}"?)` : ""}`;
    });
  if (problems.length) throw new SettingsError(`${problems.join("; ")}. Known: ${known.join(", ")}`);
}

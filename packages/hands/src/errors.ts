// The one error a setting can cause: a value that is wrong, a file that cannot be read, a
// combination that contradicts itself. Front ends show its message as it is (the CLI exits 2).

export class SettingsError extends Error {
  override name = "SettingsError";
}

/** A positive whole number (`name` says where it came from); undefined when not given. */
export function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new SettingsError(`${name} must be a positive whole number, got "${value}"`);
  return n;
}

/** A positive whole number from the environment: unset or empty means not given. */
export function positiveIntSetting(name: string, value: string | undefined): number | undefined {
  return value === undefined || value === "" ? undefined : positiveInt(name, value);
}

// The model a session talks to, from the settings: a configured endpoint, else a local
// OpenAI-compatible server found on its usual port, and the model name when none is given.
import { createProvider, fetchModelList, type Provider } from "@hands/llm";
import { findLocalServer, noModelHelp } from "./discover.js";
import { SettingsError } from "./errors.js";
import type { MemoryHost } from "./memory-open.js";
import type { Settings } from "./settings.js";

/**
 * Finds the model endpoint and model name (`say` tells which were chosen when none was
 * configured); a SettingsError when there is none.
 */
export async function resolveProvider(
  settings: Settings,
  say: (text: string) => void,
  modelOverride?: string,
): Promise<Provider> {
  let { baseUrl, model } = settings;
  if (modelOverride) model = modelOverride;
  const apiKey = settings.apiKey;
  if (settings.provider === "anthropic") {
    if (!apiKey) throw new SettingsError("the anthropic provider needs ANTHROPIC_API_KEY (or --api-key).");
    model ??= "claude-sonnet-4-5";
  } else if (!baseUrl && !apiKey) {
    const local = await findLocalServer();
    if (!local) throw new SettingsError(noModelHelp().replace(/^hands: /, ""));
    baseUrl = local.baseUrl;
    model ??= local.models[0];
    if (!model)
      throw new SettingsError(`the ${local.label} server at ${local.baseUrl} lists no models; pass --model.`);
    say(`No model configured: using the ${local.label} server at ${local.baseUrl} with model ${model}.`);
  } else if (!model) {
    if (baseUrl) {
      model = await firstListedModel(baseUrl, apiKey, settings.sources);
      say(`No model given: using ${model}, the first listed by ${baseUrl}.`);
    } else {
      model = "gpt-4.1-mini";
    }
  }
  return createProvider({
    provider: settings.provider,
    model,
    ...(baseUrl ? { baseURL: baseUrl } : {}),
    apiKey: apiKey ?? "sk-no-key-needed",
    ...(settings.idleTimeoutMs ? { timeoutMs: settings.idleTimeoutMs } : {}),
    ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
  });
}

/**
 * The first model `baseUrl` lists, for a run without --model; a SettingsError saying why there
 * is none: the key refused, nothing listening, no answer, an answer that is not a model list.
 */
async function firstListedModel(
  baseUrl: string,
  apiKey: string | undefined,
  sources: Settings["sources"],
): Promise<string> {
  const list = await fetchModelList(baseUrl, {
    ...(apiKey ? { apiKey } : {}),
    ...(sources.apiKey ? { keySource: sources.apiKey } : {}),
    ...(sources.baseUrl ? { urlSource: sources.baseUrl } : {}),
  });
  if (!list.ok)
    throw new SettingsError(`no --model given, and the endpoint's models cannot be listed: ${list.message}.`);
  const model = list.models[0];
  if (!model)
    throw new SettingsError(`no --model given, and ${baseUrl}/models lists no models; pass --model NAME.`);
  return model;
}

/** What memory needs from the session: its settings, the model, a way to reach other models, a voice. */
export function memoryHost(
  settings: Settings,
  provider: Provider,
  dataDir: string,
  warn: (text: string) => void,
): MemoryHost {
  return {
    settings: settings.memory,
    dataDir,
    provider,
    namedProvider: async (model) => {
      try {
        return await resolveProvider(settings, () => {}, model);
      } catch {
        throw new SettingsError(`no model server for the summary model ${model}`);
      }
    },
    warn,
  };
}

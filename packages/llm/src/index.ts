export { AnthropicProvider, type AnthropicProviderOptions } from "./anthropic.js";
export { fromAnthropicStop, fromAnthropicUsage, toAnthropic, toAnthropicTools } from "./anthropic-wire.js";
export { ContextOverflowError, overflowOf } from "./context-overflow.js";
export { createProvider, type ProviderConfig, type ProviderKind } from "./factory.js";
export { LenientJsonError, parseLenientJson } from "./lenient-json.js";
export {
  fetchModelList,
  listedModels,
  type ModelList,
  type ModelListOptions,
  type ModelListProblem,
} from "./list-models.js";
export { OpenAIProvider, type OpenAIProviderOptions } from "./openai.js";
export { fromOpenAIFinish, fromOpenAIUsage, toOpenAIMessages, toOpenAITools } from "./openai-wire.js";
export { costOf, formatCost, type ModelPrice, PRICING, priceFor, withCost } from "./pricing.js";
export {
  formatReminder,
  OBSERVATION_STOP,
  ReactProvider,
  type ReactProviderOptions,
  reactSystemPrompt,
  renderReactHistory,
} from "./react.js";
export { cutAtObservation, parseReact, type ReactErrorReason, type ReactParse } from "./react-parser.js";
export {
  abortError,
  type CallContext,
  classifyError,
  type ErrorInfo,
  type ErrorKind,
  parseRetryAfter,
  protocolError,
  type RetryOptions,
  sleep,
  toModelError,
  withRetry,
} from "./retry.js";
export {
  type RecordedModelRequest,
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedTurn,
  type ScriptStep,
} from "./scripted.js";
export {
  type OverflowWording,
  overflowBody,
  type RecordedHttpRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ServerScript,
  type ServerToolCall,
  type ServerTurn,
  startScriptedServer,
} from "./testing/scripted-server.js";
export { extractTextToolCalls, extractTextToolCallsWithRest } from "./text-tool-calls.js";
export * from "./types.js";

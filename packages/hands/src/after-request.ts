// Work that must not delay a model request but must be done before its answer is used (a
// deferred memory storing the request it was not open for): started once the request has left
// — its body handed to the socket — so it runs while the model thinks, or when the call ends if
// no request was seen leaving (a provider that does not use node:http). The answer waits for it.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import type { ModelRequest, ModelResponse, Provider } from "@hands/llm";

/** Published by node:http for every client request it creates (https too). */
const REQUEST_START = "http.client.request.start";

/** `provider`, whose next call starts `work` as its request leaves; failures of `work` are its own. */
export function afterNextRequest(provider: Provider, work: () => Promise<unknown>): Provider {
  let started = false;
  return {
    name: provider.name,
    model: provider.model,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      if (started) return provider.complete(request);
      started = true;
      let leave!: () => void;
      const left = new Promise<void>((resolve) => {
        leave = resolve;
      });
      const onStart = (message: unknown) => {
        unsubscribe(REQUEST_START, onStart);
        const req = (message as { request: ClientRequest }).request;
        req.once("finish", leave);
        req.once("close", leave);
      };
      subscribe(REQUEST_START, onStart);
      const answer = provider.complete(request);
      const ended = answer.then(
        () => {},
        () => {},
      );
      const worked = Promise.race([left, ended])
        .then(() => {
          unsubscribe(REQUEST_START, onStart);
          return work();
        })
        .catch(() => {});
      try {
        return await answer;
      } finally {
        await worked;
      }
    },
  };
}

/**
 * `provider`, whose every call tells `left` once its request has left (its body handed to the
 * socket), or when the call ends if no request was seen leaving. Unlike afterNextRequest the
 * answer does not wait for anything: `left` only lets work start that must not delay the request.
 */
export function onEachRequestLeft(provider: Provider, left: () => void): Provider {
  return {
    name: provider.name,
    model: provider.model,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      let told = false;
      const tell = () => {
        unsubscribe(REQUEST_START, onStart);
        if (told) return;
        told = true;
        left();
      };
      const onStart = (message: unknown) => {
        unsubscribe(REQUEST_START, onStart);
        const req = (message as { request: ClientRequest }).request;
        req.once("finish", tell);
        req.once("close", tell);
      };
      subscribe(REQUEST_START, onStart);
      try {
        return await provider.complete(request);
      } finally {
        tell();
      }
    },
  };
}

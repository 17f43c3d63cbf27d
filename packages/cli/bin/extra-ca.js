// NODE_EXTRA_CA_CERTS without its cost at every start. Node reads that file when the process
// starts, before any JavaScript: it parses its own ~140 bundled root certificates and every
// certificate in the file (with the 140 of a system bundle, a sixth of the CPU time to the
// first model request), whether or not the process ever opens a TLS connection; a task
// against a local model server never does. So the bin's launcher (line 2 of hands.js) moves the
// variable aside to HANDS_EXTRA_CA_CERTS, and this file puts it back into the environment at
// once (every process Hands starts sees it as it was) and makes this process trust the file's
// certificates from its first TLS use on, as node would have: they are added to the default
// roots of every TLS context made without a `ca` of its own (one with its own `ca` trusts only
// that, as in node).
//
// The first TLS use is seen at each door to node:tls: `require` (and so every `require("https")`
// or `"http2"`, which load it), `process.getBuiltinModule`, the bundle's `import()` (the bin
// asks `beforeImport`), and the global `fetch` (node's undici, which loads node:tls inside).
// Where one of those could already have been passed or cannot be watched (a preload loaded
// node:tls, node's WebSocket or EventSource is turned on, a long-lived service that imports ES
// modules from outside the bundle), the certificates are trusted at once.
"use strict";

const TLS_MODULES = new Set(["tls", "node:tls", "https", "node:https", "http2", "node:http2"]);
/** Services: their start-up time does not matter, and they import ES modules from outside the bundle. */
const SERVICES = new Set(["serve", "dashboard"]);

let file;
let trusted = false;

/** Puts NODE_EXTRA_CA_CERTS back and watches for the first TLS use; called once, at start. */
function restore(moved, command) {
  file = moved;
  process.env.NODE_EXTRA_CA_CERTS = moved;
  if (
    SERVICES.has(command) ||
    process.moduleLoadList.includes("NativeModule tls") ||
    Object.getOwnPropertyDescriptor(globalThis, "WebSocket") ||
    Object.getOwnPropertyDescriptor(globalThis, "EventSource")
  ) {
    trust();
    return;
  }
  const Module = require("node:module");
  const load = Module._load;
  Module._load = function _load(request, ...rest) {
    if (!trusted && TLS_MODULES.has(request)) trust();
    return load.call(this, request, ...rest);
  };
  const getBuiltin = process.getBuiltinModule;
  if (typeof getBuiltin === "function")
    process.getBuiltinModule = function getBuiltinModule(id) {
      if (!trusted && TLS_MODULES.has(id)) trust();
      return getBuiltin.call(this, id);
    };
  const nodeFetch = globalThis.fetch;
  if (typeof nodeFetch === "function")
    globalThis.fetch = function fetch(input, init) {
      trust();
      return nodeFetch(input, init);
    };
}

/** For the bundle's `import()`: a TLS module is about to load. */
function beforeImport(id) {
  if (!trusted && TLS_MODULES.has(id)) trust();
}

/** The file's text; a file that cannot be read is warned of, as node does, and adds nothing. */
function fileText() {
  try {
    return require("node:fs").readFileSync(file, "latin1");
  } catch (error) {
    warn(error.code ?? error.message);
    return "";
  }
}

function warn(reason) {
  process.stderr.write(`Warning: Ignoring extra certs from \`${file}\`, load failed: ${reason}\n`);
}

// Every option node 20's createSecureContext reads (lib/_tls_common.js and
// lib/internal/tls/secure-context.js); a context asked for with none of them set is the same
// for every caller, so one is made and shared, as node shares its root store.
const CONTEXT_OPTIONS = [
  "ca",
  "allowPartialTrustChain",
  "cert",
  "ciphers",
  "clientCertEngine",
  "crl",
  "dhparam",
  "ecdhCurve",
  "honorCipherOrder",
  "key",
  "maxVersion",
  "minVersion",
  "passphrase",
  "pfx",
  "privateKeyEngine",
  "privateKeyIdentifier",
  "secureOptions",
  "secureProtocol",
  "sessionIdContext",
  "sessionTimeout",
  "sigalgs",
  "ticketKeys",
];

/** From now on, TLS contexts without a `ca` of their own trust the file's certificates too. */
function trust() {
  if (trusted) return;
  trusted = true;
  const tls = require("node:tls");
  const pem = fileText();
  // Node 24.5 and later: the default roots can be set.
  if (typeof tls.setDefaultCACertificates === "function") {
    try {
      const certificates = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
      tls.setDefaultCACertificates([...tls.rootCertificates, ...certificates]);
      return;
    } catch {}
  }
  if (!pem) return;
  const create = tls.createSecureContext;
  /**
   * A context as node makes it without `ca` (its bundled roots, parsed once for the process),
   * then the file's certificates added to its store as node adds them at start-up: read in
   * order up to the first block that is not one (node's AddCertsFromFile does the same).
   */
  const withFile = (options) => {
    const context = create(options);
    context.context.addCACert(pem);
    return context;
  };
  const sharable = process.versions.node.split(".")[0] === "20";
  /** The shared context and the defaults it was made under. */
  let shared;
  tls.createSecureContext = function createSecureContext(options) {
    if (options?.ca) return create(options);
    if (sharable && !CONTEXT_OPTIONS.some((o) => options?.[o] !== undefined)) {
      // The module's defaults, which a program may change at any time, are read at each call.
      const defaults = `${tls.DEFAULT_MIN_VERSION}\0${tls.DEFAULT_MAX_VERSION}\0${tls.DEFAULT_CIPHERS}\0${tls.DEFAULT_ECDH_CURVE}`;
      if (shared?.defaults !== defaults) shared = { defaults, context: withFile(options) };
      return shared.context;
    }
    return withFile(options);
  };
}

module.exports = { restore, beforeImport, trust };

// `hands acp`: serves one editor over stdin/stdout (newline-delimited JSON-RPC) until the
// editor closes stdin; every open session is then closed (sandboxes, session files, memory).
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { parseCliArgs, UsageError } from "../args.js";
import { handsAcpAgent } from "./agent.js";

export const ACP_HELP = `Usage: hands acp [options]

Runs Hands as an Agent Client Protocol agent on stdin/stdout, for editors that speak ACP
(Zed, JetBrains IDEs, Neovim plugins). The editor starts it; each session's folder is its
workspace, with folder trust, the sandbox and the command policy as in the CLI.

Session modes are Hands' approval modes (ask: the default; auto; read-only); a call that needs
a yes becomes a permission request in the editor (allow once / always / reject). Sessions are
saved and can be loaded again (hands sessions lists them).

  --terminal editor   run commands in the editor's terminal (ACP terminal/*), when it offers
                      one: unisolated, as you, after the same approvals and command policy;
                      default: sandbox (Hands' sandbox, as in the CLI)

Options: the model and run options of hands --help (--model, --base-url, --api-key, --provider,
--sandbox, --network, --approval, --max-steps, --max-tokens, --no-memory, --plan, …).
Nothing but the protocol goes to stdout; notices go to stderr.`;

export async function runAcpCommand(argv: string[]): Promise<number> {
  const rest: string[] = [];
  let terminal: "sandbox" | "editor" = "sandbox";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.startsWith("--terminal=") ? a.slice("--terminal=".length) : undefined;
    if (a !== "--terminal" && eq === undefined) {
      rest.push(a);
      continue;
    }
    const v = eq ?? argv[++i];
    if (v !== "sandbox" && v !== "editor")
      throw new UsageError(`--terminal takes sandbox or editor, got ${v ?? "nothing"}`);
    terminal = v;
  }
  const flags = parseCliArgs(rest);
  if (flags.task) throw new UsageError(`hands acp takes no task (the editor sends prompts): ${flags.task}`);
  const { app, closeAll } = handsAcpAgent({
    flags,
    env: process.env,
    log: (text) => process.stderr.write(text),
    terminal,
  });
  const output = Writable.toWeb(process.stdout) as WritableStream<Uint8Array>;
  const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
  const connection = app.connect(ndJsonStream(output, input));
  await connection.closed.catch(() => {});
  await closeAll();
  return 0;
}

// `hands dashboard [--port N] [--no-open] [--serve URL]`: starts the dashboard, prints its URL
// and the file that holds its one-time link, and gives the browser that file (never the token on
// a command line, which any user can read in /proc); runs until interrupted.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import { startDashboard } from "./server.js";

export const DASHBOARD_HELP = `Usage: hands dashboard [options]

A local web app over this machine's runs, sessions, memory, sandboxes and evals. It listens on
127.0.0.1 only. It is opened through a one-time link kept in a file only you can read (printed,
and given to the browser): the first browser to follow it signs in, the link is then used up,
and other users of the machine cannot read the dashboard.

  --port N        port to listen on (default: a free one)
  --no-open       print where the link is, do not open a browser
  --serve URL     a running hands serve's API (default: $E2B_API_URL), for the sandboxes page;
                  its key comes from $E2B_API_KEY`;

export class DashboardUsageError extends Error {}

function openBrowser(url: string): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No browser opener: the printed URL is enough.
  }
}

export async function runDashboardCommand(
  argv: string[],
  context: { dataDir: string; out?: (s: string) => void; env?: NodeJS.ProcessEnv; signal?: AbortSignal },
): Promise<number> {
  const out = context.out ?? ((s: string) => process.stdout.write(s));
  const env = context.env ?? process.env;
  let values: { port?: string; "no-open"?: boolean; serve?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        "no-open": { type: "boolean" },
        serve: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new DashboardUsageError(`${(err as Error).message}\n\n${DASHBOARD_HELP}`);
  }
  if (values.help) {
    out(`${DASHBOARD_HELP}\n`);
    return 0;
  }
  let port = 0;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port < 1 || port > 65535)
      throw new DashboardUsageError("--port must be a whole number from 1 to 65535");
  }
  const serveUrl = values.serve ?? env.E2B_API_URL;
  const apiKey = env.E2B_API_KEY;
  if (values.serve && !apiKey)
    throw new DashboardUsageError("--serve needs the service's API key in E2B_API_KEY");
  const dash = await startDashboard({
    dataDir: context.dataDir,
    port,
    ...(serveUrl && apiKey ? { serve: { url: serveUrl, apiKey } } : {}),
  });
  out(
    `Dashboard: ${dash.url}\nOpen it with: ${dash.openFile.url}\n(a one-time link, only for you; data: ${context.dataDir}; Ctrl-C stops it)\n`,
  );
  if (!values["no-open"]) openBrowser(dash.openFile.url);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    context.signal?.addEventListener("abort", stop, { once: true });
  });
  await dash.close();
  return 0;
}

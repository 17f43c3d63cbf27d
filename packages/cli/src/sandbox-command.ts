// `hands sandbox ls|exec|rm|prune|doctor|image|package-index|build-image`: look after sandbox sessions from outside the
// agent. Docker sessions are containers labelled hands.session; bwrap sessions live inside
// the hands process that made them (their cgroups show them here, and rm can end them).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import {
  buildImage,
  buildPackageIndex,
  checkDocker,
  createSandbox,
  dockerClient,
  LABEL_SESSION,
  listCgroups,
  reapLeftovers,
} from "@hands/sandbox/backends";
import { shellJoin } from "@hands/sandbox/base";
import { packageIndexDir, resolveSandboxKind } from "@hands/sdk/root";
import { UsageError } from "./args.js";
import { SANDBOX_HELP } from "./command-help.js";
import { durationMs } from "./duration.js";

export { SANDBOX_HELP };

type Out = (s: string) => void;

async function dockerUp(): Promise<boolean> {
  return (await checkDocker()).ok;
}

async function ls(out: Out): Promise<number> {
  const rows: string[] = [];
  if (await dockerUp()) {
    const docker = await dockerClient();
    for (const c of await docker.listContainers({ all: true, filters: { label: [LABEL_SESSION] } })) {
      rows.push(
        `${c.Labels[LABEL_SESSION]}\tdocker\t${c.State}\t${c.Labels["hands.created_at"] ?? ""}\t${c.Id.slice(0, 12)}`,
      );
    }
  }
  const seen = new Set<string>();
  for (const dir of listCgroups()) {
    const id = basename(dir);
    if (seen.has(id)) continue;
    seen.add(id);
    let procs = "";
    try {
      procs = readFileSync(`${dir}/cgroup.procs`, "utf8").trim();
    } catch {
      // gone
    }
    rows.push(`${id}\tbwrap\t${procs ? "running" : "empty"}\t\t${procs.split("\n").length} processes`);
  }
  out(rows.length ? `SESSION\tKIND\tSTATE\tCREATED\tDETAIL\n${rows.join("\n")}\n` : "no sandbox sessions\n");
  return 0;
}

async function rm(ids: string[], out: Out, err: Out): Promise<number> {
  if (ids.length === 0) {
    err("hands sandbox rm: give one or more session ids (see hands sandbox ls)\n");
    return 2;
  }
  let code = 0;
  for (const id of ids) {
    let done = false;
    if (await dockerUp()) {
      const docker = await dockerClient();
      for (const c of await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_SESSION}=${id}`] },
      })) {
        await docker.getContainer(c.Id).remove({ force: true });
        done = true;
      }
    }
    for (const dir of listCgroups().filter((d) => basename(d) === id)) {
      try {
        for (const pid of readFileSync(`${dir}/cgroup.procs`, "utf8").split("\n").filter(Boolean))
          process.kill(Number(pid), "SIGKILL");
        done = true;
      } catch {
        // gone already
      }
    }
    if (done) out(`removed ${id}\n`);
    else {
      err(`hands sandbox rm: no session ${id}\n`);
      code = 1;
    }
  }
  await reapLeftovers({ docker: false });
  return code;
}

async function exec(argv: string[], out: Out, err: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      sandbox: { type: "string" },
      session: { type: "string" },
      network: { type: "string" },
      template: { type: "string" },
    },
  });
  // The program and its arguments exactly as given (`-- sh -c "a; b"`, `-- printf 'a\nb\n'`).
  const argvOfCommand = positionals;
  if (argvOfCommand.length === 0 || argvOfCommand[0] === "") {
    err("hands sandbox exec: give a command after -- (for a shell line: -- sh -c 'a; b')\n");
    return 2;
  }
  if (values.session) {
    if (!(await dockerUp())) {
      err(
        "hands sandbox exec --session: only docker sessions can be reached from outside, and no Docker Engine answers\n",
      );
      return 1;
    }
    const docker = await dockerClient();
    const [c] = await docker.listContainers({ filters: { label: [`${LABEL_SESSION}=${values.session}`] } });
    if (!c) {
      err(`hands sandbox exec: no running docker session ${values.session}\n`);
      return 1;
    }
    const e = await docker
      .getContainer(c.Id)
      .exec({ Cmd: argvOfCommand, AttachStdout: true, AttachStderr: true });
    const stream = await e.start({ hijack: true, stdin: false });
    docker.modem.demuxStream(stream, process.stdout, process.stderr);
    await new Promise((r) => stream.once("end", r));
    return (await e.inspect()).ExitCode ?? 1;
  }
  const kind = resolveSandboxKind(values.sandbox ?? "auto", err);
  const template = values.template ? await templateOptions(values.template, kind) : {};
  const sb = await createSandbox({
    kind,
    workspace: process.cwd(),
    ...(kind === "local" ? {} : { network: values.network === "host" ? "host" : "none" }),
    ...(template.image ? { image: template.image } : {}),
    ...(template.rootfs ? { rootfs: template.rootfs } : {}),
  });
  try {
    if (template.start)
      await (await import("@hands/sandbox/backends")).startTemplateCommand(sb, template.start);
    // The sandbox runs a command line: each argument quoted, so the shell passes it on unchanged.
    // A workdir outside the workspace is not a cwd the sandbox takes: the line starts there.
    const line = shellJoin(argvOfCommand);
    const r = await sb.exec(template.workdir ? `cd ${shellJoin([template.workdir])} && ${line}` : line, {
      onStdout: out,
      onStderr: err,
      timeoutMs: 10 * 60_000,
    });
    if (r.timedOut) err("hands sandbox exec: timed out\n");
    if (r.oomKilled) err("hands sandbox exec: killed for using too much memory\n");
    return r.exitCode ?? 1;
  } finally {
    await sb.destroy();
  }
}

/** A template's image (docker) or root filesystem (bwrap) as sandbox options. */
async function templateOptions(
  name: string,
  kind: string,
): Promise<{ image?: string; rootfs?: string; workdir?: string; start?: string }> {
  const { findTemplate } = await import("@hands/sandbox/backends");
  const { templatesDir } = await import("./template-command.js");
  const t = findTemplate(templatesDir(), name);
  const extra = {
    ...(t.recipe.workdir ? { workdir: t.recipe.workdir } : {}),
    ...(t.recipe.start ? { start: t.recipe.start } : {}),
  };
  if (kind === "docker") return { image: t.image, ...extra };
  if (kind === "bwrap") return { rootfs: t.rootfs, ...extra };
  throw new UsageError(`--template works with the docker and bwrap backends, not ${kind}`);
}

/** `image --list`: what the backend's image has, probed inside a real sandbox of it. */
async function image(argv: string[], out: Out, err: Out): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { list: { type: "boolean" }, sandbox: { type: "string" }, json: { type: "boolean" } },
  });
  if (!values.list) {
    err("hands sandbox image: give --list (what the image has: languages, tools, Python libraries)\n");
    return 2;
  }
  const kind = values.sandbox ?? "docker";
  if (kind !== "docker" && kind !== "bwrap")
    throw new UsageError(`--sandbox must be docker or bwrap, got "${kind}"`);
  if (kind === "docker" && !(await dockerUp())) {
    err(`hands sandbox image: ${(await checkDocker()).reason}\n`);
    return 1;
  }
  const { listImageRuntimes, imageTag } = await import("@hands/sandbox/backends");
  const ws = mkdtempSync(join(tmpdir(), "hands-image-list-"));
  try {
    const sb = await createSandbox({ kind, workspace: ws, network: "none" });
    try {
      const runtimes = await listImageRuntimes(sb);
      const what = kind === "docker" ? imageTag() : "the host's /usr (bwrap binds it read-only)";
      if (values.json) {
        out(`${JSON.stringify({ backend: kind, image: what, runtimes }, null, 2)}\n`);
        return 0;
      }
      const lines = [`${what} (${kind})`];
      for (const [k, title] of [
        ["language", "languages"],
        ["tool", "tools"],
        ["python-library", "Python libraries"],
      ] as const) {
        lines.push(title);
        const rows = runtimes.filter((r) => r.kind === k);
        const w = Math.max(...rows.map((r) => r.name.length));
        for (const r of rows) lines.push(`  ${r.name.padEnd(w)}  ${r.version ?? "— not installed"}`);
      }
      out(`${lines.join("\n")}\n`);
      return 0;
    } finally {
      await sb.destroy();
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

export async function runSandboxCommand(argv: string[]): Promise<number> {
  const out: Out = (s) => process.stdout.write(s);
  const err: Out = (s) => process.stderr.write(s);
  const [sub, ...rest] = argv;
  try {
    switch (sub) {
      case "ls":
        return await ls(out);
      case "exec":
        return await exec(rest, out, err);
      case "rm":
        return await rm(rest, out, err);
      case "prune": {
        const { values } = parseArgs({ args: rest, options: { "max-age": { type: "string" } } });
        const age = values["max-age"];
        // A bare number is minutes, as it always was.
        const maxAgeMs = age === undefined ? undefined : durationMs(age, "--max-age", 60_000);
        const r = await reapLeftovers({
          docker: await dockerUp(),
          ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
        });
        out(
          `removed ${r.containers.length} containers, ${r.cgroups} cgroups, ${r.tempDirs.length} temp folders\n`,
        );
        return 0;
      }
      case "image":
        return await image(rest, out, err);
      case "template":
        return await (await import("./template-command.js")).runTemplateCommand(rest, out, err);
      case "package-index": {
        const { values } = parseArgs({ args: rest, options: { force: { type: "boolean" } } });
        out(`${await buildPackageIndex(packageIndexDir(), { force: values.force ?? false, log: err })}\n`);
        return 0;
      }
      case "doctor":
        return await (await import("./doctor-command.js")).runDoctor(rest, out, err);
      case "build-image": {
        const { values } = parseArgs({ args: rest, options: { force: { type: "boolean" } } });
        if (!(await dockerUp())) {
          err(`hands sandbox build-image: ${(await checkDocker()).reason}\n`);
          return 1;
        }
        const tag = await buildImage({ force: values.force ?? false, log: err });
        out(`${tag}\n`);
        // The index a failed command's diagnosis reads: which package provides a program or library.
        out(`${await buildPackageIndex(packageIndexDir(), { force: values.force ?? false, log: err })}\n`);
        return 0;
      }
      case undefined:
      case "-h":
      case "--help":
      case "help":
        out(`${SANDBOX_HELP}\n`);
        return sub === undefined ? 2 : 0;
      default:
        err(`hands sandbox: unknown command "${sub}"\n${SANDBOX_HELP}\n`);
        return 2;
    }
  } catch (e) {
    err(`hands sandbox ${sub}: ${(e as Error).message}\n`);
    // A mistake in the arguments (parseArgs' own errors included) is a usage error.
    return e instanceof UsageError || (e as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  }
}

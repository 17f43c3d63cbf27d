// `hands sandbox template build|list|rm`: local templates (the base image plus a recipe), built
// from the command line's own flags or a recipe file the user names — trusted input, never a
// project's .hands/config.json (a recipe runs as root at build time).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  buildTemplate,
  checkDocker,
  listTemplates,
  parseRecipe,
  removeTemplate,
} from "@hands/sandbox/backends";
import { templatesDir } from "@hands/sdk/root";
import { UsageError } from "./args.js";

type Out = (s: string) => void;

/** Where templates live: the composition root's rule (sandbox-setup.ts), shared with `hands --template`. */
export { templatesDir } from "@hands/sdk/root";

export async function runTemplateCommand(argv: string[], out: Out, err: Out): Promise<number> {
  const [sub, ...rest] = argv;
  const dir = templatesDir();
  switch (sub) {
    case "build": {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          apt: { type: "string", multiple: true },
          pip: { type: "string", multiple: true },
          npm: { type: "string", multiple: true },
          run: { type: "string", multiple: true },
          file: { type: "string", multiple: true },
          workdir: { type: "string" },
          start: { type: "string" },
          recipe: { type: "string" },
          force: { type: "boolean" },
        },
      });
      const name = positionals[0];
      if (!name || positionals.length > 1)
        throw new UsageError(
          "template build NAME [--apt PKG]... [--pip PKG]... [--npm PKG]... [--file FROM:TO]... [--run LINE]... [--workdir DIR] [--start LINE] [--recipe FILE]",
        );
      const fromFile = values.recipe
        ? (JSON.parse(readFileSync(values.recipe, "utf8")) as Record<string, unknown>)
        : {};
      // A recipe file's relative `from` paths are its folder's; --file FROM:TO are the cwd's.
      if (values.recipe && Array.isArray(fromFile.files))
        fromFile.files = fromFile.files.map((f: Record<string, unknown>) =>
          f && typeof f.from === "string"
            ? { ...f, from: resolve(dirname(values.recipe as string), f.from) }
            : f,
        );
      const files = (values.file ?? []).map((spec) => {
        const at = spec.lastIndexOf(":");
        if (at <= 0) throw new UsageError(`--file FROM:TO (got ${spec})`);
        return { from: resolve(spec.slice(0, at)), to: spec.slice(at + 1) };
      });
      const recipe = parseRecipe({
        ...fromFile,
        ...(values.apt ? { apt: values.apt } : {}),
        ...(values.pip ? { pip: values.pip } : {}),
        ...(values.npm ? { npm: values.npm } : {}),
        ...(values.run ? { commands: values.run } : {}),
        ...(files.length ? { files } : {}),
        ...(values.workdir ? { workdir: values.workdir } : {}),
        ...(values.start ? { start: values.start } : {}),
      });
      const docker = await checkDocker();
      if (!docker.ok) {
        err(`hands sandbox template build: ${docker.reason}\n`);
        return 1;
      }
      const t0 = Date.now();
      const t = await buildTemplate(dir, name, recipe, { log: err, force: values.force ?? false });
      out(
        `${t.name} ${t.image} ${t.cached ? "cached" : "built"} in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`,
      );
      return 0;
    }
    case "list":
    case "ls": {
      const json = rest.includes("--json");
      const all = listTemplates(dir);
      if (json) out(`${JSON.stringify(all, null, 2)}\n`);
      else if (all.length === 0) out("no templates (hands sandbox template build NAME --apt PKG)\n");
      else
        for (const t of all)
          out(
            `${t.name}\t${t.image}\t${[...(t.recipe.apt ?? []), ...(t.recipe.pip ?? []), ...(t.recipe.npm ?? [])].join(" ")}\n`,
          );
      return 0;
    }
    case "rm": {
      if (rest.length === 0) throw new UsageError("template rm NAME...");
      for (const n of rest) await removeTemplate(dir, n);
      return 0;
    }
    default:
      throw new UsageError("hands sandbox template build|list|rm");
  }
}

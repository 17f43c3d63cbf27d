// `hands sandbox template build|list|rm`: local templates (the base image plus a recipe), built
// from the command line's own flags or a recipe file the user names — trusted input, never a
// project's .hands/config.json (a recipe runs as root at build time).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  buildTemplate,
  checkDocker,
  listTemplates,
  parseRecipe,
  removeTemplate,
} from "@hands/sandbox/backends";
import { packageIndexDir } from "@hands/sdk/root";
import { UsageError } from "./args.js";

type Out = (s: string) => void;

/**
 * Where templates' root filesystems and names live. As root, bwrap sandboxes run as an
 * unprivileged host user (host-user.ts) who cannot enter the private data folder: then a
 * world-readable /var/lib/hands/templates (a root filesystem holds nothing secret).
 */
export function templatesDir(): string {
  const set = process.env["HANDS_TEMPLATES_DIR"];
  if (set) return set;
  if (process.getuid?.() === 0) return "/var/lib/hands/templates";
  return join(packageIndexDir(), "..", "templates");
}

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
          recipe: { type: "string" },
          force: { type: "boolean" },
        },
      });
      const name = positionals[0];
      if (!name || positionals.length > 1)
        throw new UsageError("template build NAME [--apt PKG]... [--recipe FILE]");
      const fromFile = values.recipe
        ? (JSON.parse(readFileSync(values.recipe, "utf8")) as Record<string, unknown>)
        : {};
      const recipe = parseRecipe({
        ...fromFile,
        ...(values.apt ? { apt: values.apt } : {}),
        ...(values.pip ? { pip: values.pip } : {}),
        ...(values.npm ? { npm: values.npm } : {}),
        ...(values.run ? { commands: values.run } : {}),
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

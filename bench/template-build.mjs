// Times a local template build (`hands sandbox template build`): cold (a recipe never built on
// this machine: a unique marker command makes its hash new) and cached (the same recipe again),
// then a one-shot sandbox of it on docker and bwrap. Usage: node bench/template-build.mjs [apt-pkg program]
// Needs the base image (hands sandbox build-image) and root. Removes what it built.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const pkg = process.argv[2] ?? "cowsay";
const program = process.argv[3] ?? "/usr/games/cowsay";
const bin = new URL("../packages/cli/dist/main.js", import.meta.url).pathname;
const name = `bench-${Date.now()}`;
const ws = mkdtempSync(join(tmpdir(), "hands-template-bench-"));
const hands = (...args) =>
  execFileSync(process.execPath, [bin, "sandbox", ...args], {
    cwd: ws,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
const time = (f) => {
  const t = performance.now();
  const out = f();
  return { s: (performance.now() - t) / 1000, out };
};
try {
  console.log(
    `load before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const build = ["template", "build", name, "--apt", pkg, "--run", `echo ${name} > /etc/hands-bench`];
  const cold = time(() => hands(...build));
  const cached = time(() => hands(...build));
  const docker = time(() => hands("exec", "--sandbox", "docker", "--template", name, "--", program));
  const bwrap = time(() => hands("exec", "--sandbox", "bwrap", "--template", name, "--", program));
  console.log(`cold build ${cold.s.toFixed(1)}s: ${cold.out.trim()}`);
  console.log(`cached build ${cached.s.toFixed(1)}s: ${cached.out.trim()}`);
  console.log(`exec on docker ${docker.s.toFixed(1)}s (${docker.out.length} bytes of output)`);
  console.log(`exec on bwrap ${bwrap.s.toFixed(1)}s (${bwrap.out.length} bytes of output)`);
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  try {
    hands("template", "rm", name);
  } catch {}
  rmSync(ws, { recursive: true, force: true });
}

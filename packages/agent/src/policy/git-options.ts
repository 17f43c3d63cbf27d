// What git's options make it run or write: `-c key=value` settings whose value is a command
// (core.pager, core.sshCommand, alias.x=!…) or that load code (core.hooksPath, include.path),
// `-C`, `--exec-path`, `--output`, `format-patch -o`, `rebase --exec`, `bisect run`, `submodule
// foreach`, `difftool --extcmd`, `filter-branch` filters, `--upload-pack`, `ext::` URLs,
// `config --global`, and subcommands that may be aliases.
import { flag, operandsOf, valueAt } from "./program-args.js";
import type { Knowledge } from "./programs.js";

const write = (k: Knowledge, paths: string[], by: string, recursive = false) => {
  for (const path of paths) k.effects.push({ kind: "write", path, recursive, by });
};

/** git settings whose value is a command git runs. */
const GIT_COMMAND_KEY =
  /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|sequence\.editor|diff\.external|pager\..+|alias\..+|.+\.(cmd|command|program|textconv|clean|smudge|process|helper|extcmd|sshcommand)|credential\.helper|gpg\.program|interactive\.difffilter)$/i;
/** git settings that make it run code from elsewhere (hooks, included files, transports). */
const GIT_CODE_KEY =
  /^(core\.hookspath|include\..+|includeif\..+|protocol\..+|uploadpack\..+|receivepack\..+|remote\..+\.(uploadpack|receivepack|vcs))$/i;

const GIT_SUBCOMMANDS = new Set(
  "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore checkout cherry cherry-pick citool clean clone commit commit-graph commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool fetch filter-branch for-each-ref format-patch fsck gc grep gui hash-object help init instaweb log ls-files ls-remote ls-tree maintenance merge merge-base merge-file mergetool mktag mktree mv name-rev notes prune pull push range-diff read-tree rebase reflog remote repack replace request-pull rerere reset restore rev-list rev-parse revert rm send-email shortlog show show-branch show-ref sparse-checkout stash status submodule switch symbolic-ref tag update-index update-ref var verify-commit verify-pack verify-tag version whatchanged worktree write-tree lfs".split(
    " ",
  ),
);

function gitSetting(kv: string, k: Knowledge, by: string): void {
  const eq = kv.indexOf("=");
  const key = eq === -1 ? kv : kv.slice(0, eq);
  const value = eq === -1 ? "" : kv.slice(eq + 1);
  k.risky.push(by);
  if (GIT_COMMAND_KEY.test(key)) {
    const cmd = value.replace(/^!/, "");
    if (/^alias\./i.test(key) && !value.startsWith("!")) return;
    if (cmd && !/^(true|false|yes|no|on|off|[01])$/i.test(cmd))
      k.runs.push({ code: cmd, label: `${by} ${key}` });
  } else if (GIT_CODE_KEY.test(key)) k.opaque.push(`${by} ${key} makes git run code from elsewhere`);
}

export function git(args: string[], k: Knowledge): { cwd?: string } {
  let i = 0;
  let cwd: string | undefined;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("-")) break;
    const c = valueAt(args, i, ["c"], ["config"]);
    if (c) {
      gitSetting(c[0], k, "git -c");
      i += c[1] - 1;
      continue;
    }
    const C = valueAt(args, i, ["C"], []);
    if (C) {
      k.risky.push("git -C");
      cwd = cwd === undefined || C[0].startsWith("/") || C[0].startsWith("~") ? C[0] : `${cwd}/${C[0]}`;
      i += C[1] - 1;
      continue;
    }
    if (/^--exec-path=/.test(a)) k.opaque.push("git --exec-path runs git's programs from another folder");
    const other = valueAt(args, i, [], ["git-dir", "work-tree", "namespace", "config-env", "super-prefix"]);
    if (other) {
      k.risky.push(`git ${a.split("=")[0]}`);
      if (/^--config-env/.test(a)) k.opaque.push("git --config-env sets options from the environment");
      i += other[1] - 1;
    }
  }
  const sub = args[i];
  const rest = args.slice(i + 1);
  if (sub === undefined) return cwd !== undefined ? { cwd } : {};
  if (!GIT_SUBCOMMANDS.has(sub)) k.risky.push(`git ${sub} (an alias or a git-${sub} program)`);
  if (sub.includes("\u0000")) k.opaque.push("git runs a subcommand (or an alias) named only at run time");
  for (let j = 0; j < rest.length; j++) {
    const a = rest[j]!;
    const out = valueAt(rest, j, [], ["output"]);
    if (out) {
      write(k, [out[0]], `git ${sub} --output`);
      k.risky.push(`git ${sub} --output`);
    }
    if (/^--(ext-diff|textconv)$/.test(a)) k.risky.push(`git ${sub} ${a}`);
    const pack = valueAt(rest, j, sub === "clone" || sub === "fetch" || sub === "pull" ? ["u"] : [], [
      "upload-pack",
      "receive-pack",
      "exec",
    ]);
    if (pack && sub !== "rebase") {
      k.runs.push({ code: pack[0], label: `git ${sub} ${a.split("=")[0]}` });
      k.risky.push(`git ${sub} ${a.split("=")[0]}`);
    }
    if (/^ext::/.test(a) || /^-c$/.test(a) || /^--config=?/.test(a)) {
      if (/^ext::/.test(a)) k.opaque.push("git's ext:: transport runs a command");
      else if (sub === "clone" || sub === "submodule") {
        const v = valueAt(rest, j, ["c"], ["config"]);
        if (v) gitSetting(v[0], k, `git ${sub} -c`);
      }
    }
    if (/^--template(=|$)/.test(a)) k.opaque.push(`git ${sub} --template installs hooks from another folder`);
  }
  const ops = operandsOf(
    rest,
    ["o", "x", "u", "b", "m", "C", "c", "S", "F", "t"],
    ["output-directory", "exec", "upload-pack", "depth", "branch", "origin", "config"],
  );
  switch (sub) {
    case "format-patch":
      for (let j = 0; j < rest.length; j++) {
        const o = valueAt(rest, j, ["o"], ["output-directory"]);
        if (o) write(k, [o[0]], "git format-patch -o", true);
      }
      break;
    case "rebase":
      for (let j = 0; j < rest.length; j++) {
        const x = valueAt(rest, j, ["x"], ["exec"]);
        if (x) {
          k.runs.push({ code: x[0], label: "git rebase --exec" });
          k.risky.push("git rebase --exec");
        }
      }
      break;
    case "bisect":
      if (rest[0] === "run" && rest.length > 1) {
        k.runs.push({ words: rest.slice(1), label: "git bisect run" });
        k.risky.push("git bisect run");
      }
      break;
    case "submodule": {
      const f = rest.indexOf("foreach");
      if (f !== -1) {
        const cmd = rest.slice(f + 1).filter((a, n) => n > 0 || !a.startsWith("-"));
        if (cmd.length) k.runs.push({ code: cmd.join(" "), label: "git submodule foreach" });
        k.risky.push("git submodule foreach");
      }
      break;
    }
    case "difftool":
    case "mergetool":
      for (let j = 0; j < rest.length; j++) {
        const x = valueAt(rest, j, ["x"], ["extcmd"]);
        if (x) k.runs.push({ code: x[0], label: `git ${sub} --extcmd` });
      }
      k.risky.push(`git ${sub}`);
      break;
    case "filter-branch":
      for (let j = 0; j < rest.length; j++)
        if (/^--(.*-filter|setup)$/.test(rest[j]!) && rest[j + 1] !== undefined)
          k.runs.push({ code: rest[j + 1]!, label: `git filter-branch ${rest[j]}` });
      k.risky.push("git filter-branch");
      break;
    case "config": {
      if (flag(rest, "", ["global", "system"])) write(k, ["~/.gitconfig"], "git config --global");
      for (let j = 0; j < rest.length; j++) {
        const f = valueAt(rest, j, ["f"], ["file"]);
        if (f) write(k, [f[0]], "git config --file");
      }
      const reading = flag(rest, "l", [
        "get",
        "get-all",
        "get-regexp",
        "list",
        "unset",
        "unset-all",
        "show-origin",
      ]);
      const key = ops[0];
      if (!reading && key && ops.length >= 2 && (GIT_COMMAND_KEY.test(key) || GIT_CODE_KEY.test(key)))
        k.opaque.push(`git config ${key} makes later git commands run a command`);
      if (!reading) k.risky.push("git config sets an option");
      break;
    }
    case "clone":
      if (ops[1] !== undefined) write(k, [ops[1]], "git clone", true);
      break;
    case "worktree":
      if (ops[0] === "add" && ops[1] !== undefined) write(k, [ops[1]], "git worktree add", true);
      break;
  }
  return cwd !== undefined ? { cwd } : {};
}

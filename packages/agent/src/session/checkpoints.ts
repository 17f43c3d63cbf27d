// Per-turn checkpoints for /undo and /diff. With git installed, a shadow repository that Hands
// owns snapshots the whole workspace before each turn (files changed by commands included, kept
// on disk across resumes: see git-checkpoints.ts); without git, the files the file tools write
// are saved in memory (this process only).
import { hasGit } from "./git.js";
import { GitCheckpoints } from "./git-checkpoints.js";
import { MemoryCheckpoints } from "./memory-checkpoints.js";

export interface UndoResult {
  /** The request whose changes were undone. */
  label: string;
  /** Workspace paths put back as they were before it (restored, re-created or deleted). */
  paths: string[];
  /** Paths it changed that were left alone, and why. */
  kept: { path: string; why: string }[];
}

export interface TurnCheckpoints {
  /** "git": every file, kept across resumes; "memory": files of the file tools, this process only. */
  readonly kind: "git" | "memory";
  /** A new turn (one per request) starts; its snapshot may finish in the background. */
  begin(label: string): void;
  /** Resolves when it is safe to change files (the turn's snapshot is taken); `abs` is a write's target. */
  beforeChange(abs?: string): Promise<void>;
  /** The turn ended: records its end state (never rejects). */
  end(): Promise<void>;
  /** Puts back the files of the newest turn that changed any, and forgets that turn. */
  undo(): Promise<UndoResult | undefined>;
  /** A unified diff of everything changed since the session's first checkpoint. */
  diff(): Promise<string>;
  /** Waits for background work. */
  close(): Promise<void>;
}

export interface CheckpointOptions {
  workspace: string;
  /** Folder for the shadow repositories (one per workspace, shared by its sessions). */
  dir: string;
  sessionId: string;
  /** Told about checkpoints that could not be taken (the turn goes on). */
  onWarning?: (message: string) => void;
}

/** Git checkpoints when git is installed, in-memory ones otherwise. */
export async function openCheckpoints(opts: CheckpointOptions): Promise<TurnCheckpoints> {
  return (await hasGit()) ? new GitCheckpoints(opts) : new MemoryCheckpoints(opts.workspace);
}

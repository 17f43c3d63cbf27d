// The graph of which files use which files' definitions, kept up to date file by file: an edit
// re-links the edited file and the files that use a name whose weight the edit changed (a name
// it began or stopped defining, or began or stopped using), not the whole workspace. File A
// links to file B for each name A uses that B defines, weighted by how telling the name is
// (nameWeight), how often A uses it (square root) and how few files use it (rarity).
//   Files keep their slot for the graph's life (a removed file leaves an empty one), so an
// update never renumbers the others. Rarity is measured against the file count of the last
// full build (`scale`), not the current one: otherwise every file's links would change with
// each file added; the graph is built again in full when the count has moved 10% from it.
import type { Definition, FileTags } from "./tags.js";

/** Names defined in more files than this are too generic to link files (`get`, `constructor`). */
const MAX_DEFINERS = 12;
/** A full build instead of an update when this share of the files changed, or this many names. */
const REBUILD_SHARE = 0.1;
const REBUILD_NAMES = 2000;

/** How much a use of `name` says about a link between two files. */
function nameWeight(name: string, definers: number): number {
  let w = 1;
  // Long or compound names (`parseOutline`, `repo_map`) are specific; `run` or `map` are not.
  if (name.length >= 8 || /[a-z][A-Z]|_[a-z]/.test(name)) w *= 3;
  if (name.startsWith("_")) w *= 0.2;
  if (definers > 5) w *= 0.2;
  return w;
}

/** A definition other files can use: top level, or a member of a class or object. A function local to another is not. */
export function linkable(d: Definition): boolean {
  return d.depth === 0 || d.kind === "method";
}

function linkableNames(tags: FileTags | undefined): Set<string> {
  const names = new Set<string>();
  if (tags) for (const d of tags.defs) if (linkable(d)) names.add(d.name);
  return names;
}

/** A file's links to other files, and its uses of names that link (the weight of each use). */
export interface Links {
  to: Int32Array;
  weight: Float64Array;
  /** The names it uses that link (FileGraph.nameId), and the weight of each use. */
  uses: Int32Array;
  useWeights: Float64Array;
  /** Per definition of the file: its name's id (-1: not linkable), and the weight of the file's own use of it. */
  defNames: Int32Array;
  selfWeights: Float64Array;
}

const NO_LINKS: Links = {
  to: new Int32Array(0),
  weight: new Float64Array(0),
  uses: new Int32Array(0),
  useWeights: new Float64Array(0),
  defNames: new Int32Array(0),
  selfWeights: new Float64Array(0),
};

export class FileGraph {
  /** Slot → file (undefined: a removed file's slot). */
  readonly list: (string | undefined)[] = [];
  readonly id = new Map<string, number>();
  /** Slot → the tags the links were made from. */
  readonly tags: (FileTags | undefined)[] = [];
  /** Name → the slots that define it (linkable definitions). */
  readonly definers = new Map<string, number[]>();
  /** Name → how many files use it. */
  private readonly users = new Map<string, number>();
  /** Slot → its links (to other slots, summed per slot) and their total weight. */
  private links: Links[] = [];
  out = new Float64Array(0);
  private readonly free: number[] = [];
  /** The file count rarity is measured against (that of the last full build). */
  private scale = 1;
  /** Files in the graph. */
  size = 0;
  /** Every name seen → a number (for per-name arrays while ranking); never reused. */
  private readonly nameIds = new Map<string, number>();

  /** The number of `name`, made on first use. */
  nameId(name: string): number {
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.nameIds.size;
      this.nameIds.set(name, id);
    }
    return id;
  }

  /** Names numbered so far (the length of per-name arrays). */
  get names(): number {
    return this.nameIds.size;
  }

  /** The graph of `files` (path → tags), built in full. */
  static of(files: ReadonlyMap<string, FileTags>): FileGraph {
    const g = new FileGraph();
    g.build(files);
    return g;
  }

  /** Slots (live and empty): the length of per-slot arrays. */
  get slots(): number {
    return this.list.length;
  }

  linksOf(slot: number): Links {
    return this.links[slot] ?? NO_LINKS;
  }

  /** Changes with every build or update (what is worked out from the links is made again). */
  private version = 0;
  private flat: { version: number; start: Int32Array; to: Int32Array; share: Float64Array } | undefined;

  /**
   * All links in one array per field, by slot (slot i's are start[i]..start[i+1]), each with
   * its share of the file's total weight: PageRank's inner loop over them, made once per change.
   */
  transitions(): { start: Int32Array; to: Int32Array; share: Float64Array } {
    if (this.flat?.version === this.version) return this.flat;
    const slots = this.list.length;
    const start = new Int32Array(slots + 1);
    for (let i = 0; i < slots; i++) start[i + 1] = start[i]! + this.linksOf(i).to.length;
    const to = new Int32Array(start[slots]!);
    const share = new Float64Array(start[slots]!);
    for (let i = 0; i < slots; i++) {
      const l = this.linksOf(i);
      to.set(l.to, start[i]!);
      const o = this.out[i]!;
      for (let k = 0; k < l.weight.length; k++) share[start[i]! + k] = l.weight[k]! / o;
    }
    this.flat = { version: this.version, start, to, share };
    return this.flat;
  }

  /** The weight of one file's `count` uses of `name`, per file defining it (0: it links nothing). */
  useWeight(name: string, count: number): number {
    const at = this.definers.get(name);
    if (!at || at.length > MAX_DEFINERS) return 0;
    const rarity = Math.log(1 + this.scale / (this.users.get(name) ?? 1));
    return nameWeight(name, at.length) * Math.sqrt(count) * rarity;
  }

  private build(files: ReadonlyMap<string, FileTags>): void {
    this.list.length = 0;
    this.tags.length = 0;
    this.id.clear();
    this.definers.clear();
    this.users.clear();
    this.free.length = 0;
    for (const [file, tags] of files) {
      this.id.set(file, this.list.length);
      this.list.push(file);
      this.tags.push(tags);
      this.addNames(this.list.length - 1, tags);
    }
    this.size = this.list.length;
    this.scale = Math.max(1, this.size);
    this.version++;
    this.out = new Float64Array(this.list.length);
    this.links = new Array(this.list.length);
    for (let i = 0; i < this.list.length; i++) this.link(i);
  }

  private addNames(slot: number, tags: FileTags): void {
    for (const name of linkableNames(tags)) {
      const at = this.definers.get(name);
      if (at) at.push(slot);
      else this.definers.set(name, [slot]);
    }
    for (const name in tags.refs) this.users.set(name, (this.users.get(name) ?? 0) + 1);
  }

  /** Makes the links of `slot` from its tags. */
  private link(slot: number): void {
    const tags = this.tags[slot];
    if (!tags) {
      this.links[slot] = NO_LINKS;
      this.out[slot] = 0;
      return;
    }
    const toW = new Map<number, number>();
    const uses: number[] = [];
    const useWeights: number[] = [];
    const own = new Map<string, number>();
    let sum = 0;
    for (const name in tags.refs) {
      const w = this.useWeight(name, tags.refs[name]!);
      if (w === 0) continue;
      uses.push(this.nameId(name));
      useWeights.push(w);
      for (const j of this.definers.get(name)!) {
        if (j === slot) {
          own.set(name, w);
          continue;
        }
        toW.set(j, (toW.get(j) ?? 0) + w);
        sum += w;
      }
    }
    const defNames = new Int32Array(tags.defs.length).fill(-1);
    const selfWeights = new Float64Array(tags.defs.length);
    tags.defs.forEach((d, k) => {
      if (!linkable(d)) return;
      defNames[k] = this.nameId(d.name);
      selfWeights[k] = own.get(d.name) ?? 0;
    });
    const to = new Int32Array(toW.size);
    const weight = new Float64Array(toW.size);
    let k = 0;
    for (const [j, w] of toW) {
      to[k] = j;
      weight[k++] = w;
    }
    this.links[slot] = {
      to,
      weight,
      uses: Int32Array.from(uses),
      useWeights: Float64Array.from(useWeights),
      defNames,
      selfWeights,
    };
    this.out[slot] = sum;
  }

  /**
   * Brings the graph to `files` for the files in `changed` (added, changed or removed there);
   * returns false when it was built in full instead.
   */
  update(files: ReadonlyMap<string, FileTags>, changed: Iterable<string>): boolean {
    const rels = [...new Set(changed)];
    const live = this.size;
    if (rels.length > Math.max(8, live * REBUILD_SHARE)) {
      this.build(files);
      return false;
    }
    const touchedNames = new Set<string>();
    /** Names a changed file stopped defining (defined before the update, maybe not after). */
    const lost = new Set<string>();
    const relink = new Set<number>();
    for (const rel of rels) {
      const slot = this.id.get(rel);
      const before = slot === undefined ? undefined : this.tags[slot];
      const after = files.get(rel);
      if (before === after) continue;
      // Names whose definers changed, and names whose user count changed, change the weight of
      // every use of them: the files using them are linked again.
      const defsBefore = linkableNames(before);
      const defsAfter = linkableNames(after);
      for (const n of defsBefore)
        if (!defsAfter.has(n)) {
          touchedNames.add(n);
          lost.add(n);
        }
      for (const n of defsAfter) if (!defsBefore.has(n)) touchedNames.add(n);
      const refsBefore = before?.refs ?? {};
      const refsAfter = after?.refs ?? {};
      for (const n in refsBefore) if (!(n in refsAfter)) touchedNames.add(n);
      for (const n in refsAfter) if (!(n in refsBefore)) touchedNames.add(n);
      if (slot !== undefined && before) this.removeNames(slot, before, defsBefore);
      if (!after) {
        if (slot !== undefined) this.drop(rel, slot);
        continue;
      }
      const at = slot ?? this.place(rel);
      this.tags[at] = after;
      this.addNames(at, after);
      relink.add(at);
    }
    if (Math.abs(this.size - this.scale) > this.scale * REBUILD_SHARE || touchedNames.size > REBUILD_NAMES) {
      this.build(files);
      return false;
    }
    // Only names defined somewhere (now, or before the change) weigh anything.
    const weighing = [...touchedNames].filter((n) => this.definers.has(n) || lost.has(n));
    if (weighing.length > 0)
      for (let i = 0; i < this.list.length; i++) {
        const tags = this.tags[i];
        if (!tags || relink.has(i)) continue;
        for (const n of weighing)
          if (n in tags.refs) {
            relink.add(i);
            break;
          }
      }
    for (const i of relink) this.link(i);
    this.version++;
    return true;
  }

  private removeNames(slot: number, tags: FileTags, defs: Set<string>): void {
    for (const name of defs) {
      const at = this.definers.get(name);
      if (!at) continue;
      const k = at.indexOf(slot);
      if (k >= 0) at.splice(k, 1);
      if (at.length === 0) this.definers.delete(name);
    }
    for (const name in tags.refs) {
      const n = (this.users.get(name) ?? 1) - 1;
      if (n <= 0) this.users.delete(name);
      else this.users.set(name, n);
    }
  }

  private drop(rel: string, slot: number): void {
    this.id.delete(rel);
    this.list[slot] = undefined;
    this.tags[slot] = undefined;
    this.links[slot] = NO_LINKS;
    this.out[slot] = 0;
    this.free.push(slot);
    this.size--;
  }

  private place(rel: string): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.list.length;
      this.list.push(rel);
      this.tags.push(undefined);
      this.links.push(NO_LINKS);
      if (slot >= this.out.length) {
        const grown = new Float64Array(Math.max(16, this.out.length * 2));
        grown.set(this.out);
        this.out = grown;
      }
    } else this.list[slot] = rel;
    this.id.set(rel, slot);
    this.size++;
    return slot;
  }
}

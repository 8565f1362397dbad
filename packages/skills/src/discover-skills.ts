import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { join, sep } from "node:path";
import { isSameOrInside, isStrictlyInside, type ResolvedRoot, resolveRoot } from "@insomnia/safe-read";
import { parseSkill } from "./parse-skill.ts";
import { type IsReadable, MAX_SKILL_FILE_BYTES, readSkillFile } from "./read-skill-file.ts";
import { type SkillRoot, type SkillRootKind, skillRoots } from "./skill-roots.ts";
import { SkillsError, type SkillWarning, warningOf } from "./skills-error.ts";

/** Deepest directory level searched below a root (`<root>/<name>` is level 1). */
export const MAX_SKILL_DEPTH = 6;

/** Most directories searched per root. */
export const MAX_SKILL_DIRS = 2000;

/** The file a skill directory holds. */
export const SKILL_FILE = "SKILL.md";

/** One skill of the catalog. */
export interface Skill {
  readonly name: string;
  /** One line: trimmed, whitespace runs turned into single spaces. */
  readonly description: string;
  /** Real path of the SKILL.md. */
  readonly file: string;
  /** The root it was found in. */
  readonly root: SkillRootKind;
  /** Real path of that root. */
  readonly rootDir: string;
  /** Not listed in the prompt (`disable-model-invocation` or `brain-recall-only`); loadable by name. */
  readonly hidden: boolean;
  /** Hex SHA-256 of the file's text (BOM dropped, line ends LF), as a prompt source records it. */
  readonly sha256: string;
  /** Size of the file in bytes. */
  readonly bytes: number;
}

/** A skill hidden by one of the same name in a higher root (or found earlier in the same root). */
export interface ShadowedSkill {
  readonly name: string;
  readonly file: string;
  readonly root: SkillRootKind;
  /** The SKILL.md that won. */
  readonly shadowedBy: string;
}

/** Every skill a pod can use, sorted by name, with what was hidden and what went wrong. */
export interface SkillCatalog {
  /** Winners only, sorted by name (UTF-16 code units; names are ASCII). */
  readonly skills: readonly Skill[];
  readonly shadowed: readonly ShadowedSkill[];
  /** One per broken skill or problem root, in root order; each skill is left out, nothing else. */
  readonly warnings: readonly SkillWarning[];
}

/** Options of {@link discoverSkills}. */
export interface DiscoverSkillsOptions {
  /** The pod's working directory (absolute); the workspace roots are below it. */
  cwd: string;
  /** For the user roots (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
  /** The roots to search, highest first (default: {@link skillRoots} of `cwd` and `env`). */
  roots?: readonly SkillRoot[] | undefined;
  /**
   * The pod's readable scope: a workspace root and every skill file in it must be readable
   * (real paths). Default: inside the real path of `cwd`.
   */
  isReadable?: IsReadable | undefined;
  /** Limits, for tests: depth, directories per root, bytes per file. */
  limits?: { maxDepth?: number | undefined; maxDirs?: number | undefined; maxBytes?: number | undefined } | undefined;
}

interface Candidate {
  /** The directory's name (a skill's name must be it). */
  name: string;
  /** `<dir>/SKILL.md` as the walk reached it. */
  file: string;
}

/**
 * Finds `<root>/…/<name>/SKILL.md` in every root (at most 6 levels and 2,000 directories
 * each), parses and checks each, and returns the catalog. Lenient: a broken skill or
 * root is left out with a positioned warning; a name found twice keeps the higher root's.
 * Synchronous and never throws for anything on disk.
 */
export function discoverSkills(options: DiscoverSkillsOptions): SkillCatalog {
  const roots =
    options.roots ?? skillRoots({ cwd: options.cwd, ...(options.env === undefined ? {} : { env: options.env }) });
  const maxDepth = options.limits?.maxDepth ?? MAX_SKILL_DEPTH;
  const maxDirs = options.limits?.maxDirs ?? MAX_SKILL_DIRS;
  const maxBytes = options.limits?.maxBytes ?? MAX_SKILL_FILE_BYTES;
  const readable = options.isReadable ?? insideOf(options.cwd);

  const warnings: SkillWarning[] = [];
  const winners = new Map<string, Skill>();
  const shadowed: ShadowedSkill[] = [];
  const seenRoots = new Set<string>();

  for (const root of roots) {
    let rootDir: string;
    let resolved: ResolvedRoot;
    try {
      const found = resolveRoot(root.dir);
      if (!found.ok) throw found.cause;
      resolved = found.value;
      rootDir = resolved.real;
      if (!statSync(rootDir).isDirectory()) {
        warnings.push({
          code: "SKILLS_ROOT_UNREADABLE",
          message: `${root.dir} is not a directory; skills live in ${root.dir}/<name>/SKILL.md`,
          file: root.dir,
        });
        continue;
      }
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        warnings.push({
          code: "SKILLS_ROOT_UNREADABLE",
          message: `cannot read the skills directory ${root.dir} (${String(code ?? error)}); its skills were left out`,
          file: root.dir,
        });
      }
      continue;
    }
    // `<home>/.agents/skills` is both a workspace and a user root for a pod started in ~.
    if (seenRoots.has(rootDir)) continue;
    seenRoots.add(rootDir);
    if (root.workspace && !readable(rootDir)) {
      warnings.push({
        code: "SKILLS_ROOT_OUTSIDE_SCOPE",
        message: `${root.dir} resolves to ${rootDir}, which is outside the pod's readable scope; its skills were left out (is it a symlink?). Move the skills into the pod or allow reading that directory`,
        file: root.dir,
      });
      continue;
    }
    // Resolved once for the whole root: each SKILL.md is placed by its open descriptor's path.
    const rules = { rootDir, root: resolved, ...(root.workspace ? { isReadable: readable } : {}), maxBytes };
    for (const candidate of findCandidates(root.dir, rootDir, maxDepth, maxDirs, warnings)) {
      const skill = loadCandidate(candidate, root.kind, rules, warnings);
      if (skill === undefined) continue;
      const winner = winners.get(skill.name);
      if (winner === undefined) winners.set(skill.name, skill);
      else shadowed.push({ name: skill.name, file: skill.file, root: skill.root, shadowedBy: winner.file });
    }
  }
  const skills = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, shadowed, warnings };
}

/** Breadth-first, entries sorted, dot-directories skipped; a directory with a SKILL.md is a skill and is not descended. */
function findCandidates(
  dir: string,
  rootDir: string,
  maxDepth: number,
  maxDirs: number,
  warnings: SkillWarning[],
): Candidate[] {
  const found: Candidate[] = [];
  const visited = new Set<string>([rootDir]);
  // The root's path is normalized once, as `join` would normalize every path below it: a
  // child's path is then its parent's plus a name.
  let queue: Place[] = [{ name: "", path: dir, under: join(dir), real: rootDir }];
  let dirs = 0;
  for (let depth = 1; queue.length > 0; depth++) {
    const next: Place[] = [];
    for (const parent of queue) {
      for (const child of subdirectories(parent, rootDir, visited, warnings)) {
        if (depth > maxDepth) {
          warnings.push({
            code: "SKILLS_TOO_DEEP",
            message: `${parent.path} has directories more than ${maxDepth} levels below ${dir}, which were not searched; keep skills at most ${maxDepth} levels deep`,
            file: parent.path,
          });
          return found;
        }
        if (dirs >= maxDirs) {
          warnings.push({
            code: "SKILLS_TOO_MANY_DIRS",
            message: `${dir} has more than ${maxDirs} directories; the rest were not searched and their skills were left out. Remove what is not a skill`,
            file: dir,
          });
          return found;
        }
        dirs++;
        const file = childPath(child.under, SKILL_FILE);
        if (skillFileOf(file) !== undefined) found.push({ name: child.name, file });
        else next.push(child);
      }
    }
    queue = next;
  }
  return found;
}

/** A directory of the walk: its name, the path it was reached by, and its real path. */
interface Place {
  readonly name: string;
  readonly path: string;
  /** `path` normalized: the start of the paths below it (`path` itself, but for a root given as it was configured). */
  readonly under: string;
  readonly real: string;
}

/**
 * `join(dir, name)` for a `dir` that is normalized already (the walk's start, or a path built
 * by this) and a directory entry's name: never empty, `.` or `..`, and without a separator,
 * so nothing is left for `join` to normalize.
 */
function childPath(dir: string, name: string): string {
  return dir.endsWith(sep) ? dir + name : dir + sep + name;
}

/**
 * Subdirectories of `parent` (symlinks followed when their real path stays in the root), sorted
 * by name. A directory that is not a symlink is at its parent's real path plus its name, and so
 * strictly inside the root when its parent is inside it or the root itself (a name is one
 * segment, never `.` or `..`): only a symlink needs realpath, stat and the containment check.
 */
function subdirectories(parent: Place, rootDir: string, visited: Set<string>, warnings: SkillWarning[]): Place[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(parent.path, { withFileTypes: true });
  } catch (error) {
    warnings.push({
      code: "SKILLS_ROOT_UNREADABLE",
      message: `cannot list ${parent.path} (${String((error as { code?: unknown }).code ?? error)}); skills below it were left out`,
      file: parent.path,
    });
    return [];
  }
  // Sorted by name, UTF-16 code units (the default sort's order), dot-entries skipped.
  const names: string[] = [];
  const links = new Set<string>();
  for (const entry of entries) {
    const name = entry.name;
    if (name.startsWith(".")) continue;
    if (entry.isSymbolicLink()) links.add(name);
    else if (!entry.isDirectory()) continue;
    names.push(name);
  }
  names.sort();
  const out: Place[] = [];
  for (const name of names) {
    const path = childPath(parent.under, name);
    const link = links.size > 0 && links.has(name);
    let real: string;
    if (!link) real = childPath(parent.real, name);
    else {
      try {
        real = realpathSync.native(path);
        if (!statSync(real).isDirectory()) continue;
      } catch {
        continue; // a dangling or looping link, or a file swapped in: nothing to search
      }
    }
    if (visited.has(real)) continue; // a loop, or a second link to a directory already searched
    if (link && !isStrictlyInside(rootDir, real)) {
      warnings.push({
        code: "SKILL_OUTSIDE_ROOT",
        message: `${path} resolves to ${real}, outside its skills directory ${rootDir}; it was not searched (a skill must stay inside its root)`,
        file: path,
      });
      continue;
    }
    visited.add(real);
    out.push({ name, path, under: path, real });
  }
  return out;
}

/** The lstat of a directory's SKILL.md, or undefined when there is none (then the walk goes on below). */
function skillFileOf(file: string): Stats | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function loadCandidate(
  candidate: Candidate,
  root: SkillRootKind,
  rules: { rootDir: string; root: ResolvedRoot; isReadable?: IsReadable; maxBytes: number },
  warnings: SkillWarning[],
): Skill | undefined {
  let read: ReturnType<typeof readSkillFile>;
  try {
    read = readSkillFile(candidate.file, { ...rules, rootDir: rules.root });
  } catch (error) {
    if (!SkillsError.is(error)) throw error;
    warnings.push(warningOf(error));
    return undefined;
  }
  const parsed = parseSkill(read.text, { file: read.file, dirName: candidate.name });
  if (!parsed.ok) {
    warnings.push(...parsed.warnings);
    return undefined;
  }
  const text = read.text;
  let sha256: string | undefined;
  // The hash is computed when first read (an enumerable getter, so JSON and spreads see it): `pod prompt` never reads it.
  return {
    name: parsed.skill.name,
    description: parsed.skill.description,
    file: read.file,
    root,
    rootDir: rules.rootDir,
    hidden: parsed.skill.hidden,
    bytes: read.bytes,
    get sha256() {
      sha256 ??= sha256Hex(text);
      return sha256;
    },
  };
}

function insideOf(cwd: string): IsReadable {
  let base: string;
  try {
    base = realpathSync.native(cwd);
  } catch {
    base = cwd;
  }
  return (path) => isSameOrInside(base, path);
}

/** Hex SHA-256 of the UTF-8 of `text`. */
function sha256Hex(text: string): string {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Writes an extension author's `package-lock.json` from this repository's lockfile, so `npm ci --offline` needs
 * only the tarballs that this repository's own `npm ci` put in npm's cache (a lockfile-less install would also
 * need registry metadata, which `npm ci` never caches).
 *
 * The author's project depends on the packed `@knightcodeai/cli` tarball plus a few of our devDependencies; every
 * package they reach is copied from our lockfile with the same version and integrity, at the same place in the
 * tree (our root already has each of them hoisted where Node resolves them from).
 */

interface LockEntry {
  version?: string;
  integrity?: string;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  [key: string]: unknown;
}

export interface Lockfile {
  name?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

export interface AuthorLockOptions {
  /** This repository's parsed package-lock.json. */
  ownLock: Lockfile;
  /** The author's package.json name and devDependencies (the cli tarball among them). */
  name: string;
  devDependencies: Record<string, string>;
  /** The cli package as it is in the tarball. */
  cli: {
    name: string;
    version: string;
    resolved: string;
    integrity: string;
    dependencies: Record<string, string>;
  };
}

/** Where Node would find `dep` from the package installed at `from` ("" is the root), or undefined. */
function locate(packages: Lockfile["packages"], from: string, dep: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ""}node_modules/${dep}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut === -1 ? "" : base.slice(0, cut);
  }
}

export function buildAuthorLockfile(options: AuthorLockOptions): Lockfile {
  const own = options.ownLock.packages;
  const cliPath = `node_modules/${options.cli.name}`;
  const out: Lockfile["packages"] = {
    "": { name: options.name, devDependencies: options.devDependencies },
    [cliPath]: {
      version: options.cli.version,
      resolved: options.cli.resolved,
      integrity: options.cli.integrity,
      dev: true,
      dependencies: options.cli.dependencies,
    },
  };
  // The cli's dependencies are resolved from the author's root, where our root has them too.
  const queue: { from: string; deps: Record<string, string>; optional: boolean }[] = [
    { from: "", deps: options.cli.dependencies, optional: false },
    {
      from: "",
      deps: Object.fromEntries(
        Object.entries(options.devDependencies).filter(([n]) => n !== options.cli.name),
      ),
      optional: false,
    },
  ];
  const optionalOnly = new Map<string, boolean>();
  while (queue.length > 0) {
    const { from, deps, optional } = queue.shift()!;
    for (const dep of Object.keys(deps)) {
      const at = locate(own, from, dep);
      if (!at) {
        if (optional) continue;
        throw new Error(`our package-lock.json has no ${dep} reachable from "${from || "the root"}"`);
      }
      const seen = optionalOnly.get(at);
      if (seen === false || (seen === true && optional)) continue;
      optionalOnly.set(at, optional);
      const entry = own[at]!;
      const peers = Object.fromEntries(
        Object.entries(entry.peerDependencies ?? {}).filter(
          ([n]) => !entry.peerDependenciesMeta?.[n]?.optional,
        ),
      );
      queue.push({ from: at, deps: { ...(entry.dependencies ?? {}), ...peers }, optional });
      queue.push({ from: at, deps: entry.optionalDependencies ?? {}, optional: true });
    }
  }
  for (const [path, optional] of optionalOnly) {
    const { dev: _dev, optional: _optional, devOptional: _devOptional, ...entry } = own[path]!;
    out[path] = { ...entry, dev: true, ...(optional ? { optional: true } : {}) };
  }
  return { name: options.name, lockfileVersion: 3, requires: true, packages: out };
}

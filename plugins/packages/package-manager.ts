/**
 * The package manager: installs, removes, lists and updates the packages of the `packages` setting, and resolves
 * every resource a session would load (packages, the `extensions`/`skills`/`prompts`/`themes` settings entries, and
 * the resource folders) with its enabled state. The CLI subcommands and the session use it; the app-server's
 * `resource/list` serves the same list.
 *
 * Where packages live: npm packages in KnightCode's own npm folder (`<agentDir>/npm`, or `<cwd>/.knightcode/npm`
 * with `-l`), never the user's project `node_modules`; git clones in `<agentDir>/git/<host>/<path>` (or
 * `.knightcode/git/...`); one-run installs (`-e npm:x`) in `<agentDir>/cache/packages`. Local paths are used in
 * place. Commands run without a shell; a failure quotes the command's stderr. Settings are written atomically and
 * only after the package is in place and offers resources, so a failed install leaves them as they were.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, type JsonObject, readJsonObjectFile } from "../kit/files/json-file.js";
import {
  applyResourcePatterns,
  enabledByOverrides,
  RESOURCE_KINDS,
  type ResourceKind,
} from "../kit/resource-patterns.js";
import { globalSettingsPath, projectConfigDir, projectSettingsPath } from "../settings/agent-dir.js";
import { findSavedDecision, readTrustDecisions } from "../settings/trust.js";
import { collectResources, PackageContainmentError, packageOffers, readManifest } from "./collect.js";
import { type PackageSource, PackageSourceError, parsePackageSource } from "./source.js";

export type PackageScope = "user" | "project" | "temporary";

/** One entry of the `packages` setting. */
export type PackageSetting = string | ({ source: string } & Partial<Record<ResourceKind, string[]>>);

export interface ConfiguredPackage {
  source: PackageSource;
  scope: PackageScope;
  /** The user's filter per kind (absent = everything the package offers, `[]` = nothing). */
  filter: Partial<Record<ResourceKind, string[]>>;
  /** Where the package's files are (installed or not). */
  root: string;
  installed: boolean;
}

/** A resource as `knightcode config` and `resource/list` show it. */
export interface ResolvedResource {
  type: ResourceKind;
  path: string;
  name: string;
  enabled: boolean;
  scope: PackageScope;
  origin: "top-level" | "package";
  /** `auto` (a resource folder), `settings` (an entry of the kind's setting) or the package's source. */
  source: string;
}

export interface ResolvedResources {
  resources: ResolvedResource[];
  /** Problems that do not stop a session: a package that failed to install, a bad settings entry. */
  warnings: string[];
  /** Packages of a project that is not trusted: reported, neither installed nor loaded. */
  untrustedPackages: string[];
}

export class PackageError extends Error {
  readonly code = "KC_ERR_PACKAGE";
}

export interface PackageManagerOptions {
  agentDir: string;
  cwd: string;
  /** Environment for npm and git (tests point npm at its offline cache). Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface ResolveOptions {
  /** Which scopes to resolve: a session resolves `user` first and `project` once trust is settled. */
  scopes: readonly ("user" | "project")[];
  projectTrusted: boolean;
  /** One-run package sources (`-e npm:x`). */
  temporary?: readonly string[];
  /** Install configured packages that are missing (a session does; `config` and `list` do not). */
  installMissing?: boolean;
}

/**
 * `--legacy-peer-deps`: a package's peers (`@knightcodeai/cli`, `@sinclair/typebox`) are the running KnightCode's,
 * which the loader provides; npm must not install copies of them.
 */
const NPM_FLAGS = [
  "--no-audit",
  "--no-fund",
  "--no-save",
  "--omit=dev",
  "--legacy-peer-deps",
  "--loglevel=error",
];

/**
 * How long one npm or git command may run. A package whose dependency builds native code from source (better-sqlite3
 * where no prebuilt binary can be fetched) takes over ten minutes on a busy machine; pi sets no limit.
 */
const INSTALL_TIMEOUT_MS = 30 * 60_000;

export class PackageManager {
  constructor(private readonly options: PackageManagerOptions) {}

  private get agentDir(): string {
    return resolve(this.options.agentDir);
  }

  settingsPath(scope: "user" | "project"): string {
    return scope === "user" ? globalSettingsPath(this.agentDir) : projectSettingsPath(this.options.cwd);
  }

  /** The folder relative paths in a scope's settings are resolved against. */
  baseDir(scope: "user" | "project"): string {
    return scope === "user" ? this.agentDir : projectConfigDir(this.options.cwd);
  }

  private installRoot(scope: PackageScope): string {
    if (scope === "temporary") return join(this.agentDir, "cache", "packages");
    return this.baseDir(scope);
  }

  /** Where a package's files are once installed. */
  packageRoot(source: PackageSource, scope: PackageScope): string {
    if (source.kind === "local") return source.path;
    if (source.kind === "npm") return join(this.installRoot(scope), "npm", "node_modules", source.name);
    return join(this.installRoot(scope), "git", ...source.location.split("/"));
  }

  // ---- settings ---------------------------------------------------------------------------------

  private readScope(scope: "user" | "project"): JsonObject {
    const read = readJsonObjectFile(this.settingsPath(scope));
    if (read.status === "invalid")
      throw new PackageError(`${read.message}. Fix the file first; it was not changed.`);
    return read.status === "ok" ? read.value : {};
  }

  private writeScope(scope: "user" | "project", values: JsonObject): void {
    writeFileAtomic(this.settingsPath(scope), `${JSON.stringify(values, null, 2)}\n`);
  }

  /** The packages configured in a scope; bad entries become warnings. */
  configured(scope: "user" | "project", warnings: string[] = []): ConfiguredPackage[] {
    let values: JsonObject;
    try {
      values = this.readScope(scope);
    } catch (error) {
      warnings.push((error as Error).message);
      return [];
    }
    const list = values.packages;
    if (list === undefined) return [];
    if (!Array.isArray(list)) {
      warnings.push(`${this.settingsPath(scope)}: "packages" must be a list; ignored`);
      return [];
    }
    const out: ConfiguredPackage[] = [];
    for (const entry of list) {
      try {
        const pkg = this.toConfigured(entry as PackageSetting, scope);
        if (out.some((p) => p.source.identity === pkg.source.identity)) {
          warnings.push(
            `${this.settingsPath(scope)}: package ${pkg.source.raw} is listed twice; the first entry is used`,
          );
          continue;
        }
        out.push(pkg);
      } catch (error) {
        warnings.push(`${this.settingsPath(scope)}: ${(error as Error).message}`);
      }
    }
    return out;
  }

  private toConfigured(entry: PackageSetting, scope: PackageScope): ConfiguredPackage {
    const raw = typeof entry === "string" ? entry : isPlainObject(entry) ? entry.source : undefined;
    if (typeof raw !== "string") {
      throw new PackageSourceError(
        `a package entry must be a source string or {source, ...}: ${JSON.stringify(entry)}`,
      );
    }
    const filter: Partial<Record<ResourceKind, string[]>> = {};
    if (typeof entry === "object") {
      for (const kind of RESOURCE_KINDS) {
        const value = entry[kind];
        if (value === undefined) continue;
        if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
          throw new PackageSourceError(`package ${raw}: "${kind}" must be a list of patterns`);
        }
        filter[kind] = value;
      }
    }
    const source = parsePackageSource(raw, scope === "temporary" ? this.options.cwd : this.baseDir(scope));
    const root = this.packageRoot(source, scope);
    return { source, scope, filter, root, installed: existsSync(root) };
  }

  // ---- install / remove / update ----------------------------------------------------------------

  /**
   * Installs `raw` and adds it to the scope's settings. Throws PackageError (settings untouched) for an unknown
   * source, a failed npm or git command, a bad manifest, or a package already configured. A package that offers
   * nothing to load (a command-line tool, a provider package without a manifest) is installed as pi installs it;
   * `offersNothing` is then true, so the caller can say so.
   */
  async install(
    raw: string,
    scope: "user" | "project",
  ): Promise<ConfiguredPackage & { offered: Record<ResourceKind, number>; offersNothing: boolean }> {
    const source = parsePackageSource(raw, this.options.cwd);
    const values = this.readScope(scope);
    const existing = this.configured(scope).find((p) => p.source.identity === source.identity);
    if (existing) {
      // A folder is read where it is on every run: there is nothing to update, only to remove.
      const next =
        existing.source.kind === "local"
          ? "it is read from its folder on every run, so changes there apply already; remove it first to add it again"
          : "use knightcode update or remove it first";
      throw new PackageError(
        `${existing.source.raw} is already installed (${this.settingsPath(scope)}); ${next}`,
      );
    }
    // A local path on the command line is relative to the cwd, but settings paths are relative to the settings
    // file's folder: store it resolved.
    const stored = source.kind === "local" ? source.path : source.raw;
    const pkg = this.toConfigured(stored, scope);
    const fresh = !pkg.installed;
    await this.materialize(pkg);
    let offered: Record<ResourceKind, number>;
    try {
      offered = Object.fromEntries(
        RESOURCE_KINDS.map((kind) => [kind, this.offers(pkg, kind).length]),
      ) as Record<ResourceKind, number>;
    } catch (error) {
      // A bad manifest, or an entry outside the package: nothing of it stays installed.
      if (fresh) await this.discard(pkg);
      throw error;
    }
    const list = Array.isArray(values.packages) ? [...values.packages] : [];
    this.writeScope(scope, { ...values, packages: [...list, stored] });
    return { ...pkg, installed: true, offered, offersNothing: !Object.values(offered).some((n) => n > 0) };
  }

  /** Removes the configured package with the same identity as `raw`, and its installed files. */
  async remove(raw: string, scope: "user" | "project"): Promise<ConfiguredPackage> {
    const source = parsePackageSource(raw, this.options.cwd);
    const values = this.readScope(scope);
    const list = Array.isArray(values.packages) ? values.packages : [];
    const index = list.findIndex((entry) => {
      try {
        return this.toConfigured(entry as PackageSetting, scope).source.identity === source.identity;
      } catch {
        return false;
      }
    });
    if (index === -1) {
      throw new PackageError(
        `${raw} is not installed in ${this.settingsPath(scope)}${scope === "user" ? " (use -l for the project)" : ""}`,
      );
    }
    const pkg = this.toConfigured(list[index] as PackageSetting, scope);
    const next = list.filter((_, i) => i !== index);
    this.writeScope(scope, { ...values, packages: next });
    await this.discard(pkg);
    return pkg;
  }

  /**
   * Updates configured unpinned packages (all of them, or the one matching `raw`): npm ones to their latest
   * version, git ones to the head of their default branch. A project's packages only when the project is
   * trusted: an untrusted project's packages are never installed. Returns what was updated and what was skipped.
   */
  async update(
    raw: string | undefined,
    options: { projectTrusted: boolean },
  ): Promise<{ updated: ConfiguredPackage[]; skipped: { pkg: ConfiguredPackage; why: string }[] }> {
    const wanted = raw === undefined ? undefined : parsePackageSource(raw, this.options.cwd).identity;
    const all = [...this.configured("user"), ...(options.projectTrusted ? this.configured("project") : [])];
    const chosen = all.filter((p) => wanted === undefined || p.source.identity === wanted);
    if (raw !== undefined && chosen.length === 0) throw new PackageError(`${raw} is not installed`);
    const updated: ConfiguredPackage[] = [];
    const skipped: { pkg: ConfiguredPackage; why: string }[] = [];
    for (const pkg of chosen) {
      if (pkg.source.kind === "local") skipped.push({ pkg, why: "a local path is used in place" });
      else if (pkg.source.pinned) skipped.push({ pkg, why: "pinned" });
      else {
        await this.refresh(pkg);
        updated.push(pkg);
      }
    }
    return { updated, skipped };
  }

  private async materialize(pkg: ConfiguredPackage): Promise<void> {
    const { source } = pkg;
    if (source.kind === "local") {
      if (!existsSync(source.path)) throw new PackageError(`${source.raw}: ${source.path} does not exist`);
      return;
    }
    if (existsSync(pkg.root)) return;
    if (source.kind === "npm") {
      await this.npmInstall(pkg.scope, source.version ? `${source.name}@${source.version}` : source.name);
      return;
    }
    mkdirSync(dirname(pkg.root), { recursive: true });
    await this.run("git", ["clone", "--quiet", source.url, pkg.root], dirname(pkg.root), source.raw);
    try {
      if (source.ref) await this.run("git", ["checkout", "--quiet", source.ref], pkg.root, source.raw);
      await this.installDependencies(pkg);
    } catch (error) {
      rmSync(pkg.root, { recursive: true, force: true });
      throw error;
    }
  }

  private async refresh(pkg: ConfiguredPackage): Promise<void> {
    const { source } = pkg;
    if (source.kind === "npm") {
      await this.npmInstall(pkg.scope, `${source.name}@latest`);
    } else if (source.kind === "git") {
      if (!existsSync(pkg.root)) return this.materialize(pkg);
      await this.run("git", ["fetch", "--quiet", "origin"], pkg.root, source.raw);
      await this.run("git", ["reset", "--quiet", "--hard", "origin/HEAD"], pkg.root, source.raw);
      await this.installDependencies(pkg);
    }
  }

  private async discard(pkg: ConfiguredPackage): Promise<void> {
    const { source } = pkg;
    if (source.kind === "npm" && existsSync(pkg.root)) {
      await this.run("npm", ["uninstall", ...NPM_FLAGS, source.name], this.npmFolder(pkg.scope), source.raw);
    } else if (source.kind === "git") rmSync(pkg.root, { recursive: true, force: true });
  }

  /** KnightCode's own npm project for a scope: a private package.json so npm never walks up to the user's. */
  private npmFolder(scope: PackageScope): string {
    const folder = join(this.installRoot(scope), "npm");
    mkdirSync(folder, { recursive: true });
    const manifest = join(folder, "package.json");
    if (!existsSync(manifest)) {
      writeFileSync(manifest, `${JSON.stringify({ name: "knightcode-packages", private: true }, null, 2)}\n`);
    }
    return folder;
  }

  private async npmInstall(scope: PackageScope, spec: string): Promise<void> {
    const folder = this.npmFolder(scope);
    await this.run("npm", ["install", ...NPM_FLAGS, "--prefix", folder, spec], folder, `npm:${spec}`);
  }

  /** A cloned package's own dependencies (production only), when it declares any. */
  private async installDependencies(pkg: ConfiguredPackage): Promise<void> {
    const file = join(pkg.root, "package.json");
    if (!existsSync(file)) return;
    let deps: unknown;
    try {
      deps = (JSON.parse(readFileSync(file, "utf8")) as JsonObject).dependencies;
    } catch {
      return;
    }
    if (!isPlainObject(deps) || Object.keys(deps).length === 0) return;
    await this.run(
      "npm",
      ["install", "--omit=dev", "--no-audit", "--no-fund", "--legacy-peer-deps", "--loglevel=error"],
      pkg.root,
      pkg.source.raw,
    );
  }

  private async run(command: string, args: string[], cwd: string, what: string): Promise<void> {
    // Loaded on first use: execa is about a hundred modules, and every session start resolves packages.
    const { execa } = await import("execa");
    const result = await execa(command, args, {
      cwd,
      reject: false,
      stdin: "ignore",
      env: this.options.env ?? process.env,
      extendEnv: false,
      timeout: INSTALL_TIMEOUT_MS,
    });
    if (result.exitCode === 0 && !result.failed) return;
    if (result.timedOut) {
      throw new PackageError(
        `${what}: \`${command} ${args.join(" ")}\` did not finish within ${INSTALL_TIMEOUT_MS / 60_000} minutes and was stopped`,
      );
    }
    const stderr = String(result.stderr ?? "").trim() || result.shortMessage || "no output";
    throw new PackageError(`${what}: \`${command} ${args.join(" ")}\` failed:\n${indent(stderr)}`);
  }

  // ---- resolving --------------------------------------------------------------------------------

  private offers(pkg: ConfiguredPackage, kind: ResourceKind): string[] {
    const { manifest, error } = readManifest(pkg.root);
    if (error) throw new PackageError(error);
    return packageOffers(pkg.root, kind, manifest, pkg.source.raw);
  }

  /**
   * Every resource of the chosen scopes with its enabled state, in load order within each kind: packages, then
   * the setting's entries, then the resource folders. The same path twice keeps its first appearance.
   */
  async resolve(options: ResolveOptions): Promise<ResolvedResources> {
    const warnings: string[] = [];
    const untrustedPackages: string[] = [];
    const resources: ResolvedResource[] = [];
    const seen = new Set<string>();
    const add = (resource: Omit<ResolvedResource, "name">) => {
      const key = `${resource.type}\0${resource.path}`;
      if (seen.has(key)) return;
      seen.add(key);
      resources.push({ ...resource, name: resourceName(resource.type, resource.path) });
    };
    const packages: ConfiguredPackage[] = [];
    for (const raw of options.temporary ?? []) {
      try {
        packages.push(this.toConfigured(raw, "temporary"));
      } catch (error) {
        throw new PackageError(`-e ${raw}: ${(error as Error).message}`);
      }
    }
    // The project's packages come first so that its entry of a package wins.
    const scopes = (["project", "user"] as const).filter((scope) => options.scopes.includes(scope));
    for (const scope of scopes) {
      if (scope === "project" && !options.projectTrusted) {
        untrustedPackages.push(...this.configured("project", warnings).map((p) => p.source.raw));
        continue;
      }
      packages.push(...this.configured(scope, warnings));
    }
    // The project's entry wins over the user's for the same package.
    const identities = new Set<string>();
    for (const pkg of packages) {
      if (identities.has(pkg.source.identity)) continue;
      identities.add(pkg.source.identity);
      try {
        if (!existsSync(pkg.root) || pkg.source.kind === "local") {
          if (!options.installMissing && pkg.source.kind !== "local") {
            warnings.push(
              `package ${pkg.source.raw} is not installed (run knightcode install ${pkg.source.raw})`,
            );
            continue;
          }
          await this.materialize(pkg);
        }
        // Every kind is checked before any is added: a package with one entry outside itself loads nothing.
        const offers = RESOURCE_KINDS.map((kind) => [kind, this.offers(pkg, kind)] as const);
        for (const [kind, offered] of offers) {
          const filter = pkg.filter[kind];
          const enabled =
            filter === undefined
              ? new Set(offered)
              : filter.length === 0
                ? new Set<string>()
                : applyResourcePatterns(offered, filter, pkg.root);
          for (const path of offered) {
            add({
              type: kind,
              path,
              enabled: enabled.has(path),
              scope: pkg.scope,
              origin: "package",
              source: pkg.source.raw,
            });
          }
        }
      } catch (error) {
        // A containment refusal names the package already; the package is not loaded at all.
        const message = (error as Error).message;
        warnings.push(
          error instanceof PackageContainmentError ? message : `package ${pkg.source.raw}: ${message}`,
        );
      }
    }
    for (const scope of scopes) {
      if (scope === "project" && !options.projectTrusted) continue;
      let values: JsonObject;
      try {
        values = this.readScope(scope);
      } catch (error) {
        warnings.push((error as Error).message);
        continue;
      }
      const base = this.baseDir(scope);
      for (const kind of RESOURCE_KINDS) {
        const list = Array.isArray(values[kind])
          ? (values[kind] as unknown[]).filter((v): v is string => typeof v === "string")
          : [];
        const plain = list.filter((e) => !/^[!+-]/.test(e) && !e.includes("*") && !e.includes("?"));
        for (const entry of plain) {
          const target = resolve(base, entry.replace(/^~(?=\/)/, homedir()));
          if (!existsSync(target)) {
            warnings.push(`${this.settingsPath(scope)}: "${kind}" entry ${entry} (${target}) does not exist`);
            continue;
          }
          for (const path of collectResources(target, kind, true)) {
            add({
              type: kind,
              path,
              enabled: enabledByOverrides(path, list, base),
              scope,
              origin: "top-level",
              source: "settings",
            });
          }
        }
        for (const path of collectResources(join(base, kind), kind)) {
          add({
            type: kind,
            path,
            enabled: enabledByOverrides(path, list, base),
            scope,
            origin: "top-level",
            source: "auto",
          });
        }
      }
    }
    // A settings file that cannot be read is met by both the packages pass and the resources pass: say it once.
    return { resources, warnings: [...new Set(warnings)], untrustedPackages };
  }

  /** Every configured package of both scopes (the project's even when it is not trusted: `list` shows them). */
  list(): ConfiguredPackage[] {
    return [...this.configured("user"), ...this.configured("project")];
  }

  /**
   * Enables or disables one resource with a `+path`/`-path` pattern in the settings of the scope that defines it:
   * a top-level resource in the kind's setting, a package's in that package's filter.
   */
  setEnabled(resource: ResolvedResource, enabled: boolean): void {
    if (resource.scope === "temporary")
      throw new PackageError(`${resource.path} comes from a one-run package`);
    const scope = resource.scope;
    const values = this.readScope(scope);
    const mark = `${enabled ? "+" : "-"}`;
    if (resource.origin === "top-level") {
      const base = this.baseDir(scope);
      const rel = relativeTo(base, resource.path);
      const list = (Array.isArray(values[resource.type]) ? (values[resource.type] as string[]) : []).filter(
        (e) => e !== `+${rel}` && e !== `-${rel}`,
      );
      this.writeScope(scope, { ...values, [resource.type]: [...list, `${mark}${rel}`] });
      return;
    }
    const list = Array.isArray(values.packages) ? [...(values.packages as PackageSetting[])] : [];
    const index = list.findIndex((entry) => {
      try {
        return this.toConfigured(entry, scope).source.raw === resource.source;
      } catch {
        return false;
      }
    });
    if (index === -1)
      throw new PackageError(`package ${resource.source} is not in ${this.settingsPath(scope)}`);
    const entry = list[index]!;
    const pkg = this.toConfigured(entry, scope);
    const rel = relativeTo(pkg.root, resource.path);
    const object: Exclude<PackageSetting, string> =
      typeof entry === "string" ? { source: entry } : { ...entry };
    const current = object[resource.type];
    // No filter means everything is on already; "-path" alone keeps everything else on.
    if (current === undefined && enabled) return;
    object[resource.type] = [
      ...(current ?? []).filter((e) => e !== `+${rel}` && e !== `-${rel}`),
      `${mark}${rel}`,
    ];
    list[index] = object;
    this.writeScope(scope, { ...values, packages: list });
  }
}

function relativeTo(base: string, path: string): string {
  const rel = path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path;
  return rel;
}

function resourceName(kind: ResourceKind, path: string): string {
  if (kind === "skills" && basename(path) === "SKILL.md") return basename(dirname(path));
  return basename(path).replace(/\.(md|json|ts|js|mts|mjs)$/, "");
}

function indent(text: string): string {
  return text
    .split("\n")
    .slice(-20)
    .map((line) => `  ${line}`)
    .join("\n");
}

/**
 * Whether the CLI's package commands may treat the project as trusted without asking: `--approve`/`--no-approve`,
 * else the decision saved for the folder (or its closest ancestor), else `defaultProjectTrust: "always"`.
 */
export function knownProjectTrust(options: { agentDir: string; cwd: string; approve?: boolean }): boolean {
  if (options.approve !== undefined) return options.approve;
  const saved = findSavedDecision(readTrustDecisions(options.agentDir), options.cwd);
  if (saved) return saved.trusted;
  const global = readJsonObjectFile(globalSettingsPath(options.agentDir));
  return global.status === "ok" && global.value.defaultProjectTrust === "always";
}

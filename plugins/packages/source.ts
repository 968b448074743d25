/**
 * Package sources as users write them in `knightcode install` and in the `packages` setting:
 * `npm:<name>[@version]`, `git:<host>/<path>[@ref]`, `https://`, `ssh://`, `file://` and `git@host:path` git URLs,
 * and local paths. The identity (npm name, git URL without its ref, resolved folder) is what makes two entries the
 * same package; a version or ref pins it, so `update` leaves it alone.
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

export type PackageSource =
  | { kind: "npm"; raw: string; identity: string; name: string; version?: string; pinned: boolean }
  | {
      kind: "git";
      raw: string;
      identity: string;
      /** What `git clone` is given. */
      url: string;
      ref?: string;
      /** `<host>/<path>`: where the clone lives under the install folder. */
      location: string;
      pinned: boolean;
    }
  | { kind: "local"; raw: string; identity: string; path: string; pinned: false };

export class PackageSourceError extends Error {
  readonly code = "KC_ERR_PACKAGE_SOURCE";
}

const NPM_NAME = /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;

/**
 * Parses a source. `baseDir` resolves a relative local path (the cwd on the command line, the folder of the
 * settings file in settings). Throws PackageSourceError naming the accepted forms.
 */
export function parsePackageSource(raw: string, baseDir: string): PackageSource {
  const source = raw.trim();
  if (source.startsWith("npm:")) return parseNpm(source);
  if (source.startsWith("git:")) return parseGitShorthand(source);
  if (/^(https?|ssh|git|file):\/\//.test(source) || /^[\w.-]+@[\w.-]+:/.test(source))
    return parseGitUrl(source);
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) {
    throw new PackageSourceError(
      `unknown package source "${raw}": use npm:<name>[@version], git:<host>/<path>[@ref], an https://, ssh:// or ` +
        "file:// git URL, or a local path",
    );
  }
  if (source === "") throw new PackageSourceError("the package source is empty");
  const path = source.startsWith("~/")
    ? join(homedir(), source.slice(2))
    : isAbsolute(source)
      ? source
      : resolve(baseDir, source);
  return { kind: "local", raw, identity: `local:${resolve(path)}`, path: resolve(path), pinned: false };
}

function parseNpm(source: string): PackageSource {
  const spec = source.slice(4);
  // The version starts at the first `@` after the name (a scope's `@` and a `file:` path's do not count).
  const at = spec.indexOf("@", spec.startsWith("@") ? spec.indexOf("/") : 0);
  const [name, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
  if (!NPM_NAME.test(name) || version === "") {
    throw new PackageSourceError(`"${source}" is not npm:<name>[@version] (e.g. npm:@scope/pkg@1.2.3)`);
  }
  return {
    kind: "npm",
    raw: source,
    identity: `npm:${name}`,
    name,
    ...(version ? { version } : {}),
    pinned: version !== undefined,
  };
}

/** `git:github.com/user/repo@v1` (https is implied), or `git:git@github.com:user/repo`. */
function parseGitShorthand(source: string): PackageSource {
  const rest = source.slice(4);
  if (/^[\w.-]+@[\w.-]+:/.test(rest) || /^[a-z]+:\/\//.test(rest)) return parseGitUrl(rest, source);
  const { base, ref } = splitRef(rest);
  const match = /^([\w.-]+(?::\d+)?)\/(.+?)(?:\.git)?\/?$/.exec(base);
  if (!match) throw new PackageSourceError(`"${source}" is not git:<host>/<path>[@ref]`);
  return gitSource(source, `https://${match[1]}/${match[2]}`, `${match[1]}/${match[2]}`, ref);
}

function parseGitUrl(url: string, raw = url): PackageSource {
  if (url.startsWith("file://")) {
    const { base, ref } = splitRef(url.slice("file://".length));
    if (!base.startsWith("/")) throw new PackageSourceError(`"${raw}" must be an absolute file:// URL`);
    return gitSource(raw, `file://${base}`, `local${base.replace(/\.git$/, "")}`, ref);
  }
  const scp = /^([\w.-]+)@([\w.-]+):(.+)$/.exec(url);
  if (scp) {
    const { base, ref } = splitRef(scp[3]!);
    return gitSource(raw, `${scp[1]}@${scp[2]}:${base}`, `${scp[2]}/${stripGit(base)}`, ref);
  }
  const parsed = /^([a-z]+):\/\/(?:[^@/]+@)?([^/]+)\/(.+)$/.exec(url);
  if (!parsed) throw new PackageSourceError(`"${raw}" is not a git URL with a host and a path`);
  const { base, ref } = splitRef(parsed[3]!);
  const prefix = url.slice(0, url.length - parsed[3]!.length);
  return gitSource(raw, `${prefix}${base}`, `${parsed[2]!.replace(/:\d+$/, "")}/${stripGit(base)}`, ref);
}

/** A ref follows the last `@` of the path part (`repo@v1.2`); an `@` inside a user name is not one. */
function splitRef(path: string): { base: string; ref?: string } {
  const at = path.lastIndexOf("@");
  if (at <= 0 || path.slice(at).includes("/")) return { base: path };
  return { base: path.slice(0, at), ref: path.slice(at + 1) };
}

const stripGit = (path: string) => path.replace(/\.git$/, "").replace(/\/$/, "");

function gitSource(raw: string, url: string, location: string, ref: string | undefined): PackageSource {
  if (location.split("/").some((part) => part === ".." || part === "")) {
    throw new PackageSourceError(`"${raw}" has an empty or ".." path segment`);
  }
  return {
    kind: "git",
    raw,
    identity: `git:${url.replace(/\.git$/, "")}`,
    url,
    ...(ref ? { ref } : {}),
    location,
    pinned: ref !== undefined,
  };
}

/**
 * The git services are loaded on first use: a session that never reads a diff or makes a worktree pays nothing
 * for them at start-up (the kit re-exports this loader, not the modules).
 */
export type GitServices = typeof import("./index.js");

export function loadGitServices(): Promise<GitServices> {
  return import("./index.js");
}

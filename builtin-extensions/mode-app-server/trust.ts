/** Project trust as the app-server reads it (settings, resources, environment scripts). */
import { findSavedDecision, loadSettings, readTrustDecisions } from "@knightcodeai/cli/kit";

/** Whether a project's own settings and resources are read: a saved decision, else the default setting. */
export function projectTrusted(agentDir: string, cwd: string): boolean | null {
  const saved = findSavedDecision(readTrustDecisions(agentDir), cwd);
  if (saved) return saved.trusted;
  const global = loadSettings({ agentDir, cwd, projectTrusted: false });
  const fallback = global.get("defaultProjectTrust");
  return fallback === "always" ? true : fallback === "never" ? false : null;
}

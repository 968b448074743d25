/**
 * Changes to mcp.json made by `/mcp`: read the file again, change one field of one entry, write it back
 * atomically, so a concurrent edit of another entry is kept and a crash leaves the old file or the new one.
 */
import { readJsonObjectFile, writeFileAtomic } from "@knightcodeai/cli/kit";

/** Sets `enabled` of one entry; returns the file written. Throws with the file named when it cannot. */
export function setEnabledInFile(path: string, name: string, enabled: boolean): string {
  const read = readJsonObjectFile(path);
  if (read.status === "missing") throw new Error(`${path} no longer exists`);
  if (read.status === "invalid") throw new Error(read.message);
  const servers = read.value.mcpServers as Record<string, Record<string, unknown>> | undefined;
  const entry = servers?.[name];
  if (!entry || typeof entry !== "object") throw new Error(`${path} no longer has a server "${name}"`);
  entry.enabled = enabled;
  writeFileAtomic(path, `${JSON.stringify(read.value, null, 2)}\n`);
  return path;
}

/**
 * The path of a file in the agent folder, for a provider's messages ("add a key to .../auth.json"): the folder the
 * request came from, so the message names the file the person has to edit, not a placeholder.
 */
import { join } from "node:path";
import type { ProviderStreamRequest } from "../../../kernel/index.js";

export function agentFilePath(request: Pick<ProviderStreamRequest, "agentDir">, name: string): string {
  // A request built by hand (a test, a host calling the provider directly) may not say where the folder is.
  return request.agentDir ? join(request.agentDir, name) : `~/.knightcode/agent/${name}`;
}

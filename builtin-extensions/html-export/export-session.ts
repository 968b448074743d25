/** `/export`'s work, loaded on its first use: render the session and write the file. */

import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@knightcodeai/cli/kit";
import { renderSessionHtml } from "./render-session.js";
import { defaultFileName, parsePathArgument, writeExport } from "./write-export.js";

export async function exportSession(
  knightcode: ExtensionAPI,
  args: string,
  ctx: ExtensionCommandContext,
): Promise<{ path: string }> {
  const manager = ctx.sessionManager;
  const name = manager.getSessionName();
  const path =
    parsePathArgument(args, ctx.cwd) ?? join(ctx.cwd, defaultFileName(name, manager.getSessionId()));
  const html = renderSessionHtml(
    {
      header: manager.getHeader(),
      name,
      entries: manager.getEntries(),
      branch: manager.getBranch(),
      label: (id) => manager.getLabel(id),
    },
    {
      cwd: ctx.cwd,
      tool: (toolName) => knightcode.getToolRenderers(toolName),
      message: (customType) => knightcode.getMessageRenderer(customType),
      entry: (customType) => knightcode.getEntryRenderer(customType),
      warn: (message) => knightcode.log.warn(message),
      now: new Date(),
    },
  );
  await writeExport(path, html);
  ctx.ui.notify(`Exported the session to ${path}`, "info");
  return { path };
}

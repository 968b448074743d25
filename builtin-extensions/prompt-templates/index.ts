/**
 * builtin:prompt-templates — each Markdown file in a prompts folder becomes a command: `/<file name> args` sends the
 * file's text, with its argument placeholders filled, as the user's message (templates.ts reads and expands).
 *
 * The folders, in this order (an earlier template keeps a name): `<agentDir>/prompts/`, a trusted project's
 * `.knightcode/prompts/`, then the `promptPaths` other extensions contribute in `resources_discover`. The templates
 * are read in a `{ fallback: true }` handler of that event, which runs after every other extension's, so
 * `ctx.getDiscoveredResources()` already holds all their paths; the event comes at startup and on reload, when the
 * templates are read again.
 *
 * The expansion runs as a command and sends the text with `ctx.sendUserMessage()`, so it is the same in every
 * mode: the model receives the expanded text as the user message, and `get_commands` lists each template with
 * `source: "prompt"` and the template's file as its `sourceInfo.path`.
 */

import { join } from "node:path";
import {
  type ExtensionAPI,
  type ExtensionContext,
  errorMessage,
  resourceFilter,
  type Unsubscribe,
} from "@knightcodeai/cli/kit";
import { expandTemplate, loadTemplates, splitArgs, type TemplateFolder } from "./templates.js";

export default function promptTemplates(knightcode: ExtensionAPI): void {
  let registered: Unsubscribe[] = [];
  knightcode.on(
    "resources_discover",
    async (event, ctx) => {
      for (const unregister of registered) unregister();
      registered = [];
      const loaded = await loadTemplates(folders(event.cwd, ctx));
      for (const warning of loaded.warnings) knightcode.log.warn(warning);
      // The `prompts` settings patterns of each scope apply to the templates of that scope's folder.
      const enabled = resourceFilter("prompts", { agentDir: ctx.agentDir, cwd: event.cwd });
      const templates = loaded.templates.filter((t) => t.scope === "temporary" || enabled(t.path, t.scope));
      const names = new Set(templates.map((template) => template.name));
      for (const template of templates) {
        try {
          registered.push(
            knightcode.registerCommand(template.name, {
              description: template.description,
              source: "prompt",
              sourceInfo: { path: template.path, source: "local", scope: template.scope },
              handler: async (args, commandCtx) => {
                const text = expandTemplate(template.body, splitArgs(args));
                // A sent message is dispatched as typed input again, so a template that starts with a template
                // command would expand forever.
                const inner = /^\/([^\s/]+)/.exec(text)?.[1];
                if (inner !== undefined && names.has(inner)) {
                  commandCtx.ui.notify(
                    `/${template.name} was not sent: its text starts with the template command /${inner} (${template.path})`,
                    "error",
                  );
                  return;
                }
                await commandCtx.sendUserMessage(text);
              },
            }),
          );
        } catch (error) {
          knightcode.log.warn(`prompt template ${template.path}: ${errorMessage(error)}`);
        }
      }
    },
    { fallback: true },
  );
}

function folders(cwd: string, ctx: ExtensionContext): TemplateFolder[] {
  return [
    { path: join(ctx.agentDir, "prompts"), scope: "user", optional: true },
    ...(ctx.isProjectTrusted()
      ? [{ path: join(cwd, ".knightcode", "prompts"), scope: "project" as const, optional: true }]
      : []),
    ...ctx
      .getDiscoveredResources()
      .promptPaths.map((path) => ({ path, scope: "temporary" as const, optional: false })),
  ];
}

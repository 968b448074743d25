/**
 * The default system prompt of a run, built by the loop itself from the session's tools and prompt inputs (the
 * cwd, the context files, SYSTEM.md and APPEND_SYSTEM.md): its sections before `before_agent_start`, and the render
 * of what the handlers hand back. A tool's prompt snippet and guidelines are read once per definition, not on every
 * request.
 */
import type { SystemPromptOptions, ToolDefinition } from "../../kernel/index.js";
import type { ContextFile } from "../resources/context-files.js";
import {
  buildSystemPrompt,
  defaultSystemPromptOptions,
  type PromptTool,
} from "../resources/system-prompt.js";
import type { ToolRegistry } from "../tool-registry/tool-registry.js";

/** What the prompt is made of besides the tools; read at each run (a reload may change the files). */
export interface PromptInputs {
  cwd: string;
  /** AGENTS.md / CLAUDE.md files. */
  contextFiles(): readonly ContextFile[];
  /** SYSTEM.md and APPEND_SYSTEM.md (the project's only when it is trusted). */
  promptFiles(): { customPrompt?: string; appendPrompt?: string };
}

export class SystemPromptSource {
  private readonly described = new WeakMap<object, PromptTool>();

  constructor(
    private readonly tools: ToolRegistry,
    private readonly inputs: PromptInputs,
  ) {}

  /** Fresh default sections for a run, listing the tools the model is given (in declaration order). */
  options(): SystemPromptOptions {
    return defaultSystemPromptOptions({
      cwd: this.inputs.cwd,
      tools: this.tools.declarations().map((d) => this.describe(d.name)),
      contextFiles: this.inputs.contextFiles(),
      ...this.inputs.promptFiles(),
    });
  }

  /** Renders options; with `original` (before `before_agent_start`), edits of the tool and guideline lists show. */
  render(options: SystemPromptOptions, original?: SystemPromptOptions): string {
    return buildSystemPrompt(options, {
      ...(original ? { original } : {}),
      tools: this.tools.getAllTools().map((t) => this.describe(t.name)),
    });
  }

  private describe(name: string): PromptTool {
    const definition: ToolDefinition | undefined = this.tools.get(name)?.definition;
    if (!definition) return { name };
    let tool = this.described.get(definition);
    if (!tool) {
      tool = {
        name,
        ...(definition.promptSnippet ? { promptSnippet: definition.promptSnippet } : {}),
        ...(definition.promptGuidelines ? { promptGuidelines: definition.promptGuidelines } : {}),
      };
      this.described.set(definition, tool);
    }
    return tool;
  }
}

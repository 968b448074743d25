/**
 * What each built-in extension registers up front (its modes, flags and providers), declared as data so a host
 * can show them without loading any built-in's code, as VS Code reads an extension's `contributes` before
 * activating it. `knightcode --help` prints the built-in modes and flags from here.
 *
 * The entries are in load order and must say exactly what the factories register:
 * test/hosts/sdk/builtin-manifest.test.ts loads every built-in and fails on any difference. This module imports
 * nothing at run time, so reading it costs nothing.
 */

export interface BuiltinManifest {
  /** The extension id is `builtin:<name>`; settings disable it with `-builtin:<name>`. */
  readonly name: string;
  readonly modes: readonly { name: string; description: string; readsStdin: boolean }[];
  readonly flags: readonly { name: string; type: "boolean" | "string"; description: string }[];
  /** Provider registrations: the provider's name and its wire API. */
  readonly providers: readonly { name: string; api: string }[];
}

const MANIFEST = [
  { name: "core-tools", modes: [], flags: [], providers: [] },
  // The default summariser and /compact; its handler runs after other extensions' (`fallback`).
  { name: "compaction", modes: [], flags: [], providers: [] },
  // Registers nothing: while it is enabled, extension files may import pi's package names (pi-compat/modules.ts).
  { name: "pi-compat", modes: [], flags: [], providers: [] },
  // Registers its commands later, one per template, when resources_discover has run.
  { name: "prompt-templates", modes: [], flags: [], providers: [] },
  {
    name: "scripted",
    modes: [],
    flags: [{ name: "script", type: "string", description: "JSON file of scripted provider steps" }],
    providers: [{ name: "scripted", api: "scripted" }],
  },
  {
    name: "anthropic",
    modes: [],
    flags: [],
    // The API's own provider, then the named Messages providers of its catalogue (catalogue.generated.ts).
    providers: [
      { name: "anthropic", api: "anthropic-messages" },
      { name: "kimi-coding", api: "anthropic-messages" },
      { name: "minimax", api: "anthropic-messages" },
      { name: "minimax-cn", api: "anthropic-messages" },
      { name: "vercel-ai-gateway", api: "anthropic-messages" },
    ],
  },
  { name: "openai", modes: [], flags: [], providers: [{ name: "openai", api: "openai-responses" }] },
  {
    name: "openai-compatible",
    modes: [],
    flags: [],
    // The API, then the named providers of its catalogue (catalogue.generated.ts), in its order.
    providers: [
      { name: "openai-completions", api: "openai-completions" },
      { name: "groq", api: "openai-completions" },
      { name: "cerebras", api: "openai-completions" },
      { name: "deepseek", api: "openai-completions" },
      { name: "openrouter", api: "openai-completions" },
      { name: "together", api: "openai-completions" },
      { name: "fireworks", api: "openai-completions" },
      { name: "nvidia", api: "openai-completions" },
      { name: "huggingface", api: "openai-completions" },
      { name: "moonshotai", api: "openai-completions" },
      { name: "zai", api: "openai-completions" },
      { name: "baseten", api: "openai-completions" },
      { name: "xai", api: "openai-responses" },
      { name: "ant-ling", api: "openai-completions" },
      { name: "moonshotai-cn", api: "openai-completions" },
      { name: "qwen-token-plan", api: "openai-completions" },
      { name: "qwen-token-plan-cn", api: "openai-completions" },
      { name: "qwen-token-plan-individual", api: "openai-completions" },
      { name: "xiaomi", api: "openai-completions" },
      { name: "xiaomi-token-plan-ams", api: "openai-completions" },
      { name: "xiaomi-token-plan-cn", api: "openai-completions" },
      { name: "xiaomi-token-plan-sgp", api: "openai-completions" },
      { name: "zai-coding-cn", api: "openai-completions" },
      { name: "cloudflare-workers-ai", api: "openai-completions" },
      { name: "opencode", api: "openai-completions" },
      { name: "opencode-go", api: "openai-completions" },
      { name: "cloudflare-ai-gateway", api: "openai-completions" },
    ],
  },
  {
    name: "github-copilot",
    modes: [],
    flags: [],
    providers: [{ name: "github-copilot", api: "openai-completions" }],
  },
  { name: "google", modes: [], flags: [], providers: [{ name: "google", api: "google-generative-ai" }] },
  { name: "html-export", modes: [], flags: [], providers: [] },
  { name: "skills", modes: [], flags: [], providers: [] },
  // Connects mcp.json and registered MCP servers; their tools are registered as each server connects.
  { name: "mcp", modes: [], flags: [], providers: [] },
  // /mcp: shows and manages the servers of whatever provides the MCP client service (builtin:mcp or a replacement).
  { name: "mcp-command", modes: [], flags: [], providers: [] },
  // The `codemode` tool: scripts that call tools, in a QuickJS sandbox started on first use.
  { name: "codemode", modes: [], flags: [], providers: [] },
  // The `tool_search` tool: finds deferred tools and activates them for the next request.
  { name: "tool-search", modes: [], flags: [], providers: [] },
  // The permission gate: a fallback tool_call handler, off until tools.json turns it on.
  {
    name: "classifier-gate",
    modes: [],
    flags: [
      {
        name: "gate",
        type: "boolean",
        description: "Turn the permission gate on for this run (tools.json keeps its setting)",
      },
    ],
    providers: [],
  },
  { name: "ask-user", modes: [], flags: [], providers: [] },
  // /plan, ctrl+alt+p and --plan: read-only tools until the person approves the agent's plan.
  {
    name: "plan-mode",
    modes: [],
    flags: [
      {
        name: "plan",
        type: "boolean",
        description: "Start in plan mode: read-only tools until you approve the agent's plan",
      },
    ],
    providers: [],
  },
  // The websearch and webfetch tools, off until tools.json turns them on; turndown loads with the first page.
  { name: "web", modes: [], flags: [], providers: [] },
  // The /tools command over tools.json.
  { name: "tool-settings", modes: [], flags: [], providers: [] },
  { name: "themes", modes: [], flags: [], providers: [] },
  // The git service (gitService) and turn snapshots for the lastTurn diff scope and turn/diff/updated; the git
  // engine loads on first use.
  { name: "worktrees", modes: [], flags: [], providers: [] },
  {
    name: "mode-print",
    modes: [{ name: "print", description: "Run the prompts and print the final answer", readsStdin: true }],
    flags: [],
    providers: [],
  },
  {
    name: "mode-json",
    modes: [{ name: "json", description: "Write the session events as JSON lines", readsStdin: true }],
    flags: [],
    providers: [],
  },
  {
    name: "mode-rpc",
    modes: [
      {
        name: "rpc",
        description: "JSON lines on stdin and stdout, for programs that drive KnightCode",
        readsStdin: false,
      },
    ],
    flags: [],
    providers: [],
  },
  {
    name: "mode-app-server",
    modes: [
      {
        name: "app-server",
        description: "JSON-RPC over stdio (and WebSocket with --listen) for desktop and editor clients",
        readsStdin: false,
      },
    ],
    flags: [],
    providers: [],
  },
  {
    name: "mode-acp",
    modes: [
      {
        name: "acp",
        description: "the Agent Client Protocol on stdin and stdout, for editors (knightcode acp)",
        readsStdin: false,
      },
    ],
    flags: [
      {
        name: "acp-permission-timeout",
        type: "string",
        description:
          "acp mode: seconds to wait for the client's answer to a permission request before refusing the call (default 300)",
      },
    ],
    providers: [],
  },
  {
    name: "mode-interactive",
    modes: [{ name: "interactive", description: "Chat in the terminal", readsStdin: false }],
    flags: [],
    providers: [],
  },
] as const satisfies readonly BuiltinManifest[];

export type BuiltinName = (typeof MANIFEST)[number]["name"];

export const BUILTIN_MANIFEST: readonly (BuiltinManifest & { readonly name: BuiltinName })[] = MANIFEST;

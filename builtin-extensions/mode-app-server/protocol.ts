/**
 * The app-server protocol, defined once: every request (params and result), notification and server request as a
 * TypeBox schema. The server validates params against these, `knightcode app-server schema` writes them out as
 * JSON Schema and TypeScript, and the generated copies in `schema/` are checked against this file by a test.
 *
 * Shapes follow docs/app-server.md (the spec's known parts, Codex's conventions for the rest). Times are epoch
 * milliseconds.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { accountNotifications, accountRequests, accountSharedSchemas } from "./protocol-account.js";
import { Any, Arr, Bool, Lit, Num, Obj, Opt, Str, ThreadId } from "./protocol-base.js";
import { FileTotals, gitSharedSchemas, gitSpecs, ThreadWorkspace } from "./protocol-git.js";

export const ThreadStatus = Type.Union(
  [
    Obj({ type: Lit("notLoaded") }),
    Obj({ type: Lit("idle") }),
    Obj({
      type: Lit("active"),
      waitingOn: Arr(Str(), { description: 'What the turn waits for, e.g. "dialog"' }),
    }),
    Obj({ type: Lit("systemError"), message: Opt(Str()) }),
  ],
  { $id: "ThreadStatus" },
);

export const Warning = Obj(
  {
    message: Str(),
    source: Type.Union([Lit("settings"), Lit("extension"), Lit("trust"), Lit("server")]),
    path: Opt(Str()),
    line: Opt(Num()),
    column: Opt(Num()),
  },
  { $id: "Warning" },
);

export const Effort = Type.Union(
  [Lit("off"), Lit("minimal"), Lit("low"), Lit("medium"), Lit("high"), Lit("xhigh")],
  { $id: "Effort", description: "A thinking level" },
);

export const Thread = Obj(
  {
    id: Str(),
    name: Opt(Str()),
    preview: Str({ description: "The first user message, shortened" }),
    cwd: Str(),
    createdAt: Num(),
    updatedAt: Num(),
    status: ThreadStatus,
    forkedFromId: Opt(Str()),
    sessionFile: Opt(Str()),
    model: Opt(Str({ description: "provider/model" })),
    effort: Opt(Effort),
    archived: Opt(Bool()),
    workspace: ThreadWorkspace,
  },
  { $id: "Thread" },
);

export const ThreadSummary = Obj(
  {
    id: Str(),
    name: Opt(Str()),
    preview: Str(),
    cwd: Str(),
    createdAt: Num(),
    updatedAt: Num({ description: "The session file's modification time" }),
    status: ThreadStatus,
    forkedFromId: Opt(Str()),
    messageCount: Num(),
    workspaceMode: Opt(Lit("worktree", { description: "Present on threads that run in a managed worktree" })),
  },
  { $id: "ThreadSummary" },
);

/** A value too large to travel inline: read it with `thread/payload/read`. */
export const PayloadRef = Obj({ ref: Str(), bytes: Num() }, { $id: "PayloadRef" });

const TextInput = Obj({ type: Lit("text"), text: Str() });
const ImageInput = Obj({ type: Lit("image"), data: Str({ description: "base64" }), mimeType: Str() });
export const UserInput = Type.Union([TextInput, ImageInput], { $id: "UserInput" });

export const ReviewComment = Obj(
  {
    path: Str({ minLength: 1, description: "The file, relative to the thread's cwd" }),
    line: Type.Integer({ minimum: 1 }),
    endLine: Opt(Type.Integer({ minimum: 1 })),
    body: Str(),
    quote: Opt(
      Arr(Str(), { description: 'The diff lines the user reviewed, with their " ", "+" or "-" prefixes' }),
    ),
  },
  { $id: "ReviewComment" },
);

/** A file a tool changed: its absolute path, whether it was created, and the unified diff when known. */
export const FileChange = Obj(
  {
    path: Str({ description: "Absolute path" }),
    kind: Type.Union([Lit("add"), Lit("update")]),
    diff: Opt(Str({ description: "Unified diff (---/+++ headers and @@ hunks); absent when not known" })),
  },
  { $id: "FileChange" },
);

const ItemStatus = Type.Union([Lit("inProgress"), Lit("completed"), Lit("failed")]);

/** A message's text: a PayloadRef once it passes 64 KiB (deltas still carry every piece). */
const ItemText = Type.Union([Str(), PayloadRef]);

export const ThreadItem = Type.Union(
  [
    Obj({
      type: Lit("userMessage"),
      id: Str(),
      content: Arr(UserInput),
      clientMessageId: Opt(Str()),
      comments: Opt(Arr(ReviewComment)),
    }),
    Obj({ type: Lit("agentMessage"), id: Str(), text: ItemText }),
    Obj({ type: Lit("reasoning"), id: Str(), text: ItemText }),
    Obj({
      type: Lit("toolCall"),
      id: Str(),
      name: Str(),
      arguments: Any(),
      status: ItemStatus,
      result: Opt(Any({ description: "The tool's text output, or a PayloadRef when over 64 KiB" })),
      view: Opt(Any()),
      startedAt: Opt(Num({ description: "When the tool began running (live items)" })),
      durationMs: Opt(Num({ description: "How long it ran, once it ended (live items)" })),
      command: Opt(Str({ description: "bash: the command line" })),
      cwd: Opt(Str({ description: "bash: the folder it runs in" })),
      exitCode: Opt(
        Type.Union([Type.Integer(), Type.Null()], {
          description: "bash, once it ended: the exit code; null when a signal killed it",
        }),
      ),
      changes: Opt(Arr(FileChange, { description: "write and edit: the files changed, with their diffs" })),
    }),
    Obj({ type: Lit("extensionMessage"), id: Str(), customType: Str(), text: ItemText, view: Opt(Any()) }),
    Obj({ type: Lit("contextCompaction"), id: Str(), status: ItemStatus, summary: Opt(Str()) }),
  ],
  { $id: "ThreadItem" },
);

const TurnStatus = Type.Union([Lit("inProgress"), Lit("completed"), Lit("interrupted"), Lit("failed")]);
export const Turn = Obj(
  {
    id: Str(),
    status: TurnStatus,
    items: Arr(ThreadItem),
    error: Opt(Obj({ message: Str() })),
    files: Opt(Arr(FileTotals, { description: "Files changed while the turn ran (a git checkout only)" })),
  },
  { $id: "Turn" },
);

export const QueueSnapshot = Obj(
  {
    steering: Arr(Str()),
    followUp: Arr(Obj({ id: Str(), text: Str(), attachments: Opt(Num()) })),
  },
  { $id: "QueueSnapshot" },
);

export const TokenUsage = Obj(
  {
    input: Num(),
    output: Num(),
    cacheRead: Num(),
    cacheWrite: Num(),
    total: Num(),
    contextTokens: Opt(Num()),
    contextWindow: Opt(Num()),
  },
  { $id: "TokenUsage" },
);

const Placement = Type.Union([Lit("aboveEditor"), Lit("belowEditor")]);
const ViewAny = Any({
  description:
    "A declarative view: {type: text|stack|list|button|toggle|select|textField, ...} nodes (docs/app-server.md)",
});
export const Widget = Obj(
  { key: Str(), placement: Placement, lines: Opt(Arr(Str())), view: Opt(ViewAny) },
  { $id: "Widget" },
);
const UiStateFields = {
  statuses: Arr(Obj({ key: Str(), text: Str() })),
  title: Opt(Str()),
  workingMessage: Opt(Str()),
  workingVisible: Bool(),
};
export const ExtensionUi = Obj({ ...UiStateFields, widgets: Arr(Widget) }, { $id: "ExtensionUi" });

const Empty = Obj({});
const WithThread = Obj({ threadId: ThreadId });
const CwdOpt = Obj({ cwd: Opt(Str()) });
const Workspace = Obj({
  mode: Type.Union([Lit("local"), Lit("worktree")]),
  baseRef: Opt(Str()),
  carryLocalChanges: Opt(Bool()),
  environment: Opt(Str()),
});

const ResourceType = Type.Union([Lit("extensions"), Lit("skills"), Lit("prompts"), Lit("themes")]);
export const Resource = Obj(
  {
    type: ResourceType,
    path: Str(),
    name: Str(),
    enabled: Bool(),
    scope: Type.Union([Lit("user"), Lit("project"), Lit("temporary")]),
    origin: Type.Union([Lit("top-level"), Lit("package")]),
    source: Str({ description: '"auto" (a resource folder), "settings", or the package source' }),
  },
  { $id: "Resource" },
);

/** One server as the app-server's own MCP client sees it now (`mcp/list`'s `status`). */
export const McpServerStatus = Obj(
  {
    name: Str(),
    state: Str({
      description: "connecting, connected, failed, disabled, needs-auth, ... as the client names them",
    }),
    transport: Opt(Str({ description: "stdio or http, once known" })),
    tools: Num({ description: "Tools the server offers" }),
    source: Type.Union([
      Obj({ kind: Lit("file"), path: Str(), scope: Type.Union([Lit("global"), Lit("project")]) }),
      Obj({ kind: Lit("extension"), owner: Str() }),
    ]),
    error: Opt(Str({ description: "Why it is not connected, when it failed" })),
  },
  { $id: "McpServerStatus" },
);

/** A model as `model/list` lists it. */
export const Model = Obj(
  {
    id: Str({ description: "provider/model: what model fields take" }),
    provider: Str(),
    model: Str({ description: "The model's id at its provider" }),
    displayName: Str(),
    contextWindow: Num({ description: "Tokens" }),
    maxTokens: Num({ description: "Output tokens per response" }),
    reasoning: Bool(),
    supportedEfforts: Arr(Effort, { description: '["off"] for a model that does not reason' }),
    auth: Type.Union([Lit("key"), Lit("none"), Lit("missing")], {
      description: "key: a key resolves; none: the provider needs none (a local server); missing: no key",
    }),
    missingKey: Opt(Str({ description: "The environment variable to set, when auth is missing" })),
    usable: Bool(),
    isDefault: Bool({ description: "The model a new thread gets" }),
    current: Bool({ description: "The thread's model (with threadId)" }),
  },
  { $id: "Model" },
);

/** One file `fuzzyFileSearch` found. */
export const FuzzyFile = Obj(
  {
    root: Str({ description: "The folder searched" }),
    path: Str({ description: "Relative to root, with / separators" }),
    match_type: Lit("file", { description: "Codex's field; files only here" }),
    file_name: Str({ description: "The last segment of path (Codex's snake_case name)" }),
    score: Num({ description: "Higher is better" }),
    indices: Arr(Num(), { description: "Positions in path of the characters that matched the query" }),
  },
  { $id: "FuzzyFile" },
);

export interface MethodSpec {
  readonly description: string;
  readonly params: TSchema;
  readonly result: TSchema;
}
export interface NotificationSpec {
  readonly description: string;
  readonly params: TSchema;
}

const git = gitSpecs({ Thread, Warning });

const ThreadResult = Obj({ thread: Thread, warnings: Arr(Warning), ui: ExtensionUi });

/** Client → server requests. */
export const requestSpecs = {
  initialize: {
    description: "The handshake; the first request of every connection",
    params: Obj({
      clientInfo: Obj({ name: Str({ minLength: 1 }), title: Opt(Str()), version: Str() }),
      capabilities: Opt(Obj({ optOutNotificationMethods: Opt(Arr(Str())) }, { additionalProperties: true })),
    }),
    result: Obj({
      userAgent: Str(),
      serverInfo: Obj({ name: Str(), version: Str() }),
      platformOs: Str(),
    }),
  },
  "thread/start": {
    description: "Starts a thread (a new session) in cwd and subscribes the connection",
    params: Obj({
      cwd: Str({ minLength: 1 }),
      model: Opt(Str()),
      name: Opt(Str()),
      workspace: Opt(Workspace),
    }),
    result: ThreadResult,
  },
  "thread/resume": {
    description:
      "Loads a thread if needed, returns its history and live snapshots, and subscribes in one step",
    params: Obj({ threadId: ThreadId, cursor: Opt(Str()) }),
    result: Obj({
      thread: Thread,
      turns: Arr(Turn),
      nextCursor: Opt(Str({ description: "Pass back as cursor for older turns" })),
      runningTurn: Opt(Turn),
      queue: QueueSnapshot,
      usage: TokenUsage,
      ui: ExtensionUi,
      warnings: Arr(Warning),
    }),
  },
  "thread/fork": {
    description: 'Copies a thread\'s current branch into a new thread named "<source> (fork)"',
    params: Obj({ threadId: ThreadId }),
    result: ThreadResult,
  },
  "thread/list": {
    description: "Thread summaries, newest first, a page at a time",
    params: Obj({
      cursor: Opt(Str()),
      limit: Opt(Type.Integer({ minimum: 1, maximum: 1000 })),
      cwd: Opt(Str()),
      archived: Opt(Bool()),
    }),
    result: Obj({ data: Arr(ThreadSummary), nextCursor: Opt(Str()) }),
  },
  "thread/read": {
    description: "A thread without subscribing; with includeTurns, its history",
    params: Obj({ threadId: ThreadId, includeTurns: Opt(Bool()) }),
    result: Obj({ thread: Thread, turns: Opt(Arr(Turn)), nextCursor: Opt(Str()) }),
  },
  "thread/name/set": {
    description: "Names a thread",
    params: Obj({ threadId: ThreadId, name: Str() }),
    result: Empty,
  },
  "thread/unsubscribe": {
    description: "Stops this connection's notifications for a thread",
    params: WithThread,
    result: Obj({ status: Type.Union([Lit("unsubscribed"), Lit("notSubscribed")]) }),
  },
  "thread/archive": {
    description: "Moves a thread's file to the archive",
    params: WithThread,
    result: Empty,
  },
  "thread/unarchive": {
    description: "Brings an archived thread back",
    params: WithThread,
    result: Obj({ thread: Thread }),
  },
  "thread/delete": {
    description: "Permanently removes an archived thread",
    params: WithThread,
    result: Empty,
  },
  "thread/payload/read": {
    description: "A chunk (48 KiB before base64) of a value sent by reference",
    params: Obj({ threadId: ThreadId, ref: Str(), offset: Opt(Type.Integer({ minimum: 0 })) }),
    result: Obj({ data: Str({ description: "base64" }), offset: Num(), total: Num(), done: Bool() }),
  },
  "turn/start": {
    description: "Starts a turn on an idle thread; model and effort change the thread's settings first",
    params: Obj({
      threadId: ThreadId,
      input: Arr(UserInput, { minItems: 1 }),
      clientMessageId: Opt(Str()),
      comments: Opt(Arr(ReviewComment)),
      model: Opt(Str({ minLength: 1, description: "provider/model (or a model id): from this turn on" })),
      effort: Opt(Effort),
    }),
    result: Obj({ turn: Turn }),
  },
  "turn/steer": {
    description: "Adds input to the running turn",
    params: Obj({ threadId: ThreadId, input: Arr(UserInput, { minItems: 1 }), expectedTurnId: Opt(Str()) }),
    result: Obj({ turnId: Str() }),
  },
  "turn/interrupt": {
    description: "Stops the running turn; a stale turnId answers turnMismatch",
    params: Obj({ threadId: ThreadId, turnId: Opt(Str()) }),
    result: Empty,
  },
  "turn/queue/add": {
    description: "Queues an input that starts a turn of its own once the thread is idle",
    params: Obj({
      threadId: ThreadId,
      input: Arr(UserInput, { minItems: 1 }),
      clientMessageId: Opt(Str()),
      comments: Opt(Arr(ReviewComment)),
    }),
    result: Obj({ id: Str() }),
  },
  "turn/queue/remove": {
    description: "Removes a queued input that has not started",
    params: Obj({ threadId: ThreadId, id: Str() }),
    result: Obj({ removed: Bool() }),
  },
  "config/read": {
    description: "Settings with their origins, SHA-256 versions, defaults, paths and parse errors",
    params: CwdOpt,
    result: Obj({
      settings: Type.Record(Str(), Any()),
      defaults: Type.Record(Str(), Any()),
      origins: Type.Record(Str(), Type.Union([Lit("global"), Lit("project")])),
      versions: Obj({ global: Str(), project: Opt(Str()) }),
      paths: Obj({ global: Str(), project: Opt(Str()) }),
      errors: Arr(Warning),
    }),
  },
  "config/write": {
    description: "Sets one dotted key in the global or project settings file",
    params: Obj({
      scope: Type.Union([Lit("global"), Lit("project")]),
      cwd: Opt(Str()),
      key: Str({ minLength: 1 }),
      value: Any({ description: "null deletes the key" }),
      expectedVersion: Opt(Str()),
    }),
    result: Obj({ version: Str(), path: Str() }),
  },
  "project/trust/read": {
    description: "Whether a project is trusted, and whether it has resources that need trust",
    params: Obj({ cwd: Str({ minLength: 1 }) }),
    result: Obj({ trusted: Type.Union([Bool(), Type.Null()]), needsTrust: Bool() }),
  },
  "project/trust/write": {
    description: "Records a trust decision for a project",
    params: Obj({ cwd: Str({ minLength: 1 }), trusted: Bool() }),
    result: Empty,
  },
  "command/list": {
    description: "The slash commands a thread in cwd offers",
    params: CwdOpt,
    result: Obj({ commands: Arr(Obj({ name: Str(), description: Opt(Str()), source: Str() })) }),
  },
  "tool/list": {
    description:
      "The tools a new thread in cwd registers (hidden ones left out), and the resolved defaultTools",
    params: CwdOpt,
    result: Obj({
      tools: Arr(Obj({ name: Str(), description: Str(), source: Str() })),
      defaultTools: Arr(Str()),
    }),
  },
  "tool/settings/read": {
    description: "The tools /tools manages (tools.json), their settings masked, and the classifier models",
    params: Empty,
    result: Obj({
      tools: Arr(Obj({ name: Str(), enabled: Bool(), settings: Type.Record(Str(), Str()) })),
      classifiers: Arr(Obj({ provider: Str(), id: Str(), name: Str() })),
      warning: Opt(Str({ description: "tools.json exists but cannot be used" })),
    }),
  },
  "tool/settings/write": {
    description: "Sets one setting of a managed tool in tools.json; null deletes it",
    params: Obj({
      name: Str({ minLength: 1 }),
      key: Str({ minLength: 1 }),
      value: Type.Union([Str(), Bool(), Type.Null()]),
    }),
    result: Empty,
  },
  "resource/list": {
    description:
      "Extensions, skills, prompt templates and themes a thread in cwd would find, installing nothing",
    params: CwdOpt,
    result: Obj({ resources: Arr(Resource) }),
  },
  "resource/set": {
    description: "Loads or skips one resource with a + or - pattern in the settings of the scope defining it",
    params: Obj({ cwd: Opt(Str()), type: ResourceType, path: Str({ minLength: 1 }), enabled: Bool() }),
    result: Obj({ resource: Resource }),
  },
  "mcp/list": {
    description: "The MCP servers of the global mcp.json and an explicitly trusted project's",
    params: CwdOpt,
    result: Obj({
      servers: Arr(
        Obj({
          name: Str(),
          scope: Type.Union([Lit("global"), Lit("project")]),
          source: Str(),
          override: Opt(Str()),
          transport: Type.Union([Lit("stdio"), Lit("http")]),
          target: Str(),
          description: Opt(Str()),
          enabled: Bool(),
          exposure: Opt(Str()),
        }),
      ),
      errors: Arr(Str()),
      paths: Obj({ global: Str(), project: Opt(Str()) }),
      status: Opt(
        Arr(McpServerStatus, {
          description:
            "The servers of the app-server's own MCP client (whichever extension provides it) as it sees them now; absent when none does",
        }),
      ),
    }),
  },
  "mcp/update": {
    description: "Turns a server on or off, or changes its exposure, where /mcp would save it",
    params: Obj({ cwd: Opt(Str()), name: Str({ minLength: 1 }), enabled: Opt(Bool()), exposure: Opt(Str()) }),
    result: Obj({ path: Str() }),
  },
  "mcp/add": {
    description: "Adds or replaces an mcpServers entry",
    params: Obj({
      scope: Type.Union([Lit("global"), Lit("project")]),
      cwd: Opt(Str()),
      name: Str({ minLength: 1 }),
      config: Type.Record(Str(), Any()),
    }),
    result: Obj({ replaced: Bool() }),
  },
  "mcp/remove": {
    description: "Removes an mcpServers entry",
    params: Obj({
      scope: Type.Union([Lit("global"), Lit("project")]),
      cwd: Opt(Str()),
      name: Str({ minLength: 1 }),
    }),
    result: Obj({ removed: Bool() }),
  },
  "ui/event": {
    description:
      "A press of a button, or a change of a field, in a widget's view; every ctx.ui.onViewEvent handler of the thread gets it",
    params: Obj({
      threadId: ThreadId,
      widgetKey: Str({ minLength: 1 }),
      id: Str({ minLength: 1 }),
      value: Opt(
        Type.Union([Str(), Bool()], {
          description: "A text or select field's string, a toggle's boolean; none for a button",
        }),
      ),
    }),
    result: Empty,
  },
  "model/list": {
    description:
      "The usable models (a key, a local server, a sign-in), with their limits and thinking levels; includeUnusable adds the rest",
    params: Obj({ threadId: Opt(ThreadId), includeUnusable: Opt(Bool()) }),
    result: Obj({
      data: Arr(Model),
      current: Opt(Str({ description: "The thread's model (with threadId), or the one a new thread gets" })),
    }),
  },
  "thread/settings/update": {
    description: "Changes a loaded thread's model and thinking level; they apply from its next model request",
    params: Obj({
      threadId: ThreadId,
      model: Opt(Str({ minLength: 1, description: "provider/model, or a model id" })),
      effort: Opt(Effort),
    }),
    result: Obj({ model: Opt(Str()), effort: Effort }),
  },
  fuzzyFileSearch: {
    description:
      "Files whose path matches query fuzzily (for @ mentions), best first, over the thread's workspace or roots; ignored files are left out",
    params: Obj({
      query: Str(),
      threadId: Opt(ThreadId),
      roots: Opt(Arr(Str({ minLength: 1 }), { maxItems: 16 })),
      limit: Opt(Type.Integer({ minimum: 1, maximum: 1000, description: "Default 50" })),
      cancellationToken: Opt(
        Str({ description: "A later search with the same token makes this one answer with no files" }),
      ),
    }),
    result: Obj({
      files: Arr(FuzzyFile),
      truncated: Opt(Bool({ description: "A root had more files than the server lists (500,000)" })),
    }),
  },
  "mcpServerStatus/list": {
    description:
      "MCP servers as a thread's MCP client sees them now (state, tool count, error); without threadId, the server's own session's",
    params: Obj({ threadId: Opt(ThreadId) }),
    result: Obj({ data: Arr(McpServerStatus) }),
  },
  "server/diagnostics": {
    description: "Process memory, loaded threads, connections and queue depths of the shared server",
    params: Empty,
    result: Obj({
      process: Obj({ pid: Num(), residentMemoryBytes: Num(), heapUsedBytes: Num(), uptimeMs: Num() }),
      threads: Arr(Obj({ id: Str(), status: ThreadStatus, subscribers: Num(), queued: Num() })),
      connections: Arr(
        Obj({ id: Str(), transport: Str(), initialized: Bool(), queuedBytes: Num(), inFlight: Num() }),
      ),
    }),
  },
  ...git.requests,
  ...accountRequests,
} as const satisfies Record<string, MethodSpec>;

const TurnRef = { threadId: Str(), turnId: Str() };

/** Server → client notifications. */
export const notificationSpecs = {
  "thread/started": { description: "A thread was started or forked", params: Obj({ thread: Thread }) },
  "thread/status/changed": {
    description: "A thread's status changed",
    params: Obj({ threadId: Str(), status: ThreadStatus }),
  },
  "thread/name/updated": {
    description: "A thread was named",
    params: Obj({ threadId: Str(), name: Opt(Str()) }),
  },
  "thread/closed": { description: "A thread unloaded", params: Obj({ threadId: Str() }) },
  "thread/tokenUsage/updated": {
    description: "Token usage of the thread after a model response",
    params: Obj({ ...TurnRef, usage: TokenUsage }),
  },
  "thread/settings/updated": {
    description: "A thread's model or thinking level changed",
    params: Obj({ threadId: Str(), model: Opt(Str()), effort: Effort }),
  },
  "turn/started": { description: "A turn started", params: Obj({ threadId: Str(), turn: Turn }) },
  "turn/completed": {
    description: "A turn ended: completed, interrupted or failed",
    params: Obj({ threadId: Str(), turn: Turn }),
  },
  "turn/queue/updated": {
    description: "The thread's undelivered steers and queued inputs, whole",
    params: Obj({ threadId: Str(), ...QueueSnapshot.properties }),
  },
  "item/started": { description: "An item began", params: Obj({ ...TurnRef, item: ThreadItem }) },
  "item/completed": {
    description: "An item ended (the authoritative copy)",
    params: Obj({ ...TurnRef, item: ThreadItem }),
  },
  "item/agentMessage/delta": {
    description: "Text of an agent message",
    params: Obj({ ...TurnRef, itemId: Str(), delta: Str() }),
  },
  "item/reasoning/delta": {
    description: "Text of a reasoning item",
    params: Obj({ ...TurnRef, itemId: Str(), delta: Str() }),
  },
  "item/toolCall/outputDelta": {
    description:
      "New output of a running tool: append delta to what the item showed, or with reset replace it by delta",
    params: Obj({
      ...TurnRef,
      itemId: Str(),
      delta: Str(),
      reset: Opt(Lit(true, { description: "The output so far is replaced (the tool rewrote its output)" })),
    }),
  },
  error: {
    description: "A turn failure or a dropped queued input (not a JSON-RPC error)",
    params: Obj({
      threadId: Opt(Str()),
      turnId: Opt(Str()),
      clientMessageId: Opt(Str()),
      error: Obj({ message: Str() }),
      willRetry: Bool(),
    }),
  },
  warning: {
    description: "Something the user should know that did not stop the work",
    params: Obj({ ...Warning.properties, threadId: Opt(Str()) }),
  },
  "serverRequest/cancelled": {
    description: "A server request was withdrawn; do not answer it",
    params: Obj({ requestId: Type.Union([Str(), Num()]), threadId: Opt(Str()) }),
  },
  "ui/notify": {
    description: "A notice from an extension",
    params: Obj({
      threadId: Str(),
      message: Str(),
      level: Type.Union([Lit("info"), Lit("warning"), Lit("error")]),
    }),
  },
  "ui/state": {
    description: "The thread's extension UI but the widgets, whole",
    params: Obj({ threadId: Str(), ...UiStateFields }),
  },
  "ui/widget": {
    description: "One widget set or replaced, or {threadId, key} when removed",
    params: Obj({
      threadId: Str(),
      key: Str(),
      placement: Opt(Placement),
      lines: Opt(Arr(Str())),
      view: Opt(ViewAny),
    }),
  },
  ...git.notifications,
  ...accountNotifications,
} as const satisfies Record<string, NotificationSpec>;

/** Server → client requests. */
export const serverRequestSpecs = {
  "ui/dialog": {
    description: "An extension or a sign-in asks the user; reply {value}, {confirmed} or {} to cancel",
    params: Obj({
      threadId: Opt(Str({ description: "The thread asking; absent for a sign-in's question (loginId)" })),
      loginId: Opt(Str({ description: "The sign-in asking (account/login/start), instead of a thread" })),
      kind: Type.Union([Lit("select"), Lit("confirm"), Lit("input"), Lit("editor")]),
      title: Str(),
      options: Opt(Arr(Str())),
      message: Opt(Str()),
      placeholder: Opt(Str()),
      prefill: Opt(Str()),
      secret: Opt(Lit(true, { description: "Mask what is typed (a key, a token)" })),
      timeoutMs: Opt(Num()),
    }),
    result: Obj({ value: Opt(Str()), confirmed: Opt(Bool()) }),
  },
  "item/toolCall/requestUserInput": {
    description:
      "ask_user's questions, all at once; reply {answers: {<id>: {label, note?} | {other}}} (a skipped question left out) or {} to dismiss them and stop the turn",
    params: Obj({
      threadId: Str(),
      turnId: Opt(Str()),
      itemId: Str({ description: "The toolCall item asking" }),
      questions: Arr(
        Obj({
          id: Str(),
          text: Str(),
          options: Arr(
            Obj({
              label: Str({ description: 'Ends in "(Recommended)" for the recommended one' }),
              description: Opt(Str()),
            }),
          ),
        }),
      ),
    }),
    result: Obj({
      answers: Opt(
        Type.Record(Str(), Type.Union([Obj({ label: Str(), note: Opt(Str()) }), Obj({ other: Str() })])),
      ),
    }),
  },
} as const satisfies Record<string, MethodSpec>;

/** The protocol's shapes as TypeScript types: what the handlers build and return. */
export type ThreadStatusWire = Static<typeof ThreadStatus>;
export type WarningWire = Static<typeof Warning>;
export type ThreadWire = Static<typeof Thread>;
export type ThreadSummaryWire = Static<typeof ThreadSummary>;
export type UserInputWire = Static<typeof UserInput>;
export type ReviewCommentWire = Static<typeof ReviewComment>;
export type ItemWire = Static<typeof ThreadItem>;
export type TurnWire = Static<typeof Turn>;
export type QueueSnapshotWire = Static<typeof QueueSnapshot>;
export type TokenUsageWire = Static<typeof TokenUsage>;
export type ExtensionUiWire = Static<typeof ExtensionUi>;
export type ThreadWorkspaceWire = Static<typeof ThreadWorkspace>;
export type ParamsOf<M extends RequestName> = Static<(typeof requestSpecs)[M]["params"]>;
export type ResultOf<M extends RequestName> = Static<(typeof requestSpecs)[M]["result"]>;

export type RequestName = keyof typeof requestSpecs;
export type NotificationName = keyof typeof notificationSpecs;
export type ServerRequestName = keyof typeof serverRequestSpecs;

/** Shared schemas with an `$id`, written as definitions of their own. */
export const sharedSchemas = [
  ThreadStatus,
  Warning,
  Thread,
  ThreadSummary,
  PayloadRef,
  UserInput,
  ReviewComment,
  FileChange,
  ThreadItem,
  Turn,
  QueueSnapshot,
  TokenUsage,
  Widget,
  ExtensionUi,
  ...gitSharedSchemas,
  ...accountSharedSchemas,
  Resource,
  McpServerStatus,
  Effort,
  Model,
  FuzzyFile,
] as const;

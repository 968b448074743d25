/**
 * Every error code KnightCode raises, with what it means. An error's message says what went wrong and where; the
 * code is stable, so programs can match on it. `docs/errors.md` is generated from this table, and a test checks
 * that every code the sources raise is listed here.
 */
export const errorCodes = Object.freeze({
  KC_ERR_AUTH_FILE:
    "`auth.json` cannot be used (not valid JSON, nested too deep, a directory, no permission), so a key cannot be saved into it or removed from it (an empty key is refused too). Fix or remove the file.",
  KC_ERR_BUSY:
    "The session is already working on a prompt; steer it, queue a follow-up or wait for it to settle.",
  KC_ERR_CLASSIFY:
    "A `classify()` call failed: the model did not call the label tool or answered an unknown label.",
  KC_ERR_COMPACTION_ABORTED:
    "A compaction wrote no entry because a `session_before_compact` handler cancelled it or it was aborted.",
  KC_ERR_COMPACTION_FAILED:
    "A compaction wrote no entry: nothing to summarise, no summariser answered, or the summary request failed.",
  KC_ERR_DISPOSE: "A service failed while it was being disposed; the others were still disposed.",
  KC_ERR_DISPOSED: "The container or session scope was already disposed.",
  KC_ERR_EXTENSION_HANDLER:
    "An extension refused the session from a `session_start` handler (`ExtensionStartupError`).",
  KC_ERR_EXTENSION_LOAD: "An extension file could not be found, imported or run; the message names the file.",
  KC_ERR_EXTENSION_STARTUP: "Thrown by an extension (`ExtensionStartupError`) to refuse an unsafe session.",
  KC_ERR_FLAG_CONFLICT: "Two extensions registered the same command-line flag.",
  KC_ERR_INVALID_COMMAND:
    "A command name is not valid (letters, digits, `:`, `.`, `_`, `-`; no leading symbol).",
  KC_ERR_INVALID_FLAG: "A flag name is not valid, or it clashes with one of KnightCode's own options.",
  KC_ERR_INVALID_HANDLER: "`on()` was given something that is not a function.",
  KC_ERR_INVALID_MCP_SERVER: "An MCP server registration has an invalid name or configuration.",
  KC_ERR_INVALID_MESSAGE:
    "A message sent to the session is malformed (for example a custom message without a type).",
  KC_ERR_INVALID_MODE: "A mode registration has an invalid name or no `run` function.",
  KC_ERR_INVALID_PROVIDER: "A provider or virtual model registration is invalid (name, models or functions).",
  KC_ERR_INVALID_RETURN:
    "A transform handler returned a value of the wrong shape for its event; it was reported and skipped.",
  KC_ERR_INVALID_TOKEN: "A service token id is not dotted lower camel case (`core.sessionStore`).",
  KC_ERR_INVALID_TOOL:
    "A tool definition is invalid (name, parameters schema, exposure or execute function).",
  KC_ERR_MCP_SERVER_CONFLICT: "An MCP server name is already registered by another extension.",
  KC_ERR_MISSING_SERVICE: "A plugin or an API method needs a service token that no plugin provides.",
  KC_ERR_NOT_AVAILABLE:
    "The operation is not available in this session or host (the message says what is missing).",
  KC_ERR_NOT_A_PARTICIPANT:
    "An extension of this origin may not handle the event (project extensions and `project_trust`).",
  KC_ERR_NO_SESSION:
    "A call that acts for a session (a module-scope model call) was made outside every session's code while several are open.",
  KC_ERR_NO_MODEL: "No model is selected or configured; the message lists how to configure one.",
  KC_ERR_PACKAGE:
    "A package command failed (npm or git failed, with its output quoted; nothing to offer; already installed; a manifest entry, folder or file that resolves outside the package's own folder); settings are unchanged.",
  KC_ERR_PACKAGE_SOURCE:
    "A package source is not npm:<name>[@version], git:<host>/<path>[@ref], a git URL or a local path.",
  KC_ERR_REGISTER_AFTER_START:
    "A registration that is only allowed while the extension factory runs came later.",
  KC_ERR_SCOPE:
    "A service was provided in the wrong scope (a session token as a root value, or the reverse).",
  KC_ERR_SERVICE_CONFLICT:
    "Two extensions provide the same service reference and neither is a default (`fallback`); switch one off.",
  KC_ERR_SESSION_AMBIGUOUS: "A session id prefix matches more than one session; give more of the id.",
  KC_ERR_SESSION_CLOSED: "The session log was closed; open it again.",
  KC_ERR_SESSION_CURSOR: "A session listing's cursor is not one a page of that listing gave out.",
  KC_ERR_SESSION_ENTRY:
    "The session has no entry with that id, or the entry cannot be used for this operation.",
  KC_ERR_SESSION_INVALID: "A session file is malformed; the message names the file and line.",
  KC_ERR_SESSION_IO:
    "Reading or writing a session file failed; the message names the file and the system error.",
  KC_ERR_SESSION_LOCKED: "Another live process has the session file open.",
  KC_ERR_SESSION_NOT_FOUND: "No session file matches the path or id.",
  KC_ERR_SETTINGS_WRITE:
    "A settings file was not changed: the key or value is invalid, the file is not valid JSON, the project is not trusted, or the file changed since it was read (`data.reason` says which).",
  KC_ERR_STALE_CONTEXT:
    "An API object or context was used after its session was reloaded, replaced or shut down.",
  KC_ERR_STARTUP_FAILED:
    "The session cannot prompt because an extension refused to start it; fix the cause and reload.",
  KC_ERR_STALLED:
    "A prompt, or the start of a session, waits for an extension handler whose promise never settles and nothing is left that could settle it.",
  KC_ERR_STATE:
    "The session runtime is not in a state that allows the operation (for example reload while loading).",
  KC_ERR_TOOL_CONFLICT:
    "Two extensions registered a tool of the same name and neither registered it as a default (`fallback`).",
  KC_ERR_TOOL_SETTINGS:
    "`tools.json` was not changed: no extension declared that tool, the key or value is malformed, or the file is malformed (`data.reason` says which).",
  KC_ERR_UNKNOWN_ENTRY: "The session tree has no entry with that id.",
  KC_ERR_UNKNOWN_EVENT:
    "`on()` or a dispatch named an event that is not in the catalogue; the message suggests the nearest.",
  KC_ERR_WRONG_DISPATCH:
    "An event was dispatched with another kind's method (a gate emitted as a notification).",
});

export type ErrorCode = keyof typeof errorCodes;

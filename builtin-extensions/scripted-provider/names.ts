/** The identity of the scripted provider, apart from its request code (which loads on the first request). */
export const SCRIPTED_PROVIDER = "scripted";
export const SCRIPTED_API = "scripted";
export const SCRIPTED_MODEL = {
  id: "scripted",
  name: "Scripted",
  contextWindow: 200000,
  maxTokens: 32000,
  reasoning: true,
} as const;

/** The flag naming the script file. */
export const SCRIPT_FLAG = "script";

/** The identity of the `openai-completions` implementation, apart from its request code (which loads on first use). */
export const OPENAI_COMPLETIONS_API = "openai-completions";
/** The name the implementation is registered under; custom providers reach it through its `api`. */
export const OPENAI_COMPLETIONS_PROVIDER = "openai-completions";

/**
 * `ui_prompt_start` and `ui_prompt_end` around every dialog (select, confirm, input, editor) that a bound UI shows,
 * whichever mode bound it; and a widget's declarative view as text lines for a UI that draws no views. The SDK wraps the host's UI once, where it binds it; a session without a UI shows no
 * dialog and fires nothing. A dialog opened from inside a handler of these events (or from inside another dialog's
 * wait) is part of the outer one and fires no events of its own, so handlers cannot loop.
 */
import type { ExtensionUIContext, SessionRuntime, UiPromptEvent, WidgetOptions } from "../../kernel/index.js";
import { isWidgetView, viewToLines } from "../../plugins/kit/views.js";

const DIALOGS = new Set<string>(["select", "confirm", "input", "editor"]);

/** Wraps `ui` so its dialogs fire the prompt events on the runtime `current()` returns (none while it returns undefined). */
export function withPromptEvents(
  ui: ExtensionUIContext,
  current: () => SessionRuntime | undefined,
): ExtensionUIContext {
  let depth = 0;
  const around = async (kind: UiPromptEvent["kind"], title: unknown, show: () => Promise<unknown>) => {
    const runtime = depth === 0 ? current() : undefined;
    const event: UiPromptEvent = { kind, title: typeof title === "string" ? title : String(title ?? "") };
    depth++;
    try {
      if (runtime) await runtime.bus.emit("ui_prompt_start", { ...event }, runtime.context());
      return await show();
    } finally {
      if (runtime) await runtime.bus.emit("ui_prompt_end", { ...event }, runtime.context());
      depth--;
    }
  };
  return new Proxy(ui, {
    get(target, property) {
      // A host that draws no views shows a widget's view as text lines.
      if (property === "setWidget" && target.drawsViews !== true)
        return (key: string, content: unknown, options?: WidgetOptions) =>
          target.setWidget(
            key,
            isWidgetView(content)
              ? viewToLines(content.view)
              : (content as Parameters<typeof target.setWidget>[1]),
            options,
          );
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !DIALOGS.has(property)) return value.bind(target);
      return (...args: unknown[]) =>
        around(property as UiPromptEvent["kind"], args[0], () => value.apply(target, args));
    },
  });
}

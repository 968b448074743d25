/** Message and entry renderers registered by extensions, looked up by custom type when a host renders. */
import {
  type Disposable,
  type EntryRenderer,
  type ExtensionInfo,
  type MessageRenderer,
  type RendererService,
  toDisposable,
} from "../../kernel/index.js";

export class RendererRegistry implements RendererService {
  private readonly messages = new Map<string, MessageRenderer>();
  private readonly entries = new Map<string, EntryRenderer>();

  registerMessageRenderer(owner: ExtensionInfo, customType: string, renderer: MessageRenderer): Disposable {
    this.messages.set(customType, renderer);
    return toDisposable(() => {
      if (this.messages.get(customType) === renderer) this.messages.delete(customType);
    }, `${owner.id} message renderer ${customType}`);
  }

  registerEntryRenderer(owner: ExtensionInfo, customType: string, renderer: EntryRenderer): Disposable {
    this.entries.set(customType, renderer);
    return toDisposable(() => {
      if (this.entries.get(customType) === renderer) this.entries.delete(customType);
    }, `${owner.id} entry renderer ${customType}`);
  }

  getMessageRenderer(customType: string): MessageRenderer | undefined {
    return this.messages.get(customType);
  }

  getEntryRenderer(customType: string): EntryRenderer | undefined {
    return this.entries.get(customType);
  }
}

// In-memory stand-ins for Pi's services, recording what plugins asked of them.
import type { FixedTool, HostServices, PiToolRegistry, QueuedMessage, SessionServices } from "../../src/kernel/services.ts";

export interface FakeServices extends HostServices {
  readonly piTools: PiToolRegistry & { readonly tools: Map<string, FixedTool>; readonly active: Set<string> };
  readonly session: SessionServices & {
    readonly messages: QueuedMessage[];
    readonly log: { customType: string; data: unknown }[];
    switchBranch(entries: { customType: string; data: unknown }[]): void;
  };
}

export function fakeServices(): FakeServices {
  const tools = new Map<string, FixedTool>();
  const active = new Set<string>();
  const messages: QueuedMessage[] = [];
  let log: { customType: string; data: unknown }[] = [];
  const listeners = new Set<() => void>();
  return {
    piTools: {
      tools,
      active,
      define: (tool) => void tools.set(tool.name, tool),
      setActive: (name, on) => void (on ? active.add(name) : active.delete(name)),
    },
    session: {
      messages,
      get log() {
        return log;
      },
      append: (customType, data) => void log.push({ customType, data }),
      entries: (customType) => log.filter((entry) => entry.customType === customType).map((entry) => entry.data),
      queueMessage: (message) => void messages.push(message),
      onBranchChange: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      switchBranch(entries) {
        log = [...entries];
        for (const listener of listeners) listener();
      },
    },
  };
}

import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { effectiveRoots, shownRootFolder } from "../../src/config/roots.ts";
import { describeError } from "../../src/kernel/errors.ts";
import { clientState } from "../../src/kernel/host-state.ts";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { ConnectionContext, LiveConnection } from "../../src/kernel/types.ts";

interface Root {
  readonly uri: string;
  readonly name: string;
}

/** The roots each client answers `roots/list` with; a connection handed to the next session (a fresh copy of this module after /reload) keeps its entry. */
const served = clientState<readonly Root[]>("roots.served");

function foldersOf(connection: ConnectionContext): string[] | false {
  return effectiveRoots(connection.host.config, connection.server.definition, connection.host.cwd);
}

function rootsOf(connection: ConnectionContext): Root[] | false {
  const folders = foldersOf(connection);
  return folders === false ? false : folders.map((folder) => ({ uri: pathToFileURL(folder).href, name: basename(folder) || folder }));
}

/** A root folder that is not there is sent as configured (it may appear later), but the server's log says so. */
function noteMissingFolders(connection: ConnectionContext): void {
  const folders = foldersOf(connection);
  for (const folder of folders === false ? [] : folders) {
    const shown = shownRootFolder(folder);
    if (shown !== folder) connection.log(`[pi-mcp] root ${shown}: sent as configured\n`);
  }
}

/**
 * Roots: each server gets its `roots` setting (else the top-level one, else
 * Pi's working folder) as `file://` roots; `roots: false` declares no roots
 * capability to it. When what a live server would receive changes (settings
 * applied in the session, or a session that takes the connection over), it
 * is told with `notifications/roots/list_changed`.
 */
export class RootsPlugin implements KernelPlugin {
  readonly name = "roots";
  apply(kernel: Kernel): void {
    kernel.hooks.clientCapabilities.tap(this.name, (capabilities, connection) =>
      rootsOf(connection) === false ? capabilities : { ...capabilities, roots: { listChanged: true } },
    );
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      const roots = rootsOf(connection);
      if (roots === false) return;
      connection.client.setRequestHandler("roots/list", async () => ({ roots: [...(served.get(connection.client) ?? roots)] }));
      // A client that already served roots (a connection from an earlier session) hears about a different set.
      if (served.has(connection.client)) announce(connection, roots);
      else served.set(connection.client, roots);
      noteMissingFolders(connection);
    });
    kernel.hooks.connectionUpdated.tap(this.name, (connection) => {
      const roots = rootsOf(connection);
      if (roots === false || !served.has(connection.client)) return;
      if (announce(connection, roots)) noteMissingFolders(connection);
    });
  }
}

/** Serves `roots` from now on and, when they differ from what was served, tells the server. */
function announce(connection: LiveConnection, roots: readonly Root[]): boolean {
  const before = served.get(connection.client);
  served.set(connection.client, roots);
  if (JSON.stringify(before) === JSON.stringify(roots)) return false;
  connection.log(`[pi-mcp] roots changed: ${roots.map((root) => root.uri).join(", ")}\n`);
  connection.client
    .sendRootsListChanged()
    .catch((error: unknown) => connection.log(`[pi-mcp] notifications/roots/list_changed failed: ${describeError(error)}\n`));
  return true;
}

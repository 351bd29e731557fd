import type { Scope } from "../kernel/settings.ts";

/** The hosts `import --from` knows by name; any other value is a file path. */
export type SourceFormat = "pi" | "claude" | "cursor" | "vscode" | "generic";

/** One file a source reads, and the scope its definitions are written to unless `-l` says project. */
export interface SourceFile {
  readonly file: string;
  readonly scope: Scope;
  readonly format: SourceFormat;
  /** Which top-level key holds the definitions (VS Code: `servers`; the others: `mcpServers`). */
  readonly key?: "mcpServers" | "servers" | "mcp.servers";
  /** A project-level file of another host: read only when the project is trusted. */
  readonly projectLevel: boolean;
}

/** What became of one file of a source. */
export interface SourceStatus {
  readonly file: string;
  readonly scope: Scope;
  readonly status: "read" | "missing" | "untrusted";
}

/**
 * The outcome of mapping one source definition: an equivalent pi-mcp
 * definition (with notes on what was left out on purpose), or the reasons it
 * cannot be expressed. Reasons and notes name field paths, never values.
 */
export type Mapped =
  | { readonly ok: true; readonly definition: Record<string, unknown>; readonly notes: readonly string[] }
  | { readonly ok: false; readonly reasons: readonly string[] };

export interface ImportedServer {
  readonly name: string;
  readonly scope: Scope;
  /** Exactly what is (or, with --dry-run, would be) written under `mcp.servers.<name>`. */
  readonly definition: Record<string, unknown>;
  readonly source: string;
  readonly notes: readonly string[];
}

export interface SkippedServer {
  readonly name: string;
  readonly source: string;
  readonly reasons: readonly string[];
}

export interface ConflictingServer {
  readonly name: string;
  readonly scope: Scope;
  readonly source: string;
}

/** The `import --json` document: a contract, documented in the README. */
export interface ImportDocument {
  readonly dryRun: boolean;
  readonly sources: readonly SourceStatus[];
  readonly imported: readonly ImportedServer[];
  readonly skipped: readonly SkippedServer[];
  readonly conflicts: readonly ConflictingServer[];
}

import { changeServers, type Target } from "../config/mutate.ts";
import type { CommandEnvironment } from "../kernel/commands.ts";
import { readJsonFile } from "../config/files.ts";
import { globalSettingsPath, projectSettingsPath } from "../config/paths.ts";
import type { Scope } from "../kernel/settings.ts";
import { PiMcpError } from "../kernel/errors.ts";
import { mapClaude } from "./claude.ts";
import { mapCursor } from "./cursor.ts";
import { mapGeneric } from "./generic.ts";
import { readSourceFile } from "./jsonc.ts";
import { referencedNames, sameDefinition } from "./mapping.ts";
import { PI_OVERRIDE_KEYS, isPiOverride, mapPi } from "./pi.ts";
import { HOST_NAMES, sourcesFor } from "./sources.ts";
import type {
  ConflictingServer,
  ImportDocument,
  ImportedServer,
  Mapped,
  SkippedServer,
  SourceFile,
  SourceFormat,
  SourceStatus,
} from "./types.ts";
import { mapVscode } from "./vscode.ts";
import { ownValue, isRecord } from "../safety/keys.ts";

export interface ImportRequest {
  /** `pi`, `claude`, `cursor`, `vscode`, or a file path. */
  readonly from: string;
  /** `-l`: write every definition to the project's settings. */
  readonly local: boolean;
  readonly dryRun: boolean;
  /** Overwrite definitions of the same name instead of reporting them as conflicts. */
  readonly replace: boolean;
}

const MAPPERS: Readonly<Record<SourceFormat, (name: string, raw: unknown) => Mapped>> = {
  pi: mapPi,
  claude: mapClaude,
  cursor: mapCursor,
  vscode: mapVscode,
  generic: mapGeneric,
};

interface Candidate {
  readonly name: string;
  readonly source: string;
  readonly format: SourceFormat;
  readonly scope: Scope;
  readonly mapped: Mapped;
}

/**
 * Reads the source's definitions, maps each one, and writes every importable
 * definition through the same locked, validated write as `add`: one write per
 * settings file (global and, for project-level sources or `-l`, project).
 * With `dryRun` nothing is written; the document says what would be.
 */
export async function runImport(request: ImportRequest, env: CommandEnvironment): Promise<ImportDocument> {
  const spec = sourcesFor(request.from, env);
  const sources: SourceStatus[] = [];
  const candidates: Candidate[] = [];
  const skipped: SkippedServer[] = [];
  let piGlobal: Record<string, unknown> = {};

  for (const file of spec.files) {
    if (file.projectLevel && !env.projectTrusted) {
      sources.push({ file: file.file, scope: file.scope, status: "untrusted" });
      continue;
    }
    const read = await readSourceFile(file.file, file.format !== "pi" && file.format !== "claude");
    if (!read.exists) {
      if (spec.explicit) throw new PiMcpError("not_found", `${file.file} does not exist; nothing was imported`);
      sources.push({ file: file.file, scope: file.scope, status: "missing" });
      continue;
    }
    if (read.problem) throw new PiMcpError("unreadable_settings", `${file.file} ${read.problem}; nothing was imported`);
    const { servers, format } = serversOf(file, read.data ?? {}, spec.explicit);
    sources.push({ file: file.file, scope: file.scope, status: "read" });
    const scope: Scope = request.local ? "project" : file.scope;
    for (const [name, raw] of Object.entries(servers)) {
      const mapped =
        format === "pi" && file.scope === "project" ? mapPiProjectEntry(name, raw, piGlobal, request.local) : MAPPERS[format](name, raw);
      candidates.push({ name, source: file.file, format, scope, mapped });
    }
    if (format === "pi" && file.scope === "global" && !spec.explicit) piGlobal = servers;
  }

  // A later file wins for the same name in the same settings file, as it does in its host.
  const winners = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const key = `${candidate.scope}\u0000${candidate.name}`;
    const earlier = winners.get(key);
    if (earlier)
      skipped.push({
        name: earlier.name,
        source: earlier.source,
        reasons: [`replaced by the definition in ${candidate.source}, as in ${HOST_NAMES[candidate.format]}`],
      });
    winners.set(key, candidate);
  }

  const planned: ImportedServer[] = [];
  for (const candidate of winners.values()) {
    if (!candidate.mapped.ok) skipped.push({ name: candidate.name, source: candidate.source, reasons: candidate.mapped.reasons });
    else
      planned.push({
        name: candidate.name,
        scope: candidate.scope,
        source: candidate.source,
        definition: candidate.mapped.definition,
        notes: [...candidate.mapped.notes],
      });
  }

  if (planned.some((server) => server.scope === "project") && env.savedTrust !== true) {
    throw new PiMcpError(
      "not_trusted",
      `project scope needs saved trust for ${env.cwd}: trust the project in Pi first${env.surface === "cli" ? " (or pass --approve)" : ""}; nothing was imported`,
    );
  }

  const targets: Record<Scope, Target> = {
    global: { scope: "global", file: globalSettingsPath(env.agentDir), agentDir: env.agentDir },
    project: { scope: "project", file: projectSettingsPath(env.cwd), agentDir: env.agentDir },
  };
  const existing: Partial<Record<Scope, Record<string, unknown>>> = {};
  for (const scope of new Set(planned.map((server) => server.scope))) existing[scope] = await currentServers(targets[scope].file);

  const imported: ImportedServer[] = [];
  const conflicts: ConflictingServer[] = [];
  for (const server of planned) {
    const current = existing[server.scope] ?? {};
    if (Object.hasOwn(current, server.name)) {
      if (sameDefinition(current[server.name], server.definition)) {
        skipped.push({
          name: server.name,
          source: server.source,
          reasons: [`already defined the same way in ${server.scope} settings (${targets[server.scope].file})`],
        });
        continue;
      }
      if (!request.replace) {
        conflicts.push({ name: server.name, scope: server.scope, source: server.source });
        continue;
      }
    }
    imported.push({ ...server, notes: [...server.notes, ...unsetVariables(server.definition, env.env)] });
  }

  if (!request.dryRun) {
    for (const scope of ["global", "project"] as const) {
      const batch = imported.filter((server) => server.scope === scope);
      if (batch.length === 0) continue;
      const late = new Set<string>();
      await changeServers(targets[scope], (servers) => {
        for (const server of batch) {
          // A writer that added the name since it was read: still a conflict, never overwritten silently.
          if (!request.replace && Object.hasOwn(servers, server.name) && !sameDefinition(servers[server.name], server.definition)) {
            late.add(server.name);
            continue;
          }
          servers[server.name] = server.definition;
        }
      });
      for (const name of late) {
        const at = imported.findIndex((server) => server.scope === scope && server.name === name);
        const [server] = imported.splice(at, 1);
        conflicts.push({ name, scope, source: server!.source });
      }
    }
    const first = imported[0];
    if (first) await env.runtime?.settingsChanged(first.name, "connect");
  }

  return { dryRun: request.dryRun, sources, imported, skipped, conflicts };
}

/** The definitions object of one source file, and the dialect to read it in. */
function serversOf(
  file: SourceFile,
  data: Record<string, unknown>,
  explicit: boolean,
): { servers: Record<string, unknown>; format: SourceFormat } {
  let key = file.key;
  let format = file.format;
  if (key === undefined) {
    if (data.mcpServers !== undefined) key = "mcpServers";
    else if (data.servers !== undefined) {
      key = "servers";
      if (format === "generic") format = "vscode";
    } else {
      throw new PiMcpError("invalid_settings", `${file.file} has no "mcpServers" (or VS Code "servers") object; nothing was imported`);
    }
  }
  const value = key === "mcp.servers" ? (isRecord(data.mcp) ? data.mcp.servers : undefined) : data[key];
  if (value === undefined) {
    if (explicit) throw new PiMcpError("invalid_settings", `${file.file} has no "${key}" object; nothing was imported`);
    return { servers: {}, format };
  }
  if (!isRecord(value)) throw new PiMcpError("invalid_settings", `${file.file}: "${key}" must be an object; nothing was imported`);
  return { servers: value, format };
}

/**
 * A project entry of Pi's `.pi/mcp.json`. One without command, url or type
 * overrides `enabled`, `exposure` and `toolExposure` of the global server of
 * that name and keeps the rest. `enabled: false` there is pi-mcp's mask; any
 * other override becomes a whole project definition (pi-mcp's project entries
 * replace global ones whole), unless it changes nothing pi-mcp has.
 */
function mapPiProjectEntry(name: string, raw: unknown, global: Record<string, unknown>, local: boolean): Mapped {
  if (!isRecord(raw) || !isPiOverride(raw)) return mapPi(name, raw);
  const extra = Object.keys(raw).filter((key) => !PI_OVERRIDE_KEYS.includes(key));
  if (extra.length > 0)
    return { ok: false, reasons: [`definition: Pi rejects this project entry: an override can only set ${PI_OVERRIDE_KEYS.join(", ")}`] };
  const base = ownValue(global, name);
  if (!isRecord(base))
    return {
      ok: false,
      reasons: ['definition: Pi rejects this project entry: it has no "command" or "url" and overrides no global server'],
    };
  if (raw.enabled === false && !local) {
    const notes = Object.keys(raw)
      .filter((key) => key !== "enabled")
      .map((key) => `${key}: not imported: the server is disabled in this project`);
    return {
      ok: true,
      definition: { enabled: false },
      notes: ["definition: disables the global server in this project (a pi-mcp mask)", ...notes],
    };
  }
  const merged = mapPi(name, { ...base, ...raw });
  if (!merged.ok || local) return merged;
  const plain = mapPi(name, base);
  if (plain.ok && sameDefinition(plain.definition, merged.definition)) {
    return {
      ok: false,
      reasons: ["definition: this project override changes only exposure, which pi-mcp does not have; nothing to import"],
    };
  }
  return {
    ...merged,
    notes: [
      "definition: the global server's definition with this project's override, since pi-mcp project definitions replace global ones whole",
      ...merged.notes,
    ],
  };
}

async function currentServers(file: string): Promise<Record<string, unknown>> {
  const read = await readJsonFile(file);
  if (read.problem) throw new PiMcpError("unreadable_settings", `${file} ${read.problem}; nothing was imported`);
  const mcp = read.data?.mcp;
  return isRecord(mcp) && isRecord(mcp.servers) ? mcp.servers : {};
}

/** Names only: pi-mcp refuses the whole configuration while an enabled server's variable is missing. */
function unsetVariables(definition: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  if (definition.enabled === false) return [];
  return [...referencedNames(definition)]
    .filter((name) => ownValue(env, name) === undefined)
    .map((name) => `\${${name}} is not set in this environment: pi-mcp reports its settings invalid until it is`);
}

// A private PostgreSQL server for tests of @modelcontextprotocol/server-postgres:
// a fresh cluster (initdb) in a temporary folder, listening on 127.0.0.1 at a
// free port, trust authentication, stopped and removed by `stop()`. Debian's
// `postgresql` package provides the programs (.ci/run installs it when it is
// missing). PostgreSQL refuses to run as root, so as root the cluster belongs
// to the `postgres` user the package creates.
import { execFile } from "node:child_process";
import { chown, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./servers.ts";

const run = promisify(execFile);

export interface RunningPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** Runs SQL with psql as the superuser. */
  sql(statement: string): Promise<string>;
  stop(): Promise<void>;
}

/** The folder with initdb, pg_ctl and psql of the newest installed PostgreSQL. */
async function postgresBin(): Promise<string> {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? (await readdir(root)).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : [];
  const bin = versions.map((version) => join(root, version, "bin")).find((folder) => existsSync(join(folder, "initdb")));
  if (!bin) throw new Error("PostgreSQL's server programs are not installed (Debian package postgresql; .ci/run installs it)");
  return bin;
}

export async function startPostgres(): Promise<RunningPostgres> {
  const bin = await postgresBin();
  const folder = await mkdtemp(join(tmpdir(), "pi-mcp-postgres-"));
  const asRoot = process.getuid?.() === 0;
  // As root, every program runs as the postgres user, which must own the folder.
  const as = async (program: string, args: string[]) => {
    const command = asRoot ? "runuser" : join(bin, program);
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, program), ...args] : args;
    return (await run(command, argv, { timeout: 60_000 })).stdout;
  };
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: group } = await run("id", ["-g", "postgres"]);
    await chown(folder, Number(stdout.trim()), Number(group.trim()));
  }
  const data = join(folder, "data");
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  const port = await freePort();
  await as("pg_ctl", [
    "-D",
    data,
    "-l",
    join(folder, "server.log"),
    "-w",
    "-t",
    "60",
    "-o",
    `-p ${port} -h 127.0.0.1 -k ${folder} -F`,
    "start",
  ]);
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    sql: (statement) =>
      as("psql", [
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-At",
        "-c",
        statement,
      ]),
    async stop() {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}

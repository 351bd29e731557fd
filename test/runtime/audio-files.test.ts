// Audio content is saved as a private file (0600 in a 0700 folder) with its
// bytes intact, and the model is given its path. Real server, real files.
import { readFile, stat } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

// A permissive umask: the modes must come from pi-mcp, not from the environment.
let umask: number;
beforeEach(() => {
  umask = process.umask(0);
});
afterEach(async () => {
  process.umask(umask);
  await stopAllHosts();
});

it("saves audio content as a private file (0600 in a 0700 folder) holding exactly the bytes the server sent", async () => {
  const h = await startHost({ w: fixtureServer("witness") });
  await h.waitForTools(4, { server: "w" });
  const bytes = 100_000; // more than one pipe chunk, every byte value many times
  const outcome = await h.call("mcp__w__audio", { bytes });
  expect(outcome.isError).toBe(false);
  const text = textOf(outcome);
  const path = /^\[audio audio\/wav saved to (\S+)\]$/.exec(text)?.[1];
  expect(path, text).toBeDefined();
  expect(relative(h.privateDir, path!).startsWith("..")).toBe(false);
  expect(path).toMatch(/\.wav$/);

  expect((await stat(path!)).mode & 0o777).toBe(0o600);
  expect((await stat(dirname(path!))).mode & 0o777).toBe(0o700);
  const saved = await readFile(path!);
  const expected = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) expected[i] = i % 256;
  expect(saved.length).toBe(bytes);
  expect(saved.equals(expected)).toBe(true);

  // A second clip is a second file: nothing is overwritten.
  const again = /saved to (\S+)\]$/.exec(textOf(await h.call("mcp__w__audio", { bytes: 3 })))![1]!;
  expect(again).not.toBe(path);
  expect([...(await readFile(again))]).toEqual([0, 1, 2]);
  expect((await readFile(path!)).equals(expected)).toBe(true);
});

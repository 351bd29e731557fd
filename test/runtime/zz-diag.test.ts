import { expect, it } from "vitest";
import { execSync } from "node:child_process";
import { fixtureServer, startHost } from "../helpers/host.ts";
it("diag", async () => {
  const h = await startHost({ repeat: fixtureServer("many-tools", { FIXTURE_CURSOR: "repeat" }) }, { retry: { maxRetries: 1, initialDelayMs: 50 } });
  let last = "";
  const t0 = Date.now();
  const timer = setInterval(() => { const s = JSON.stringify(h.status("repeat")); if (s !== last) { last = s; console.log(Date.now() - t0, s); } }, 2);
  await new Promise((r) => setTimeout(r, 6000));
  clearInterval(timer);
  console.log(execSync("pgrep -fa 'many-tools.mjs' || true").toString());
  await h.stop();
  await new Promise((r) => setTimeout(r, 500));
  console.log("after stop", execSync("pgrep -fa 'many-tools.mjs' || true").toString());
  expect(1).toBe(1);
}, 20000);

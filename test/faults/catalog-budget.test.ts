// A paged list (tools, resources, resource templates, prompts) holds at most
// MAX_CATALOG_BYTES in all: a server whose every page is far below the
// message cap but whose cursor never ends is stopped there, long before the
// 1,000-page rule (1,000 pages of 3 MB held 3 GB; at the cap it would be 16 GB).
import { afterEach, describe, expect, it } from "vitest";
import { formatLimit, MAX_CATALOG_BYTES } from "../../src/kernel/limits.ts";
import { fixtureServer, startHost, stopAllHosts, textOf } from "../helpers/host.ts";

afterEach(() => stopAllHosts());

const PAGE_BYTES = 300_000;
const LIMIT = formatLimit(MAX_CATALOG_BYTES);
/** The page on which the budget runs out (each page holds about PAGE_BYTES). */
const LAST_PAGE = Math.ceil(MAX_CATALOG_BYTES / PAGE_BYTES);

function pagesIn(message: string | undefined): number {
  const match = new RegExp(`the list is larger than the ${LIMIT} catalog-size limit \\(after (\\d+) pages\\)`).exec(message ?? "");
  if (!match) throw new Error(`no catalog-size error in: ${message}`);
  return Number(match[1]);
}

const endless = (list: string) => fixtureServer("endless-catalog", { FIXTURE_ENDLESS: list, FIXTURE_PAGE_BYTES: String(PAGE_BYTES) });

describe(`every paged list is held to ${LIMIT} in all`, () => {
  it("endless tools/list pages: the connection fails naming the limit, after the pages that fill it", async () => {
    const h = await startHost({ endless: endless("tools") }, { retry: { maxRetries: 0 } });
    const status = await h.waitForState("endless", "failed", 60_000);
    expect(status.cause).toMatch(/^endless tools\/list: the list is larger than/);
    const pages = pagesIn(status.cause);
    expect(pages).toBeGreaterThanOrEqual(LAST_PAGE - 1);
    expect(pages).toBeLessThanOrEqual(LAST_PAGE + 1);
  }, 90_000);

  for (const list of ["resources/list", "resources/templates/list", "prompts/list"] as const) {
    it(`endless ${list} pages: that list fails naming the limit, and the connection and its tool stay`, async () => {
      const h = await startHost({ endless: endless(list) });
      await h.waitForTools(1, { server: "endless" });
      const connection = h.host.server("endless")!;
      const error = await connection.list(list).then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(error?.message).toMatch(new RegExp(`^endless ${list.replace(/\//g, "\\/")}: the list is larger than`));
      const pages = pagesIn(error?.message);
      expect(pages).toBeGreaterThanOrEqual(LAST_PAGE - 1);
      expect(pages).toBeLessThanOrEqual(LAST_PAGE + 1);
      expect(h.status("endless").state).toBe("connected");
      expect(textOf(await h.call("mcp__endless__t"))).toBe("t");
    }, 90_000);
  }
});

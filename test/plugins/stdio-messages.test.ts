import { deserializeMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { parseMessage } from "../../plugins/transports/stdio.ts";

/** What the SDK's own reading makes of a line: the message, or the kind of error it throws. */
function sdkReading(line: string): unknown {
  try {
    return { message: deserializeMessage(line) };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

function ourReading(line: string): unknown {
  try {
    return { message: parseMessage(line) };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

const LINES: Record<string, unknown> = {
  "a plain result": { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "x".repeat(100) }] } },
  "a result with a string id": { jsonrpc: "2.0", id: "a-1", result: {} },
  "a result with _meta": { jsonrpc: "2.0", id: 1, result: { _meta: { note: 1 }, content: [] } },
  "a result whose serverInfo stamp is malformed (the SDK drops it)": {
    jsonrpc: "2.0",
    id: 1,
    result: { _meta: { "io.modelcontextprotocol/serverInfo": 42 }, content: [] },
  },
  "a 2026-07-28 result with its serverInfo stamp": {
    jsonrpc: "2.0",
    id: 2,
    result: {
      content: [{ type: "text", text: "x" }],
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1.0.0", extra: true }, other: { a: [1] } },
    },
  },
  "a result whose serverInfo stamp lacks its version (the SDK drops it)": {
    jsonrpc: "2.0",
    id: 1,
    result: { _meta: { "io.modelcontextprotocol/serverInfo": { name: "s" } } },
  },
  "a result whose _meta is a list": { jsonrpc: "2.0", id: 1, result: { _meta: [1], content: [] } },
  "a result whose _meta is a string": { jsonrpc: "2.0", id: 1, result: { _meta: "x" } },
  "a result whose _meta is null": { jsonrpc: "2.0", id: 1, result: { _meta: null } },
  "a result with an extra top-level key": { jsonrpc: "2.0", id: 1, result: {}, extra: true },
  "a result of another JSON-RPC version": { jsonrpc: "1.0", id: 1, result: {} },
  "a result with a fractional id": { jsonrpc: "2.0", id: 1.5, result: {} },
  "a result with a null id": { jsonrpc: "2.0", id: null, result: {} },
  "a result that is a list": { jsonrpc: "2.0", id: 1, result: [] },
  "a result that is null": { jsonrpc: "2.0", id: 1, result: null },
  "an error": { jsonrpc: "2.0", id: 3, error: { code: -32000, message: "no" } },
  "a request": { jsonrpc: "2.0", id: 4, method: "roots/list" },
  "a notification": { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } },
  "a request with both result and method": { jsonrpc: "2.0", id: 5, method: "x", result: {} },
  "not an object": [1, 2, 3],
};

describe("reading a stdio server's lines", () => {
  it.each(Object.entries(LINES))("reads %s exactly as the SDK does", (_name, value) => {
    const line = JSON.stringify(value);
    expect(ourReading(line)).toEqual(sdkReading(line));
  });

  it("throws a SyntaxError for a line that is not JSON, as the SDK does (the buffer skips it)", () => {
    expect(ourReading("not json")).toEqual({ error: "SyntaxError" });
    expect(sdkReading("not json")).toEqual({ error: "SyntaxError" });
  });
});

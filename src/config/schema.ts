import { type, type Type } from "arktype";
import { SERVER_NAME, formatPath } from "./field-text.ts";
import { isRecord } from "../safety/keys.ts";
import { FEATURES, type ConfigIssue, type Feature, type Scope } from "../kernel/settings.ts";

/*
 * The shape of the `mcp` object as written in settings.json, before `${NAME}`
 * expansion. arktype checks types and unknown keys at every level; the rules
 * that relate fields to each other live in `rules.ts`.
 */

const positiveMs = "number.integer > 0";

/** arktype's object types also accept arrays; settings objects never are arrays. */
const NotArray = type("object").narrow((value, ctx) => !Array.isArray(value) || ctx.mustBe("an object"));
const stringMap = NotArray.and(type("Record<string, string>"));

const NoAuth = NotArray.and(type({ type: "'none'", "+": "reject" }));
const BearerAuth = NotArray.and(type({ type: "'bearer'", token: "string > 0", "+": "reject" }));
const OAuthAuth = NotArray.and(
  type({
    type: "'oauth'",
    "clientId?": "string > 0",
    "clientSecret?": "string > 0",
    "redirectUri?": "string > 0",
    "scopes?": "string[]",
    "+": "reject",
  }),
);
const Auth = NoAuth.or(BearerAuth).or(OAuthAuth);

const Exposure = type("'auto' | 'direct' | 'deferred' | 'codemode' | 'hidden'");

/** `mcp.contextBudget`: a number of tokens, or a share of the model's context window ("10%", more than 0 and at most 100). */
const ContextBudget = type("number.integer > 0")
  .or(
    type(/^\d+(\.\d+)?%$/).narrow(
      (text, ctx) => (Number(text.slice(0, -1)) > 0 && Number(text.slice(0, -1)) <= 100) || ctx.mustBe("a share above 0% and at most 100%"),
    ),
  )
  .describe('a number of tokens or a share of the context window such as "10%"');

/** `lazy`: no process or connection until one of the server's tools (or a command) needs it. */
const Lifecycle = type("'eager' | 'lazy'");

const ToolFilter = NotArray.and(type({ "include?": "string[]", "exclude?": "string[]", "+": "reject" }));

/** `false` declares no roots capability; a list of folders replaces Pi's working folder. */
const Roots = type("false | (string > 0)[]").describe("false or a list of folders");

export const RawServer = NotArray.and(
  type({
    "command?": "string > 0",
    "args?": "string[]",
    "cwd?": "string > 0",
    "environment?": stringMap,
    "url?": "string > 0",
    "transport?": "'stdio' | 'http' | 'sse'",
    "headers?": stringMap,
    "auth?": Auth,
    "enabled?": "boolean",
    "connectTimeoutMs?": positiveMs,
    "requestTimeoutMs?": positiveMs,
    "requestDeadlineMs?": positiveMs,
    "tools?": ToolFilter,
    "exposure?": Exposure,
    "toolExposure?": NotArray.and(type({ "[string]": Exposure })),
    "roots?": Roots,
    "lifecycle?": Lifecycle,
    "idleTimeoutMs?": positiveMs,
    "+": "reject",
  }),
);
export type RawServer = typeof RawServer.infer;

const Retry = NotArray.and(
  type({
    "maxRetries?": "number.integer >= 0",
    "initialDelayMs?": positiveMs,
    "maxDelayMs?": positiveMs,
    "backoffFactor?": "number >= 1",
    "+": "reject",
  }),
);

/** `mcp.features`: a feature plugin set to false is left out of every host. One optional boolean per feature plugin (FEATURES), no other key. */
const Features = NotArray.and(
  type.raw({ ...Object.fromEntries(FEATURES.map((feature) => [`${feature}?`, "boolean"])), "+": "reject" }) as Type<
    Partial<Record<Feature, boolean>>
  >,
);

export const RawMcp = NotArray.and(
  type({
    "connectTimeoutMs?": positiveMs,
    "requestTimeoutMs?": positiveMs,
    "requestDeadlineMs?": positiveMs,
    "retry?": Retry,
    "features?": Features,
    "exposure?": Exposure,
    "contextBudget?": ContextBudget,
    "roots?": Roots,
    "lifecycle?": Lifecycle,
    "idleTimeoutMs?": positiveMs,
    /** How long the first model request of a run without a terminal UI waits for servers whose catalog is not known (0: not at all). */
    "firstRequestWaitMs?": "number.integer >= 0",
    "servers?": NotArray.and(type({ "[string]": RawServer.or("null") })),
    "+": "reject",
  }),
);
export type RawMcp = typeof RawMcp.infer;

/** Checks the written shape of one scope's `mcp` object; reports every problem. */
export function checkShape(raw: unknown, file: string): ConfigIssue[] {
  const result = RawMcp(raw);
  const issues: ConfigIssue[] = [];
  if (result instanceof type.errors) {
    for (const error of result) {
      // A problem inside a union can repeat the path; the path is given separately.
      const problem = error.problem.startsWith(`${error.propString} `) ? error.problem.slice(error.propString.length + 1) : error.problem;
      const message =
        error.code === "predicate" && error.expected === "removed"
          ? "unknown field"
          : error.path.at(-1) === "roots"
            ? rootsProblem(error.actual)
            : problem;
      issues.push({ path: formatPath(["mcp", ...error.path]), message, file });
    }
  }
  const servers = isRecord(raw) && isRecord(raw.servers) ? Object.keys(raw.servers) : [];
  for (const name of servers) {
    if (!SERVER_NAME.test(name)) {
      issues.push({
        path: formatPath(["mcp", "servers", name]),
        message: "server name must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        file,
      });
    }
  }
  return issues;
}

/** Inside a server definition arktype words a wrong `roots` as "an object or boolean", which misleads. */
function rootsProblem(actual: string): string {
  return `must be false or a list of folders (was ${actual})`;
}

/** One scope's settings (resolve.ts ScopeSettings) with their shape checked here, in full (for callers that hold the value already; load.ts reads and checks files). */
export function checkedScope(scope: Scope, file: string, mcp: unknown): { scope: Scope; file: string; mcp: unknown; shape: ConfigIssue[] } {
  return { scope, file, mcp, shape: mcp === undefined ? [] : checkShape(mcp, file) };
}

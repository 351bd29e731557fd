/**
 * pi-mcp's errors say what happened by their code (src/kernel/errors.ts:
 * ERROR_CODES), and they are recognised across copies of their module, as
 * the MCP SDK's branded errors are: `instanceof`, `errorCode` and the runtime's
 * checks hold for an error made by the built library (dist/lib.mjs, which a
 * third-party plugin imports as `pi-mcp`) and by a second copy of the sources
 * (a module registry reset in between, as a reloaded extension has).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as kernelErrors from "../../src/kernel/errors.ts";
import { Kernel, type KernelPlugin } from "../../src/kernel/kernel.ts";
import { authStateOf, classifyFailure, isNamedFailure } from "../../src/runtime/errors.ts";
import { fixtureServer, startHost, stopAllHosts } from "../helpers/host.ts";
import { REPO_ROOT } from "../helpers/tmp.ts";

type ErrorsModule = typeof kernelErrors;
type AuthErrorsModule = typeof import("../../plugins/auth-oauth/errors.ts");
type Library = typeof import("../../src/lib.ts");

const { PiMcpError, PluginHookError, TransportClosedError, MessageTooLargeError, closesConnection, errorCode, codeInCauses } = kernelErrors;

/** The built library, as a third-party plugin imports it. */
let library: Library;
/** A second copy of the sources: the kernel's errors and the auth plugin's, evaluated again after a registry reset. */
let copy: { kernel: ErrorsModule; auth: AuthErrorsModule };

beforeAll(async () => {
  library = (await import(pathToFileURL(join(REPO_ROOT, "dist/lib.mjs")).href)) as Library;
  vi.resetModules();
  copy = {
    kernel: await import("../../src/kernel/errors.ts"),
    auth: await import("../../plugins/auth-oauth/errors.ts"),
  };
}, 180_000);

afterEach(stopAllHosts);

describe("the copies are copies", () => {
  it("each copy has classes of its own (prototype instanceof alone would not match)", () => {
    expect(library.PiMcpError).not.toBe(PiMcpError);
    expect(copy.kernel.PiMcpError).not.toBe(PiMcpError);
    expect(Object.getPrototypeOf(new library.PiMcpError("usage", "x"))).not.toBe(PiMcpError.prototype);
  });
});

describe("an error of another copy is recognised", () => {
  for (const [name, made] of [
    ["the built library", () => library],
    ["a second copy of the sources", () => copy.kernel],
  ] as const) {
    it(`${name}: PiMcpError by instanceof and its code, both ways`, () => {
      const theirs = new (made().PiMcpError)("needs_auth", "MCP server needs authorization");
      expect(theirs).toBeInstanceOf(PiMcpError);
      expect(errorCode(theirs)).toBe("needs_auth");
      expect(new PiMcpError("session_ended", "x")).toBeInstanceOf(made().PiMcpError);
      expect(errorCode(new Error("plain"))).toBeUndefined();
      expect({ code: "needs_auth", message: "a look-alike" }).not.toBeInstanceOf(PiMcpError);
    });

    it(`${name}: a subclass is its own class, and a wrapped code is found through the causes`, () => {
      const hook = new (made().PluginHookError)("third-party", "createTransport", new (made().PiMcpError)("needs_auth", "login"));
      expect(hook).toBeInstanceOf(PluginHookError);
      expect(hook).toBeInstanceOf(PiMcpError);
      expect(hook).not.toBeInstanceOf(TransportClosedError);
      expect(new (made().PiMcpError)("plugin_failed", "x")).not.toBeInstanceOf(PluginHookError);
      expect(codeInCauses(hook, ["needs_auth"])).toBe("needs_auth");
      expect(authStateOf(hook)).toBe("needs_auth");
    });
  }

  it("a transport error of another copy closes the connection, an HTTP response's oversized message does not", () => {
    expect(closesConnection(new copy.kernel.TransportClosedError("the server process wrote garbage"))).toBe(true);
    expect(closesConnection(new copy.kernel.MessageTooLargeError(1024, "stdio", true))).toBe(true);
    expect(closesConnection(new copy.kernel.MessageTooLargeError(1024, "an HTTP response", false))).toBe(false);
    expect(new copy.kernel.MessageTooLargeError(1024, "stdio", true)).toBeInstanceOf(MessageTooLargeError);
    expect(closesConnection(Object.assign(new Error("shaped like one"), { closesConnection: true }))).toBe(false);
  });

  it("the auth plugin's errors of another copy set the connection state their code names", async () => {
    const { AuthorizationRequiredError, ClientRegistrationRequiredError, CredentialStoreError, AuthFlowError } = await import(
      "../../plugins/auth-oauth/errors.ts"
    );
    const login = new copy.auth.AuthorizationRequiredError("docs", "no stored authorization");
    expect(login).toBeInstanceOf(AuthorizationRequiredError);
    expect(login).not.toBeInstanceOf(ClientRegistrationRequiredError);
    expect(authStateOf(login)).toBe("needs_auth");
    expect(classifyFailure(login)).toBe("auth");
    const registration = new copy.auth.ClientRegistrationRequiredError("docs", "no dynamic registration");
    expect(authStateOf(registration)).toBe("needs_client_registration");
    expect(classifyFailure(registration)).toBe("client_registration");
    expect(authStateOf(new copy.auth.CredentialStoreError("mcp-auth.json is malformed"))).toBe("needs_auth");
    expect(new copy.auth.CredentialStoreError("x")).toBeInstanceOf(CredentialStoreError);
    expect(new copy.auth.AuthFlowError("x")).toBeInstanceOf(AuthFlowError);
    expect(errorCode(new copy.auth.AuthFlowError("x"))).toBe("auth_failed");
    // An auth error is classified by the request it ended; an error pi-mcp phrased already is passed on.
    expect(isNamedFailure(login)).toBe(false);
    expect(isNamedFailure(new copy.kernel.PiMcpError("connection_failed", "not connected"))).toBe(true);
    expect(isNamedFailure(new Error("plain"))).toBe(false);
  });
});

describe("codes end to end", () => {
  it("a third-party plugin built against the library puts its server in needs_auth by its error's code", async () => {
    const thirdParty: KernelPlugin = {
      name: "third-party-gateway",
      apply(kernel) {
        kernel.hooks.createTransport.tapPromise("third-party-gateway", async () => {
          throw new library.PiMcpError("needs_auth", "the gateway needs a login first");
        });
      },
    };
    const h = await startHost({ gated: { command: "unused" } }, { kernel: new Kernel([thirdParty]), retry: { maxRetries: 3 } });
    const status = await h.waitForState("gated", ["needs_auth", "failed"]);
    expect(status.state).toBe("needs_auth");
    expect(h.states("gated")).not.toContain("retrying");
  });

  it("a tool of a session whose host has ended fails with session_ended, in the one wording", async () => {
    const h = await startHost({ basic: fixtureServer("basic") });
    await h.waitForTools(1, { server: "basic" });
    const tool = h.sink.tools.get("mcp__basic__echo");
    expect(tool).toBeDefined();
    await h.stop();
    const failure = await tool!.execute({ text: "hi" }, {}).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PiMcpError);
    expect(errorCode(failure)).toBe("session_ended");
    expect((failure as Error).message).toBe("mcp__basic__echo: this Pi session has ended");
  });
});

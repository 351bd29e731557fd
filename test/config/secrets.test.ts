/**
 * Secret non-disclosure: a value resolved from the environment never appears
 * in a configuration error, in `list` (text or --json), or in any command's
 * output; plus the exact-value redactor and terminal-control stripping.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.ts";
import { agentDir } from "../../src/config/paths.ts";
import {
  REDACTED,
  createRedactor,
  safeHead,
  safeTail,
  safeText,
  stripTerminalControls,
  withoutLeadingFragment,
} from "../../src/safety/text.ts";
import { runCli, useSandbox } from "../helpers/tmp.ts";

const sandbox = useSandbox();

const SECRET = "s3cr3t-value-XYZ";

/** Every variable holds the secret, placed so that each one breaks a rule after expansion. */
const SECRET_ENV = {
  NOT_A_URL: SECRET,
  FTP_URL: `ftp://${SECRET}.example.com/mcp`,
  TOKEN: SECRET,
  AUTH_HEADER: `Bearer ${SECRET}`,
  PUBLIC_REDIRECT: `https://${SECRET}.example.com/callback`,
  HEADER_VALUE: SECRET,
  ENV_VALUE: SECRET,
  CLIENT_SECRET: SECRET,
};

/** A global `mcp` object whose every error involves a resolved secret. */
const SECRET_MCP = {
  servers: {
    "url-not-url": { url: "${NOT_A_URL}" },
    "url-ftp": { url: "${FTP_URL}", headers: { "X-Key": "${HEADER_VALUE}" } },
    "bearer-with-header": {
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "${AUTH_HEADER}" },
      auth: { type: "bearer", token: "${TOKEN}" },
    },
    "oauth-public-redirect": {
      url: "https://mcp.example.com/mcp",
      auth: { type: "oauth", clientSecret: "${CLIENT_SECRET}", redirectUri: "${PUBLIC_REDIRECT}" },
    },
    "local-with-headers": { command: "node", environment: { KEY: "${ENV_VALUE}" }, headers: { "X-Key": "${HEADER_VALUE}" } },
    "local-wrong-transport": { command: "node", args: ["${ENV_VALUE}"], transport: "http" },
    "missing-var": { url: "https://mcp.example.com/mcp", headers: { "X-Key": "${HEADER_VALUE}", "X-Other": "${PI_MCP_TEST_UNSET}" } },
    "valid-with-secrets": {
      url: "https://mcp.example.com/mcp",
      headers: { "X-Key": "${HEADER_VALUE}" },
      auth: { type: "bearer", token: "${TOKEN}" },
    },
  },
};

async function setUp(): Promise<void> {
  const box = sandbox();
  await box.writeJson(box.globalSettings, { theme: "dark", mcp: SECRET_MCP });
  await box.writeJson(box.projectSettings, { mcp: { servers: { "valid-with-secrets": { enabled: false } } } });
  await box.trust({ [box.projectDir]: true });
}

async function cli(...argv: string[]) {
  const box = sandbox();
  return runCli(argv, box.projectDir, box.env(SECRET_ENV));
}

describe("resolved values never appear in errors or output", () => {
  it("no configuration error message contains a resolved value, while every rule still fires", async () => {
    await setUp();
    const box = sandbox();
    const env = box.env(SECRET_ENV);
    const config = await loadConfig({ agentDir: agentDir(env), cwd: box.projectDir, projectTrusted: false, env });
    expect(config.valid).toBe(false);
    expect(config.issues.map((issue) => issue.path).sort()).toEqual(
      [
        "mcp.servers.url-not-url.url",
        "mcp.servers.url-ftp.url",
        "mcp.servers.bearer-with-header.auth",
        "mcp.servers.oauth-public-redirect.auth.redirectUri",
        "mcp.servers.local-with-headers.headers",
        "mcp.servers.local-wrong-transport.transport",
        "mcp.servers.missing-var.headers.X-Other",
      ].sort(),
    );
    const everything = JSON.stringify(config.issues);
    expect(everything).not.toContain(SECRET);
    // The missing variable is named, never its neighbours' values.
    expect(everything).toContain("PI_MCP_TEST_UNSET");
    expect(config.secrets.has(SECRET)).toBe(true);
  });

  it("list (text) shows the errors without any resolved value", async () => {
    await setUp();
    const result = await cli("list");
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain("mcp.servers.url-ftp.url");
    expect(result.output).toContain("mcp.servers.bearer-with-header.auth");
    expect(result.output).not.toContain(SECRET);
  });

  it("list --json shows the errors without any resolved value", async () => {
    await setUp();
    const result = await cli("list", "--json");
    expect(result.exitCode).toBe(0);
    const text = JSON.stringify(result.json);
    expect(text).toContain("mcp.servers.oauth-public-redirect.auth.redirectUri");
    expect(text).not.toContain(SECRET);
    expect(result.output).not.toContain(SECRET);
  });

  it("list of a valid configuration full of secrets shows none of them (text and --json)", async () => {
    const box = sandbox();
    await box.writeJson(box.globalSettings, { mcp: { servers: { ok: SECRET_MCP.servers["valid-with-secrets"] } } });
    const text = await cli("list");
    const json = await cli("list", "--json");
    expect(json.json).toMatchObject({ valid: true, errors: [] });
    expect(text.output).not.toContain(SECRET);
    expect(JSON.stringify(json.json)).not.toContain(SECRET);
  });

  it("no mutation command prints a resolved value, successful or failing", async () => {
    await setUp();
    const outputs = [
      await cli("disable", "valid-with-secrets"),
      await cli("enable", "valid-with-secrets"),
      await cli("disable", "-l", "url-ftp"), // loads the (invalid) merged config first
      await cli("enable", "-l", "url-ftp"),
      await cli("enable", "no-such-server"),
      await cli("remove", "-l", "no-such-server"),
      await cli("add", "more", "https://mcp.example.com/mcp", "--header", "X-Key=${HEADER_VALUE}"),
      await cli("add", "bad", "${FTP_URL}", "--auth", "bearer", "--token", "${TOKEN}", "--header", "Authorization=${AUTH_HEADER}"),
      await cli("remove", "url-ftp"),
      await cli("list"),
    ];
    expect(outputs.map((result) => result.exitCode)).toEqual([0, 0, 0, 0, 1, 1, 0, 1, 0, 0]);
    for (const result of outputs) {
      expect(result.output).not.toContain(SECRET);
      expect(JSON.stringify(result.json ?? null)).not.toContain(SECRET);
    }
  });

  it("a bearer/Authorization conflict in an add reports the path, not the token typed on the command line", async () => {
    const result = await cli(
      "add",
      "api",
      "https://mcp.example.com/mcp",
      "--auth",
      "bearer",
      "--token",
      SECRET,
      "--header",
      `Authorization=Bearer ${SECRET}`,
    );
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain("mcp.servers.api.auth");
    expect(result.output).not.toContain(SECRET);
  });
});

describe("createRedactor", () => {
  it("replaces every exact occurrence of a secret", () => {
    const redact = createRedactor([SECRET]);
    expect(redact(`a ${SECRET} b ${SECRET}${SECRET}`)).toBe(`a ${REDACTED} b ${REDACTED}${REDACTED}`);
  });

  it("redacts overlapping secrets whole, longest first", () => {
    const redact = createRedactor(["abcd1234", "abcd1234-extended"]);
    expect(redact("x abcd1234-extended y abcd1234 z")).toBe(`x ${REDACTED} y ${REDACTED} z`);
  });

  it("matches exact values only, not lookalikes, case variants or field names", () => {
    const redact = createRedactor([SECRET]);
    expect(redact("token=other-value s3cr3t-value-xyz s3cr3t-value")).toBe("token=other-value s3cr3t-value-xyz s3cr3t-value");
  });

  it("leaves text unchanged with no secrets, and ignores values shorter than four characters", () => {
    expect(createRedactor([])("plain text")).toBe("plain text");
    expect(createRedactor(["", "a", "ab", "abc"])("a cab abc")).toBe("a cab abc");
  });

  it("treats secrets as literal text, not patterns", () => {
    const redact = createRedactor(["a.b*c+(d)$"]);
    expect(redact("x a.b*c+(d)$ y aXbbc")).toBe(`x ${REDACTED} y aXbbc`);
  });
});

describe("stripTerminalControls", () => {
  it("removes CSI sequences (colours, cursor movement, private modes)", () => {
    expect(stripTerminalControls("\u001b[31mred\u001b[0m \u001b[2J\u001b[Hhome\u001b[?25l\u001b[1;2;3m!")).toBe("red home!");
  });

  it("removes OSC sequences ended by BEL or ST, including hyperlinks and title changes", () => {
    expect(stripTerminalControls("\u001b]0;evil title\u0007text")).toBe("text");
    expect(stripTerminalControls("\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\")).toBe("link");
    expect(stripTerminalControls("\u001b]52;c;ZXZpbA==\u0007clip")).toBe("clip");
  });

  it("removes C0 controls and DEL but keeps newline and tab", () => {
    const c0 = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).join("");
    expect(stripTerminalControls(`a${c0}b\u007fc`)).toBe("a\t\nbc");
    expect(stripTerminalControls("line1\nline2\tcol")).toBe("line1\nline2\tcol");
    expect(stripTerminalControls("over\rwrite\bback")).toBe("overwriteback");
  });

  it("removes C1 controls (U+0080 to U+009F), including 8-bit CSI and OSC introducers", () => {
    const c1 = Array.from({ length: 0x20 }, (_, index) => String.fromCharCode(0x80 + index)).join("");
    const out = stripTerminalControls(`x${c1}y`);
    expect(out).toBe("xy");
    expect(stripTerminalControls("a\u009b2Jb")).not.toContain("\u009b");
  });

  it("keeps ordinary Unicode text intact", () => {
    const text = "héllo — 日本語 ✓ emoji 🎉 \u00a0nbsp";
    expect(stripTerminalControls(text)).toBe(text);
  });

  it("safeText redacts again after stripping, so a secret split by an escape is still redacted", () => {
    const redact = createRedactor([SECRET]);
    expect(safeText(`v=s3cr3t\u001b[0m-value-XYZ\u0007`, redact)).toBe(`v=${REDACTED}`);
  });

  it("safeText redacts a value holding controls as written and as it looks stripped or JSON-escaped, before stripping", () => {
    const redact = createRedactor([`${SECRET}\r`, "hdr-value-1234\r\nX-Other: 1"]);
    expect(safeText(`a=${SECRET}\r b=${SECRET} c="${SECRET}\\r"`, redact)).toBe(`a=${REDACTED} b=${REDACTED} c="${REDACTED}"`);
    expect(safeText("h=hdr-value-1234\r\nX-Other: 1 | hdr-value-1234\nX-Other: 1 | hdr-value-1234\\r\\nX-Other: 1", redact)).toBe(
      `h=${REDACTED} | ${REDACTED} | ${REDACTED}`,
    );
  });
});

describe("cutting text a person is shown", () => {
  const redact = createRedactor([SECRET]);

  it("safeHead redacts and strips first, then cuts", () => {
    const text = `${"x".repeat(10)}${SECRET}`;
    expect(safeHead(text, redact, 14)).toBe(`${"x".repeat(10)}‹red…`);
    expect(safeHead(`\u001b[31m${text}`, redact, 100)).toBe(`${"x".repeat(10)}${REDACTED}`);
  });

  it("safeTail keeps the newest part within the limits, never a piece of a secret at the cut", () => {
    const text = `old\n${SECRET}${"z".repeat(20)}`;
    const cut = safeTail(text, redact, { maxBytes: 24, maxLines: 10 });
    expect(cut.cut).toBe(true);
    expect(cut.text).not.toContain(SECRET.slice(-4));
    expect(cut.text.endsWith("z".repeat(20))).toBe(true);
    const lines = safeTail("a\nb\nc", redact, { maxBytes: 100, maxLines: 2 });
    expect(lines).toEqual({ text: "b\nc", cut: true });
  });

  it("withoutLeadingFragment drops what could be the end of a secret at the start of a cut-off log", () => {
    const lost = `${SECRET.slice(5)} tail of a line\nnext line`;
    expect(withoutLeadingFragment(lost, redact)).toBe("next line");
    // No line break: the longest possible fragment (one character short of the secret) goes, nothing of it stays.
    const kept = withoutLeadingFragment(`${SECRET.slice(5)}${"y".repeat(40)}`, redact);
    expect(kept).toBe("y".repeat(40 - (SECRET.length - 1 - SECRET.slice(5).length)));
  });
});

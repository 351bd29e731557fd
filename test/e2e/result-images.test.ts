// A real Pi: tool results with images of every shape servers send (SVG, data that is not base64,
// a JPEG labelled PNG, cut-off and oversized PNGs, BMP, 1,000 one-pixel PNGs, embedded image
// resources), over several turns and parallel calls, then the saved session resumed. Every model
// request must be one the providers Pi talks to take: otherwise that request and every later one
// of the session fails. An image that is only too large is made smaller, as Pi makes its own.
// What providers take is checked here from their own figures (Pi 1.6's model data, pi-ai
// inputLimits), not from pi-mcp's constants: images only of type PNG, JPEG, GIF or WebP, their
// bytes of that type, valid base64, at most 4.5 MiB each (Pi's resize limit), at most 20 in one
// provider message (Bedrock; providers merge the tool results and user messages between two
// answers into one), at most 100 in one request (the smallest maxPerRequest), the request's
// messages within 20 MiB (Google's maxRequestBytes).
import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { fixturePath } from "../helpers/servers.ts";
import { type FauxLogEntry, type FauxStep, NODE, PI_VERSIONS, REPO_ROOT, runPi, usePiHome } from "./harness/pi.ts";

const home = usePiHome();

const PROVIDER_TYPES: Record<string, (bytes: Buffer) => boolean> = {
  "image/png": (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  "image/jpeg": (bytes) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff,
  "image/gif": (bytes) => /^GIF8[79]a/.test(bytes.toString("latin1", 0, 6)),
  "image/webp": (bytes) => bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP",
};
const MAX_IMAGE_BASE64 = 4_718_592;
const MAX_PER_MESSAGE = 20;
const MAX_PER_REQUEST = 100;
const MAX_REQUEST_BYTES = 20 * 1024 * 1024;

type Image = { type: "image"; data: string; mimeType: string };
const imagesOf = (message: { content?: unknown }): Image[] =>
  Array.isArray(message.content) ? message.content.filter((item: { type?: string }) => item?.type === "image") : [];

/** What a provider would refuse in this request: empty when it is well-formed. */
function refusals(request: FauxLogEntry): string[] {
  const problems: string[] = [];
  let inMessage = 0;
  let inRequest = 0;
  for (const [index, message] of request.messages.entries()) {
    if (message.role === "assistant") inMessage = 0;
    for (const image of imagesOf(message)) {
      inMessage++;
      inRequest++;
      const where = `request ${request.seq}, message ${index} (${message.role})`;
      const bytes = Buffer.from(image.data, "base64");
      if (!PROVIDER_TYPES[image.mimeType]) problems.push(`${where}: type ${image.mimeType}`);
      else if (!PROVIDER_TYPES[image.mimeType]!(bytes)) problems.push(`${where}: ${image.mimeType} whose bytes are not one`);
      if (bytes.toString("base64") !== image.data) problems.push(`${where}: data that is not canonical base64`);
      if (image.data.length > MAX_IMAGE_BASE64) problems.push(`${where}: an image of ${image.data.length} bytes of base64`);
    }
    if (inMessage > MAX_PER_MESSAGE) problems.push(`request ${request.seq}: ${inMessage} images in one provider message`);
  }
  if (inRequest > MAX_PER_REQUEST) problems.push(`request ${request.seq}: ${inRequest} images in all`);
  const size = JSON.stringify(request.messages).length;
  if (size > MAX_REQUEST_BYTES) problems.push(`request ${request.seq}: ${size} bytes of messages`);
  return problems;
}

const textOf = (message: { content?: unknown }): string =>
  Array.isArray(message.content)
    ? message.content.flatMap((item: { type?: string; text?: string }) => (item?.type === "text" ? [item.text] : [])).join("\n")
    : String(message.content ?? "");
const toolResults = (request: FauxLogEntry) => request.messages.filter((message) => message.role === "toolResult");

function sessionFiles(agentDir: string): string[] {
  const root = join(agentDir, "sessions");
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: "utf8" }).filter((path) => path.endsWith(".jsonl"));
}

for (const version of PI_VERSIONS)
  it(`Pi ${version}: results with images of every shape leave only what providers take in every request, also after the saved session is resumed`, async () => {
    await home.writeSettings({
      mcp: { servers: { pics: { command: NODE, args: [fixturePath("images")], environment: { FIXTURE_ERA: "2025" } } } },
    });
    const pixels = (n: number, from: number) => ({ name: "mcp__pics__pixels", arguments: { n, from } });
    const first: FauxStep[] = [
      { toolCall: { name: "mcp__pics__shapes", arguments: {} } },
      // A turn of its own, then two calls of one turn (their results reach the provider as one message).
      { toolCall: pixels(30, 2000) },
      { toolCalls: [pixels(15, 3000), pixels(15, 3100)] },
      { toolCall: pixels(20, 4000) },
      { toolCall: pixels(20, 5000) },
      { toolCall: pixels(20, 6000) },
      { text: "seen them all" },
    ];
    const run = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-p", "/mcp wait", "show me the pictures"],
      noSession: false,
      script: first,
      timeoutMs: 180_000,
    });
    expect(run.timedOut, run.stderr).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("seen them all");
    expect(run.requests).toHaveLength(first.length);
    expect(run.requests.flatMap(refusals)).toEqual([]);

    // The first result: the model got the images a provider takes, as what they are, and a line for each other.
    const [shapes] = toolResults(run.requests[1]!);
    const shown = imagesOf(shapes!);
    // A JPEG labelled PNG as image/jpeg; the 5 MiB PNG and the PNG 3,000 pixels wide made smaller, as Pi makes its own.
    expect(
      [shown[0], ...shown.slice(3, 6)].map((image) => image!.mimeType),
      textOf(shapes!).slice(0, 2000),
    ).toEqual(["image/jpeg", "image/gif", "image/webp", "image/png"]);
    expect(shown).toHaveLength(MAX_PER_MESSAGE);
    const text = textOf(shapes!);
    expect(text).toContain("shapes begin");
    expect(text).toContain("shapes end");
    expect(text).toMatch(/\[image resized for the model: image\/png, (\d+)×\1 pixels, 5(\.\d)? MiB, shown at \d+×\d+; /);
    expect(text).toContain("[image resized for the model: image/png, 3000×2 pixels, 1 KiB, shown at 2000×1; ");
    for (const why of [
      "models take only PNG, JPEG, GIF or WebP images, not image/svg+xml",
      "its data is not valid base64",
      "its bytes are not a whole PNG image",
      "models take only PNG, JPEG, GIF or WebP images, not image/bmp",
      "the most one message may carry",
    ])
      expect(text).toContain(why);
    const paths = [...text.matchAll(/saved(?: as received| together)? to (\S+?)[:\s]/g)].map((match) => match[1]!);
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) expect(existsSync(path), path).toBe(true);
    const svg = paths.find((path) => path.endsWith(".svg"))!;
    expect(await readFile(svg, "utf8")).toContain("<svg");

    // Two calls of one turn share the message's 20; the conversation holds 100 at most.
    const parallel = toolResults(run.requests[3]!).slice(-2);
    expect(parallel.flatMap(imagesOf)).toHaveLength(MAX_PER_MESSAGE);
    const last = run.requests.at(-1)!;
    expect(last.messages.flatMap(imagesOf)).toHaveLength(MAX_PER_REQUEST);
    expect(textOf(toolResults(last).at(-1)!)).toContain("the conversation already holds 100 images");

    // The saved session, resumed: its next requests are well-formed too, and a new result adds no image past the bound.
    expect(sessionFiles(home.agentDir)).toHaveLength(1);
    const resumed = await runPi({
      version,
      home: home.home,
      cwd: home.cwd,
      extensions: [REPO_ROOT],
      args: ["-c", "-p", "/mcp wait", "and these?"],
      noSession: false,
      script: [{ toolCall: pixels(5, 7000) }, { text: "resumed fine" }],
      timeoutMs: 120_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("resumed fine");
    expect(resumed.requests).toHaveLength(2);
    expect(resumed.requests[0]!.messages.flatMap(imagesOf)).toHaveLength(MAX_PER_REQUEST); // the session's images, replayed
    expect(resumed.requests.flatMap(refusals)).toEqual([]);
    expect(textOf(toolResults(resumed.requests[1]!).at(-1)!)).toContain("the conversation already holds 100 images");
  }, 400_000);

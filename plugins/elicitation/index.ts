/*
 * MCP elicitation (`elicitation/create`): a server asks the person for input
 * through Pi's dialogs.
 *
 * - Always declared: `elicitation: { form: { applyDefaults: true }, url: {} }`.
 * - Request-scoped: answered only during the foreground tool call that caused
 *   it, in a session where a person can answer (a UI, TUI or RPC mode). With
 *   no UI (print or json mode), with no tool call in progress, or from a call
 *   that is not interactive, it is declined at once: never a hang, and never
 *   a dialog from background work.
 * - Form mode: one dialog per field, by JSON Schema type (string → input,
 *   enum/oneOf → select, boolean → confirm, number/integer → input parsed and
 *   checked, multi-select → a select that toggles choices). An empty answer
 *   keeps the field's default; the SDK also fills defaults the answer left out.
 * - URL mode: shows the URL (and its site) and opens it in the browser only
 *   when the person says yes; `notifications/elicitation/complete` for it is
 *   reported with a notice.
 * - Dialogs of one host never overlap: requests wait their turn.
 */
import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { Kernel, KernelPlugin } from "../../src/kernel/kernel.ts";
import type { UiService } from "../../src/kernel/services.ts";
import type { HostContext, LiveConnection } from "../../src/kernel/types.ts";
import { describeError } from "../../src/kernel/errors.ts";
import { openWebPage, webUrl, type BrowserOpener } from "../../src/safety/browser.ts";
import { safeText } from "../../src/safety/text.ts";
import { keyedRecord } from "../../src/safety/keys.ts";
import { hostState } from "../../src/kernel/host-state.ts";

export type ElicitAction = "accept" | "decline" | "cancel";
export interface ElicitAnswer {
  readonly action: ElicitAction;
  readonly content?: Record<string, string | number | boolean | string[]>;
}

export interface ElicitationOptions {
  /** Opens a URL in the person's browser (default: the browser); only ever given http and https URLs (see src/safety/browser.ts). */
  readonly openUrl?: BrowserOpener;
}

/** How often a field is asked again after an answer that does not fit its schema. */
const MAX_ATTEMPTS = 3;
/** URL elicitations remembered per connection for their completion notice. */
const MAX_PENDING_URLS = 32;

/** One dialog sequence at a time per host: each waits for the one before. */
const dialogQueueOf = hostState((): { last: Promise<unknown> } => ({ last: Promise.resolve() }));

export class ElicitationPlugin implements KernelPlugin {
  readonly name = "elicitation";
  private readonly openUrl: BrowserOpener | undefined;

  constructor(options: ElicitationOptions = {}) {
    this.openUrl = options.openUrl;
  }

  apply(kernel: Kernel): void {
    kernel.hooks.clientCapabilities.tap(this.name, (capabilities) => ({
      ...capabilities,
      elicitation: { ...capabilities.elicitation, form: { applyDefaults: true }, url: {} },
    }));
    kernel.hooks.clientCreated.tap(this.name, (connection) => {
      const pendingUrls = new Map<string, string>();
      try {
        connection.client.setRequestHandler(
          "elicitation/create",
          (request, ctx) => this.answer(connection, request.params as unknown as ElicitParams, ctx.mcpReq.signal, pendingUrls) as never,
        );
      } catch (error) {
        if (error instanceof SdkError && error.code === SdkErrorCode.CapabilityNotSupported) return;
        throw error;
      }
      connection.client.setNotificationHandler("notifications/elicitation/complete", (notification) => {
        const id = String((notification.params as { elicitationId?: unknown }).elicitationId ?? "");
        const url = pendingUrls.get(id);
        if (url === undefined || !connection.isCurrent()) return;
        pendingUrls.delete(id);
        connection.log(`[pi-mcp] elicitation ${safeText(id, connection.host.redact)} completed\n`);
        connection.host.services.ui?.notify(
          `MCP server "${connection.server.name}": the web page you opened (${url}) reports that it is done.`,
          "info",
        );
      });
    });
  }

  private async answer(
    connection: LiveConnection,
    params: ElicitParams,
    requestSignal: AbortSignal | undefined,
    pendingUrls: Map<string, string>,
  ): Promise<ElicitAnswer> {
    const ui = connection.host.services.ui;
    const call = connection.activeCall();
    const refusal = !ui
      ? "no person can answer here (no UI: print or json mode, or the CLI)"
      : !call
        ? "the server asked outside a tool call"
        : !call.interactive
          ? "the tool call that caused it is not interactive"
          : !connection.isCurrent()
            ? "the connection is closing"
            : undefined;
    if (refusal || !ui || !call) {
      connection.log(`[pi-mcp] elicitation declined: ${refusal}\n`);
      return { action: "decline" };
    }
    const signal = AbortSignal.any([requestSignal, call.signal].filter((each): each is AbortSignal => each !== undefined));
    const dialogs = new Dialogs(ui, signal, connection);
    const answer = await this.inTurn(connection.host, signal, async () => {
      if (signal.aborted) return { action: "cancel" } as const;
      return params.mode === "url" ? this.urlFlow(dialogs, connection, params, pendingUrls) : formFlow(dialogs, connection, params);
    }).catch((error: unknown): ElicitAnswer => {
      // A dialog that failed (the RPC client went away, say) is the person not answering.
      connection.log(
        `[pi-mcp] elicitation dialog failed: ${safeText(error instanceof Error ? error.message : String(error), connection.host.redact)}\n`,
      );
      return { action: "cancel" };
    });
    connection.log(`[pi-mcp] elicitation (${params.mode === "url" ? "url" : "form"}): ${answer.action}\n`);
    return answer;
  }

  /** Runs `work` after every earlier dialog sequence of this host; a request cancelled while waiting is not shown. */
  private async inTurn(host: HostContext, signal: AbortSignal, work: () => Promise<ElicitAnswer>): Promise<ElicitAnswer> {
    const queue = dialogQueueOf(host);
    const mine = queue.last.then(() => (signal.aborted ? ({ action: "cancel" } as const) : work()));
    queue.last = mine.catch(() => undefined);
    return mine;
  }

  private async urlFlow(
    dialogs: Dialogs,
    connection: LiveConnection,
    params: UrlParams,
    pendingUrls: Map<string, string>,
  ): Promise<ElicitAnswer> {
    const what = "the web page it asks you to open (URL elicitation)";
    let url: URL;
    try {
      url = webUrl(String(params.url), connection.server.name, what);
    } catch (error) {
      // Declined before anything is shown: a `file:` or custom-scheme link never reaches the person or the opener.
      connection.log(`[pi-mcp] elicitation declined: ${safeText(describeError(error), connection.host.redact)}\n`);
      dialogs.ui.notify(safeText(describeError(error), connection.host.redact), "warning");
      return { action: "decline" };
    }
    const shown = dialogs.text(url.href);
    const yes = await dialogs.confirm(
      `MCP server "${connection.server.name}" asks you to open a web page`,
      `${dialogs.text(params.message)}\n\n${shown}\nSite: ${dialogs.text(url.host)}\n\nOpen it in your browser?`,
    );
    if (dialogs.cancelled) return { action: "cancel" };
    if (!yes) return { action: "decline" };
    if (params.elicitationId) {
      pendingUrls.set(params.elicitationId, shown);
      while (pendingUrls.size > MAX_PENDING_URLS) pendingUrls.delete(pendingUrls.keys().next().value!);
    }
    try {
      await openWebPage(url.href, connection.server.name, what, this.openUrl);
    } catch (error) {
      dialogs.ui.notify(`Could not open a browser (${dialogs.text(describeError(error))}); open this page yourself: ${shown}`, "warning");
    }
    return { action: "accept" };
  }
}

// ---------------------------------------------------------------------------
// Form mode

type ElicitParams = FormParams | UrlParams;
interface FormParams {
  readonly mode?: "form";
  readonly message: string;
  readonly requestedSchema: { readonly properties?: Record<string, FieldSchema>; readonly required?: readonly string[] };
}
interface UrlParams {
  readonly mode: "url";
  readonly message: string;
  readonly url: string;
  readonly elicitationId?: string;
}

interface Choice {
  readonly value: string;
  readonly title?: string;
}

export interface FieldSchema {
  readonly type?: string;
  readonly title?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly string[];
  readonly enumNames?: readonly string[];
  readonly oneOf?: readonly { readonly const: string; readonly title?: string }[];
  readonly anyOf?: readonly { readonly const: string; readonly title?: string }[];
  readonly items?: FieldSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
}

/** A field's answer: a value, nothing (optional and left empty), or the person cancelled / gave up. */
type FieldAnswer = { readonly value: string | number | boolean | string[] } | { readonly skip: true } | undefined;

async function formFlow(dialogs: Dialogs, connection: LiveConnection, params: FormParams): Promise<ElicitAnswer> {
  const properties = Object.entries(params.requestedSchema?.properties ?? {});
  const required = new Set(params.requestedSchema?.required ?? []);
  const fields = properties.map(([name, schema]) => `${dialogs.text(schema.title ?? name)}${required.has(name) ? " (required)" : ""}`);
  const yes = await dialogs.confirm(
    `MCP server "${connection.server.name}" asks for information`,
    `${dialogs.text(params.message)}${fields.length > 0 ? `\n\nFields: ${fields.join(", ")}` : ""}\n\nAnswer now? (No declines.)`,
  );
  if (dialogs.cancelled) return { action: "cancel" };
  if (!yes) return { action: "decline" };
  const content = keyedRecord<string | number | boolean | string[]>();
  for (const [name, schema] of properties) {
    const answer = await askField(dialogs, connection, name, schema, required.has(name));
    if (answer === undefined || dialogs.cancelled) return { action: "cancel" };
    if ("value" in answer) content[name] = answer.value;
  }
  return { action: "accept", content };
}

async function askField(
  dialogs: Dialogs,
  connection: LiveConnection,
  name: string,
  schema: FieldSchema,
  required: boolean,
): Promise<FieldAnswer> {
  const label = `"${connection.server.name}" asks: ${dialogs.text(schema.title ?? name)}${required ? " (required)" : ""}${schema.description ? ` — ${dialogs.text(schema.description)}` : ""}`;
  const choices = singleChoices(schema);
  if (choices) return askChoice(dialogs, label, choices, schema, required);
  if (schema.type === "array") return askMany(dialogs, label, manyChoices(schema), schema, required);
  if (schema.type === "boolean") {
    const fallback = typeof schema.default === "boolean" ? `\n(Default: ${schema.default ? "yes" : "no"}.)` : "";
    const value = await dialogs.confirm(label, `${schema.description ? dialogs.text(schema.description) : "Yes or no?"}${fallback}`);
    return dialogs.cancelled ? undefined : { value };
  }
  return askText(dialogs, label, schema, required);
}

/** string, number and integer fields: typed, checked, asked again (a few times) when the answer does not fit. */
async function askText(dialogs: Dialogs, label: string, schema: FieldSchema, required: boolean): Promise<FieldAnswer> {
  const numeric = schema.type === "number" || schema.type === "integer";
  const fallback =
    schema.default !== undefined && (numeric ? typeof schema.default === "number" : typeof schema.default === "string")
      ? schema.default
      : undefined;
  const hint =
    fallback !== undefined
      ? `empty keeps the default: ${dialogs.text(String(fallback))}`
      : required
        ? describeConstraints(schema)
        : `optional, leave empty to skip${describeConstraints(schema) ? `; ${describeConstraints(schema)}` : ""}`;
  let problem = "";
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const title = `${label}${problem ? ` [${problem}, try again]` : ""}`;
    const text = await dialogs.input(title, hint || (numeric ? "a number" : ""));
    if (text === undefined || dialogs.cancelled) return undefined;
    const trimmed = numeric ? text.trim() : text;
    if (trimmed === "") {
      if (fallback !== undefined) return { value: fallback as string | number };
      if (!required) return { skip: true };
      problem = "an answer is required";
      continue;
    }
    const checked = numeric ? checkNumber(trimmed, schema) : checkString(trimmed, schema);
    if ("value" in checked) return checked;
    problem = checked.problem;
  }
  return undefined;
}

/** One of a list (enum, oneOf, legacy enumNames): the default comes first. */
async function askChoice(dialogs: Dialogs, label: string, choices: Choice[], schema: FieldSchema, required: boolean): Promise<FieldAnswer> {
  const fallback =
    typeof schema.default === "string" && choices.some((choice) => choice.value === schema.default) ? schema.default : undefined;
  const ordered =
    fallback === undefined
      ? choices
      : [...choices.filter((choice) => choice.value === fallback), ...choices.filter((choice) => choice.value !== fallback)];
  const options = new Map<string, string | undefined>();
  for (const choice of ordered)
    options.set(
      uniqueLabel(options, `${dialogs.text(choice.title ?? choice.value)}${choice.value === fallback ? " (default)" : ""}`),
      choice.value,
    );
  const SKIP = "(leave empty)";
  if (!required && fallback === undefined) options.set(uniqueLabel(options, SKIP), undefined);
  const picked = await dialogs.select(label, [...options.keys()]);
  if (picked === undefined || dialogs.cancelled || !options.has(picked)) return undefined;
  const value = options.get(picked);
  return value === undefined ? { skip: true } : { value };
}

/** Several of a list: a select that toggles one choice at a time, until Done. The default starts chosen. */
async function askMany(dialogs: Dialogs, label: string, choices: Choice[], schema: FieldSchema, required: boolean): Promise<FieldAnswer> {
  const chosen = new Set(
    Array.isArray(schema.default)
      ? schema.default.filter((value): value is string => choices.some((choice) => choice.value === value))
      : [],
  );
  const min = schema.minItems ?? (required ? 1 : 0);
  const max = schema.maxItems ?? choices.length;
  let problem = "";
  for (let round = 0; round < choices.length * 2 + MAX_ATTEMPTS + 1; round++) {
    const names = choices.filter((choice) => chosen.has(choice.value)).map((choice) => dialogs.text(choice.title ?? choice.value));
    const options = new Map<string, string | undefined>();
    options.set(`Done (${names.length > 0 ? names.join(", ") : "none chosen"})`, undefined);
    for (const choice of choices)
      options.set(
        uniqueLabel(options, `${chosen.has(choice.value) ? "[x]" : "[ ]"} ${dialogs.text(choice.title ?? choice.value)}`),
        choice.value,
      );
    const picked = await dialogs.select(
      `${label}${problem ? ` [${problem}]` : ` (choose ${min === max ? min : `${min} to ${max}`}; pick one to toggle it)`}`,
      [...options.keys()],
    );
    if (picked === undefined || dialogs.cancelled || !options.has(picked)) return undefined;
    const value = options.get(picked);
    if (value !== undefined) {
      if (chosen.has(value)) chosen.delete(value);
      else chosen.add(value);
      problem = "";
      continue;
    }
    if (chosen.size === 0 && !required && min === 0) return { skip: true };
    if (chosen.size < min) problem = `choose at least ${min}`;
    else if (chosen.size > max) problem = `choose at most ${max}`;
    else return { value: choices.filter((choice) => chosen.has(choice.value)).map((choice) => choice.value) };
  }
  return undefined;
}

function singleChoices(schema: FieldSchema): Choice[] | undefined {
  if (schema.type !== undefined && schema.type !== "string") return undefined;
  if (Array.isArray(schema.oneOf) && schema.oneOf.length > 0)
    return schema.oneOf.map((item) => ({ value: String(item.const), ...(item.title !== undefined && { title: item.title }) }));
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.map((value, index) => ({
      value: String(value),
      ...(schema.enumNames?.[index] !== undefined && { title: schema.enumNames[index] }),
    }));
  }
  return undefined;
}

function manyChoices(schema: FieldSchema): Choice[] {
  const items = schema.items ?? {};
  const titled = items.anyOf ?? items.oneOf;
  if (Array.isArray(titled))
    return titled.map((item) => ({ value: String(item.const), ...(item.title !== undefined && { title: item.title }) }));
  return (items.enum ?? []).map((value) => ({ value: String(value) }));
}

function uniqueLabel(taken: Map<string, unknown>, label: string): string {
  let candidate = label;
  for (let n = 2; taken.has(candidate); n++) candidate = `${label} (${n})`;
  return candidate;
}

function describeConstraints(schema: FieldSchema): string {
  if (schema.type === "number" || schema.type === "integer") {
    const kind = schema.type === "integer" ? "a whole number" : "a number";
    if (schema.minimum !== undefined && schema.maximum !== undefined) return `${kind} from ${schema.minimum} to ${schema.maximum}`;
    if (schema.minimum !== undefined) return `${kind}, at least ${schema.minimum}`;
    if (schema.maximum !== undefined) return `${kind}, at most ${schema.maximum}`;
    return kind;
  }
  const format = { email: "an email address", uri: "a URL", date: "a date (YYYY-MM-DD)", "date-time": "a date and time (ISO 8601)" }[
    schema.format ?? ""
  ];
  return format ?? "";
}

export function checkNumber(text: string, schema: FieldSchema): { value: number } | { problem: string } {
  const value = Number(text);
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) || !Number.isFinite(value)) return { problem: "not a number" };
  if (schema.type === "integer" && !Number.isInteger(value)) return { problem: "not a whole number" };
  if (schema.minimum !== undefined && value < schema.minimum) return { problem: `must be at least ${schema.minimum}` };
  if (schema.maximum !== undefined && value > schema.maximum) return { problem: `must be at most ${schema.maximum}` };
  return { value };
}

export function checkString(text: string, schema: FieldSchema): { value: string } | { problem: string } {
  const length = [...text].length;
  if (schema.minLength !== undefined && length < schema.minLength) return { problem: `at least ${schema.minLength} characters` };
  if (schema.maxLength !== undefined && length > schema.maxLength) return { problem: `at most ${schema.maxLength} characters` };
  switch (schema.format) {
    case "email":
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text)) return { problem: "not an email address" };
      break;
    case "uri":
      if (!URL.canParse(text)) return { problem: "not a URL" };
      break;
    case "date":
      if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(text))) return { problem: "not a date (YYYY-MM-DD)" };
      break;
    case "date-time":
      if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(Date.parse(text))) return { problem: "not a date and time (ISO 8601)" };
      break;
  }
  return { value: text };
}

/** Pi's dialogs for one request: server text made safe to show, and closed when the request ends. */
class Dialogs {
  constructor(
    readonly ui: UiService,
    private readonly signal: AbortSignal,
    private readonly connection: LiveConnection,
  ) {}

  get cancelled(): boolean {
    return this.signal.aborted;
  }

  text(value: string): string {
    return safeText(value, this.connection.host.redact);
  }

  async input(title: string, placeholder: string): Promise<string | undefined> {
    return this.cancelled ? undefined : this.ui.input(title, placeholder || undefined, this.signal);
  }

  async select(title: string, options: string[]): Promise<string | undefined> {
    return this.cancelled ? undefined : this.ui.select(title, options, this.signal);
  }

  async confirm(title: string, message: string): Promise<boolean> {
    return this.cancelled ? false : this.ui.confirm(title, message, this.signal);
  }
}

/*
 * Limits every server is held to, whatever it sends (each is documented in
 * the README). A server is untrusted: none of these can be raised by it.
 */

/** The largest single message read from a server, on every transport (16 MiB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The deepest nesting (objects and arrays) of anything a server sends that
 * reaches Pi's transcript: tool definitions (deeper ones are left out) and
 * every result's structured content and details (cut below it). Every model request of Pi
 * 1.6 structured-clones the transcript, and V8's structured clone overflows
 * its stack at about 1,600 levels: one such value would fail every request
 * of the session, also after it is resumed. Measured in a real Pi: 1,500
 * levels pass, 1,600 fail; the cut leaves room.
 */
export const MAX_NESTING_DEPTH = 1_000;

/**
 * The most one paged list (tools, resources, resource templates, prompts)
 * may hold in all, as JSON: two messages' worth. A server that pages forever
 * is stopped here, long before its 1,000th page.
 */
export const MAX_CATALOG_BYTES = 2 * MAX_MESSAGE_BYTES;

/** How much of a progress notification's message reaches Pi's tool row (one line is shown; a server may send megabytes, many times a second). */
export const MAX_PROGRESS_MESSAGE_CHARS = 500;

/** How many `sampling/createMessage` requests one tool call may make. */
export const MAX_SAMPLING_PER_CALL = 10;

/** `bytes` as the README writes limits: "16 MiB". */
export function formatLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** What model providers accept as a tool name: a Pi tool of any other name would fail every model request. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/*
 * Images that reach the model. Every model request carries the whole
 * conversation, so one image a provider refuses fails every later request of
 * the session, also after it is resumed. The figures are the smallest that Pi
 * 1.6's model data (pi-ai `inputLimits`) and its own image handling hold to.
 */

/** The largest image, as base64: Pi's own resize limit for images it adds to a conversation (4.5 MiB, below Anthropic's 5 MB). */
export const MAX_IMAGE_BASE64_BYTES = 4.5 * 1024 * 1024;

/** The widest and tallest image: Pi's own resize limit, and what Anthropic takes once a request holds more than 20 images. */
export const MAX_IMAGE_SIDE = 2_000;

/** Native images in one result, and in one provider message (Bedrock takes 20 per message; providers merge consecutive tool results into one). */
export const MAX_IMAGES_PER_MESSAGE = 20;

/** Native images in the whole conversation: the smallest per-request count in Pi's model data (100, Claude 4.5 models). */
export const MAX_CONVERSATION_IMAGES = 100;

/** All the conversation's images together, as base64: room for the text below Google's 20 MiB and Anthropic's 32 MiB per request. */
export const MAX_CONVERSATION_IMAGE_BYTES = 16 * 1024 * 1024;

/** Images of one result that are saved as files of their own instead of shown; the rest of them are saved together in one file. */
export const MAX_IMAGE_FILES_PER_RESULT = 20;

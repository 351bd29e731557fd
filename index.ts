/**
 * The Pi extension entry Pi loads from this package (`"pi": {"extensions":
 * ["./index.ts"]}`). It sits at the package root so that Pi lists the
 * extension by the package's name (`pi-mcp`), as Pi labels a package whose
 * entry is `index.*` at its root; the extension itself is src/index.ts.
 */
export { default } from "./src/index.ts";

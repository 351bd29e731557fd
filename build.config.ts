import { fileURLToPath } from "node:url";
import { defineBuildConfig } from "unbuild";

/** Pi's packages the extension imports values from, and the shim (src/pi/host-shims/) that takes each from Pi. */
const SHIMS: Record<string, string> = {
  "@earendil-works/pi-coding-agent": "pi-coding-agent",
  "@earendil-works/pi-tui": "pi-tui",
};
const shim = (name: string) => fileURLToPath(new URL(`./src/pi/host-shims/${name}.ts`, import.meta.url));

export default defineBuildConfig([
  {
    entries: ["cli/index", "src/lib"],
    declaration: true,
    clean: true,
    // Pi is the host: never bundled.
    externals: [/^@earendil-works\//],
    rollup: { emitCJS: false },
  },
  {
    // The Pi extension, which the root index.ts loads natively when it is there (Pi's loader would transform some
    // 200 source modules at every start whose transform cache is cold): the entry (src/index.ts), with the core it
    // loads once the session started (src/pi/extension.ts) as a chunk, so that what both use is one copy. Its
    // imports of Pi's packages resolve to the shims, which take Pi's own modules from the root index.ts.
    name: "pi-core",
    entries: [{ input: "src/index", name: "entry" }],
    outDir: "dist/pi",
    declaration: false,
    clean: false,
    alias: Object.fromEntries(Object.entries(SHIMS).map(([name, file]) => [name, shim(file)])),
    rollup: { emitCJS: false },
    hooks: {
      // unbuild makes every peer dependency external, Pi's packages among them, before the alias could apply.
      "rollup:options"(_context, options) {
        const external = options.external;
        if (typeof external !== "function") throw new Error("pi-core build: unbuild's rollup external is not a function");
        options.external = (id, importer, resolved) => !Object.hasOwn(SHIMS, id) && external(id, importer, resolved);
      },
    },
  },
]);

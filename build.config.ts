import { fileURLToPath } from "node:url";
import { defineBuildConfig } from "unbuild";

const SHIMMED = new Set(["@earendil-works/pi-coding-agent", "@earendil-works/pi-tui"]);
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
    // The Pi extension, which the root index.ts loads natively when it is there: Pi's loader would transform its
    // ~200 source modules at every start whose transform cache is cold.
    // Its imports of Pi resolve to the shims, which take Pi's own modules from the entry.
    name: "pi-core",
    // The entry Pi loads (src/index.ts, through the root index.ts); the core it loads once the session started
    // (src/pi/extension.ts) is a chunk of it, so the modules both use are one copy.
    entries: [{ input: "src/index", name: "entry" }],
    outDir: "dist/pi",
    declaration: false,
    clean: false,
    alias: { "@earendil-works/pi-coding-agent": shim("pi-coding-agent"), "@earendil-works/pi-tui": shim("pi-tui") },
    rollup: { emitCJS: false },
    hooks: {
      // unbuild makes every peer dependency external, Pi's packages among them, before the alias could apply.
      "rollup:options"(_context, options) {
        const external = options.external;
        if (typeof external !== "function") throw new Error("pi-core build: unbuild's rollup external is not a function");
        options.external = (id, importer, resolved) => !SHIMMED.has(id) && external(id, importer, resolved);
      },
    },
  },
]);

import { defineBuildConfig } from "unbuild";

export default defineBuildConfig({
  entries: ["cli/index", "src/lib"],
  declaration: true,
  clean: true,
  // Pi is the host: never bundled.
  externals: [/^@earendil-works\//],
  rollup: { emitCJS: false },
});

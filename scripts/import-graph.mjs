// Prints the import graph's problems in src/, plugins/ and cli/ and exits 1 when
// there is any:
//   - every import circle between files (type-only imports, re-exports and
//     dynamic imports count), and every circle between folders (src/<folder>/,
//     plugins/<name>/, cli/; a file directly in src/ stands for itself), which
//     files alone can hide: a imports b's leaf, b imports a's leaf;
//   - every import that breaks the layout's dependency rules:
//       src/kernel imports nothing outside src/kernel;
//       a plugin imports only its own folder, src/kernel, src/config, src/safety and libraries;
//       src/ imports no plugin, except the composition root and the Pi entry.
//
//   node scripts/import-graph.mjs [root]     (npm run check:imports)
//
// The TypeScript compiler (a devDependency) parses each file, so imports in
// comments and strings are not mistaken for real ones.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const SCANNED = ["src", "plugins", "cli"];
const SOURCE = /\.(ts|mts|cts|tsx|js|mjs)$/;
const KERNEL = "src/kernel/";
/** What plugins may import besides their own folder and libraries. */
const PLUGIN_MAY_IMPORT = [KERNEL, "src/config/", "src/safety/"];
/** The only src/ files that may import plugins. */
const PLUGIN_IMPORTERS = new Set(["src/composition.ts", "src/index.ts"]);

const root = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), ".."));
const files = SCANNED.flatMap((folder) => sourceFiles(join(root, folder)))
  .map(toProjectPath)
  .sort();
const edges = files.flatMap((file) => importsOf(file));
const circles = importCircles(files, edges);
const folderCircles = importCircles([...new Set(files.map(folderOf))].sort(), folderEdges(edges));
const violations = edges.flatMap((edge) => {
  const rule = brokenRule(edge);
  return rule ? [{ ...edge, rule }] : [];
});

const typeOnly = edges.filter((edge) => edge.kind === "type").length;
console.log(
  `Import graph of ${SCANNED.map((folder) => `${folder}/`).join(", ")}: ${files.length} files, ${edges.length} imports between them (${typeOnly} type-only).`,
);
printCircles("Import circles between files", circles);
printCircles("Import circles between folders", folderCircles);
printViolations(violations);
process.exit(circles.length > 0 || folderCircles.length > 0 || violations.length > 0 ? 1 : 0);

/** Every source file under `dir`, recursively (none when it does not exist). */
function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A path relative to the root, with forward slashes (what the output and the rules use). */
function toProjectPath(path) {
  return relative(root, path).split(sep).join("/");
}

/**
 * The project files `file` imports: static imports and re-exports (type-only or
 * not), `import("…")` calls and `typeof import("…")` types. Libraries are left out.
 */
function importsOf(file) {
  const text = readFileSync(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    const imported = moduleReference(node);
    if (imported) {
      const target = resolveSpecifier(file, imported.specifier);
      if (target)
        found.push({ from: file, to: target, kind: imported.kind, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The module a node imports and how ("value", "type" or "dynamic"), or undefined. */
function moduleReference(node) {
  const literal = (expression) => (expression && ts.isStringLiteralLike(expression) ? expression.text : undefined);
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    const typeOnly = clause !== undefined && (clause.isTypeOnly || allNamedTypeOnly(clause));
    return { specifier: literal(node.moduleSpecifier), kind: typeOnly ? "type" : "value" };
  }
  if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
    const typeOnly =
      node.isTypeOnly ||
      (node.exportClause &&
        ts.isNamedExports(node.exportClause) &&
        node.exportClause.elements.length > 0 &&
        node.exportClause.elements.every((element) => element.isTypeOnly));
    return { specifier: literal(node.moduleSpecifier), kind: typeOnly ? "type" : "value" };
  }
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    return { specifier: literal(node.moduleReference.expression), kind: node.isTypeOnly ? "type" : "value" };
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    return { specifier: literal(node.arguments[0]), kind: "dynamic" };
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    return { specifier: literal(node.argument.literal), kind: "type" };
  }
  return undefined;
}

/** `import { type A, type B } from` imports types only (a bare `import {} from` runs the module). */
function allNamedTypeOnly(clause) {
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

/** The project file a relative specifier names (`.js` may stand for `.ts`), or undefined for a library. */
function resolveSpecifier(importer, specifier) {
  if (specifier === undefined || !(specifier.startsWith("./") || specifier.startsWith("../"))) return undefined;
  const base = join(root, dirname(importer), specifier);
  const stem = base.replace(/\.(js|mjs|cjs)$/, "");
  const candidates = [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${stem}.tsx`, join(base, "index.ts")];
  const hit = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  // An unresolvable relative import is still an edge: the rules must see where it points.
  return toProjectPath(hit ?? base);
}

/** The unit a folder circle is made of: src/<folder>/, plugins/<name>/, cli/, or a file directly in src/. */
function folderOf(file) {
  const parts = file.split("/");
  if (parts[0] === "cli") return "cli/";
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : file;
}

/** One edge per pair of folders that import each other, with the file imports behind it. */
function folderEdges(fileEdges) {
  const pairs = new Map();
  for (const edge of fileEdges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === to) continue;
    const key = `${from} ${to}`;
    if (!pairs.has(key)) pairs.set(key, { from, to, imports: [] });
    pairs.get(key).imports.push(edge);
  }
  return [...pairs.values()];
}

/** The dependency rule an import breaks, or undefined. */
function brokenRule(edge) {
  const { from, to } = edge;
  if (from.startsWith(KERNEL) && !to.startsWith(KERNEL)) return "the kernel imports only the kernel";
  if (from.startsWith("plugins/")) {
    const ownFolder = `${from.split("/").slice(0, 2).join("/")}/`;
    if (!to.startsWith(ownFolder) && !PLUGIN_MAY_IMPORT.some((allowed) => to.startsWith(allowed))) {
      return "a plugin imports only its own folder, src/kernel, src/config, src/safety and libraries";
    }
  }
  if (from.startsWith("src/") && to.startsWith("plugins/") && !PLUGIN_IMPORTERS.has(from)) {
    return "src/ imports no plugin (only src/composition.ts and the entries src/index.ts and cli/ do)";
  }
  return undefined;
}

/**
 * The graph's circles: for each strongly connected component (Tarjan) of
 * more than one file, or a file importing itself, one shortest circle through
 * every import inside it, so each import that closes a circle is shown.
 */
function importCircles(nodes, allEdges) {
  const out = new Map(nodes.map((node) => [node, []]));
  for (const edge of allEdges) out.get(edge.from)?.push(edge);
  const components = stronglyConnected(nodes, (node) => (out.get(node) ?? []).map((edge) => edge.to));
  const result = [];
  for (const component of components) {
    const members = new Set(component);
    const inside = (edge) => members.has(edge.to);
    const selfLoop = component.length === 1 && (out.get(component[0]) ?? []).some((edge) => edge.to === component[0]);
    if (component.length === 1 && !selfLoop) continue;
    const cycles = new Map();
    for (const node of component) {
      for (const edge of (out.get(node) ?? []).filter(inside)) {
        const back = shortestPath(edge.to, node, (at) => (out.get(at) ?? []).filter(inside));
        const cycle = [edge, ...back];
        const key = canonical(cycle.map((step) => step.from));
        if (!cycles.has(key)) cycles.set(key, cycle);
      }
    }
    result.push({ files: [...component].sort(), cycles: [...cycles.values()].sort((a, b) => a.length - b.length) });
  }
  return result.sort((a, b) => b.files.length - a.files.length || a.files[0].localeCompare(b.files[0]));
}

/** Tarjan's algorithm, iterative (no recursion limit on deep graphs). */
function stronglyConnected(nodes, successors) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  let counter = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work = [{ node: start, next: successors(start), position: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.position < frame.next.length) {
        const child = frame.next[frame.position++];
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, next: successors(child), position: 0 });
        } else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node), index.get(child)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** The fewest imports leading from `from` to `to` (breadth first); [] when from is to. */
function shortestPath(from, to, edgesOf) {
  const via = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift();
    if (at === to) break;
    for (const edge of edgesOf(at)) {
      if (via.has(edge.to)) continue;
      via.set(edge.to, edge);
      queue.push(edge.to);
    }
  }
  const path = [];
  for (let at = to; via.get(at) !== undefined; at = via.get(at).from) path.unshift(via.get(at));
  return path;
}

/** One name for a circle whichever file it starts at. */
function canonical(cycle) {
  const start = cycle.indexOf([...cycle].sort()[0]);
  return [...cycle.slice(start), ...cycle.slice(0, start)].join(" ");
}

function describeStep(edge) {
  if (edge.imports) {
    const more = edge.imports.length - 1;
    return `${edge.from} → ${edge.to}  [${describeStep(edge.imports[0])}${more > 0 ? `, and ${more} more` : ""}]`;
  }
  return `${edge.from}:${edge.line} → ${edge.to}${edge.kind === "value" ? "" : ` (${edge.kind})`}`;
}

function printCircles(title, found) {
  console.log(`\n${title}: ${found.length}`);
  found.forEach((circle, number) => {
    console.log(`  circle ${number + 1}: ${circle.files.length} (${circle.files.join(", ")})`);
    for (const cycle of circle.cycles) {
      console.log(`    ${cycle.map(describeStep).join("\n      ")}`);
    }
  });
}

function printViolations(found) {
  console.log(`\nDependency-rule violations: ${found.length}`);
  const byRule = new Map();
  for (const violation of found) byRule.set(violation.rule, [...(byRule.get(violation.rule) ?? []), violation]);
  for (const [rule, list] of byRule) {
    console.log(`  ${rule} (${list.length}):`);
    for (const violation of list) console.log(`    ${describeStep(violation)}`);
  }
}

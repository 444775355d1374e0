#!/usr/bin/env node
// Copies examples/*.ts into the guides, so that they render with their examples inline on
// GitHub and npm (typedoc's {@includeCode} renders literally there). An example's place in a
// guide is marked by a pair of comments; the code between them is rewritten:
//
//   <!-- example: ../../examples/mutex.ts -->
//   ```ts
//   ...the file, verbatim...
//   ```
//   <!-- /example -->
//
// A `{@includeCode path}` line is turned into such a block. The examples themselves stay the
// source of truth: they are compiled and run by the tests (test/examples.test.ts), and
// test/docs.test.ts fails if a guide's copy differs (this script's --check).
//
//   node scripts/inline-examples.mjs          rewrite the guides
//   node scripts/inline-examples.mjs --check  exit 1, naming the guides, if any is stale
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Markdown files of the guides: README.md and docs/ (not the generated docs/api). */
export function guideFiles() {
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return p === join(root, 'docs', 'api') ? [] : walk(p);
      return name.endsWith('.md') ? [p] : [];
    });
  return [join(root, 'README.md'), ...walk(join(root, 'docs'))];
}

// An empty block (```ts right after ```ts) is one too: it must not run on to the next example's end.
const BLOCK = /<!-- example: (\S+) -->\n```ts\n(?:[\s\S]*?\n)??```\n<!-- \/example -->/g;
const INCLUDE = /^\{@includeCode (\S+)\}$/gm;

function block(file, target) {
  const code = readFileSync(resolve(dirname(file), target), 'utf8').replace(/\n+$/, '');
  return `<!-- example: ${target} -->\n\`\`\`ts\n${code}\n\`\`\`\n<!-- /example -->`;
}

/** The guide's text with every example block brought up to date; a marker not opening a block is an error. */
export function inline(file, text) {
  const markers = text.match(/<!-- example: /g)?.length ?? 0;
  const blocks = text.match(BLOCK)?.length ?? 0;
  if (markers !== blocks) throw new Error(`${relative(root, file)}: ${markers - blocks} example marker(s) not followed by a \`\`\`ts block and <!-- /example -->`);
  return text.replace(INCLUDE, (_, target) => block(file, target)).replace(BLOCK, (_, target) => block(file, target));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const file of guideFiles()) {
    const text = readFileSync(file, 'utf8');
    const next = inline(file, text);
    if (next === text) continue;
    stale.push(relative(root, file));
    if (!check) writeFileSync(file, next);
  }
  if (check && stale.length > 0) {
    process.stderr.write(`examples inlined in ${stale.join(', ')} differ from examples/: run node scripts/inline-examples.mjs\n`);
    process.exit(1);
  }
  if (!check && stale.length > 0) process.stdout.write(`updated ${stale.join(', ')}\n`);
}

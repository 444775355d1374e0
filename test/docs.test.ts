// The README and the guides teach what the code does: their inlined examples are examples/
// verbatim (compiled and run by examples.test.ts), every TypeScript and JavaScript snippet
// type-checks against the built package (as `zk-recipes`, both its ESM and CommonJS types),
// and every relative link leads to a file, and every anchor to a heading (GitHub's and
// typedoc's) or, in a source file, to one of its exports. TSDoc `@example`s are type-checked
// too, and guides and API pages link to each other.
//
// Snippets that are fragments say what they lean on in an HTML comment just before them,
// invisible on GitHub, npm and in typedoc:
//
//   <!-- snippet: preamble
//   declare const session: import('zk-recipes').ZkSession;
//   -->
//
// or, for one that cannot compile: `<!-- snippet: skip, <reason> -->`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

// From build/test/docs.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

function walk(dir: string, pick: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return p === join(REPO, 'docs', 'api') ? [] : walk(p, pick);
    return pick(name) ? [p] : [];
  });
}

/** The guides: README and docs/ (the generated docs/api aside). */
const GUIDES = [join(REPO, 'README.md'), ...walk(join(REPO, 'docs'), (n) => n.endsWith('.md'))];
/** Every markdown file whose links are checked. */
const LINKED = [...GUIDES, join(REPO, 'CHANGELOG.md'), join(REPO, 'BENCHMARKS.md')].filter((f) => existsSync(f));

interface Snippet {
  file: string;
  /** 1-based line of the first code line. */
  line: number;
  lang: string;
  code: string;
  preamble: string;
}

interface Fence {
  line: number;
  lang: string;
  code: string;
  /** The HTML comments between the previous block of text and the fence. */
  directives: string[];
  /** Inside `<!-- example: ... -->` markers. */
  inExample: boolean;
}

/** Code fences of a markdown file, with the comments just before each. */
function fences(text: string): Fence[] {
  const lines = text.split('\n');
  const out: Fence[] = [];
  let directives: string[] = [];
  let inExample = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = /^\s*```(\w*)\s*$/.exec(line);
    if (open) {
      const start = i + 1;
      let end = start;
      while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
      out.push({ line: start + 1, lang: open[1] ?? '', code: lines.slice(start, end).join('\n'), directives, inExample });
      directives = [];
      i = end;
      continue;
    }
    if (line.startsWith('<!--')) {
      let comment = line;
      while (!comment.includes('-->') && i + 1 < lines.length) comment += `\n${lines[++i]!}`;
      if (/^<!-- example: /.test(comment)) inExample = true;
      else if (/^<!-- \/example -->/.test(comment)) inExample = false;
      else directives.push(comment);
      continue;
    }
    if (line.trim() !== '') directives = [];
  }
  return out;
}

const SNIPPET_LANGS: Record<string, string> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };

function snippetsOf(file: string): { snippets: Snippet[]; skipped: { line: number; reason: string }[] } {
  const snippets: Snippet[] = [];
  const skipped: { line: number; reason: string }[] = [];
  for (const f of fences(readFileSync(file, 'utf8'))) {
    const lang = SNIPPET_LANGS[f.lang];
    if (!lang || f.inExample) continue;
    let preamble = '';
    let skip: string | undefined;
    for (const d of f.directives) {
      const pre = /^<!-- snippet: preamble\n([\s\S]*?)-->$/.exec(d);
      const sk = /^<!-- snippet: skip, (.+?) -->$/.exec(d);
      if (pre) preamble += pre[1];
      else if (sk) skip = sk[1];
      else if (d.startsWith('<!-- snippet')) assert.fail(`${relative(REPO, file)}:${f.line - 1}: unknown snippet directive ${d}`);
    }
    if (skip !== undefined) skipped.push({ line: f.line, reason: skip });
    else snippets.push({ file, line: f.line, lang, code: f.code, preamble });
  }
  return { snippets, skipped };
}

/** TSDoc `@example` blocks of src/: each may use `session` and `shutdown`, and imports the rest. */
function tsdocExamples(): Snippet[] {
  const out: Snippet[] = [];
  for (const file of walk(join(REPO, 'src'), (n) => n.endsWith('.ts') && !n.endsWith('.d.ts'))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*\* @example\s*$/.test(lines[i]!)) continue;
      let j = i + 1;
      if (!/^\s*\* ```ts\s*$/.test(lines[j] ?? '')) continue;
      const start = ++j;
      while (j < lines.length && !/^\s*\* ```\s*$/.test(lines[j]!)) j++;
      const code = lines
        .slice(start, j)
        .map((l) => l.replace(/^\s*\* ?/, ''))
        .join('\n');
      out.push({
        file,
        line: start + 1,
        lang: 'ts',
        code,
        preamble: "declare const session: import('zk-recipes').ZkSession;\ndeclare const shutdown: AbortSignal;\n",
      });
      i = j;
    }
  }
  return out;
}

// GitHub: lowercase, drop what is not a letter, digit, space, '-' or '_', spaces to '-'.
function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

// typedoc 0.28's Slugger (output/themes/default/Slugger.js).
function typedocSlug(heading: string): string {
  return heading
    .trim()
    .replace(/<[!/a-z].*?>/gi, '')
    .replace(/[\u2000-\u206F\u2E00-\u2E7F\\'!"#$%&()*+,./:;<=>?@[\]^`{|}~]/g, '')
    .replace(/\s/g, '-')
    .toLocaleLowerCase();
}

/** The anchors of a markdown file's headings, under both renderers (with -1, -2 for repeats). */
function anchors(file: string): { github: Set<string>; typedoc: Set<string> } {
  const sets = { github: new Set<string>(), typedoc: new Set<string>() };
  const lines = readFileSync(file, 'utf8').split('\n');
  let inFence = false;
  for (const line of lines) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const h = !inFence && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const text = h[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    for (const [set, slug] of [
      [sets.github, githubSlug(text)],
      [sets.typedoc, typedocSlug(text)],
    ] as const) {
      let s = slug;
      for (let n = 1; set.has(s); n++) s = `${slug}-${n}`;
      set.add(s);
    }
  }
  return sets;
}

/** Names a TypeScript source file exports (declarations and export lists). */
function exportsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const names = new Set<string>();
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:abstract\s+)?(?:class|interface|type|function|const|let|enum)\s+(\w+)/gm)) names.add(m[1]!);
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop();
      if (name) names.add(name);
    }
  }
  return names;
}

/** Relative links of a markdown file, outside code (fences and inline code). */
function links(file: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let inFence = false;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      if (/^\s*```/.test(raw)) {
        inFence = !inFence;
        return;
      }
      if (inFence || raw.startsWith('<!--')) return;
      const line = raw.replace(/`[^`]*`/g, '``');
      for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ line: i + 1, target: m[1]! });
      for (const m of line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)) out.push({ line: i + 1, target: m[1]! });
      for (const m of line.matchAll(/<a\s[^>]*href="([^"]+)"/g)) out.push({ line: i + 1, target: m[1]! });
    });
  return out.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target));
}

/**
 * How the project's own history shows up in prose: issue and pull-request numbers, branch names
 * and talk of branches, "on main", cherry-picks, commits by hash, work sessions by number. The
 * guides speak of the library as it is; history belongs in the CHANGELOG.
 */
const HISTORY: readonly [what: string, pattern: RegExp][] = [
  ['an issue number', /\bissues? #?\d+/i],
  ['a pull request', /\b(?:PR|pull request) ?#?\d+/i],
  ['the main branch', /\b(?:on|in|to|from|of|against) `?main`?(?![\w(`-])/i],
  ['a branch name', /\b(?:fix|feature|feat|bugfix|hotfix|topic|wip)\/[\w.-]+/],
  ['a branch', /\b(?:(?:this|the|a|our|that) branch(?:'s|es)?|branch(?:'s)? base)\b/i],
  ['a cherry-pick', /\bcherry-?pick/i],
  ['a worktree', /\bworktree/i],
  ['a commit hash', /\bcommit [0-9a-f]{7,40}\b/i],
  ['a work session', /\b(?:review|work|helper|newcomer) session\b|\bsession #\d+|\bsession \d+\b(?! ?m?s\b)(?!-)/i],
];

/** Where a user reads: README, docs/ and the TSDoc comments of src/ (what typedoc renders). */
function historyMentions(): string[] {
  const found: string[] = [];
  const scan = (file: string, text: string, firstLine: number): void => {
    // Prose wraps: match across line ends (and a TSDoc comment's leading stars), keeping offsets.
    const flat = text.replace(/\n\s*\*?/g, (m) => ' '.repeat(m.length));
    for (const [what, pattern] of HISTORY) {
      for (const m of flat.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
        const line = firstLine + text.slice(0, m.index).split('\n').length - 1;
        found.push(`${relative(REPO, file)}:${line}: ${what} ("${m[0].replace(/\s+/g, ' ')}")`);
      }
    }
  };
  for (const g of GUIDES) scan(g, readFileSync(g, 'utf8'), 1);
  for (const file of walk(join(REPO, 'src'), (n) => n.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) scan(file, m[0], text.slice(0, m.index).split('\n').length);
  }
  return found;
}

describe('README, guides and TSDoc speak of the library as it is', () => {
  it('the check catches history and lets ordinary prose be', () => {
    const caught = (line: string): boolean => HISTORY.some(([, p]) => p.test(line));
    for (const line of ['issue 11, item 2', 'before issue 15', 'its fix is on `fix/queue-delivery`', 'On `main` with this suite', 'with the fix (on main)', "found on the branch's base", 'cherry-picked', 'see PR #42', 'as of commit 747ec33', 'found in review session 12', 'session 7 found it']) {
      assert.ok(caught(line), `caught: ${line}`);
    }
    for (const line of ['async function main() {', 'main().catch(', 'export async function main(connectString', 'the codes recipes and callers commonly branch on', 'back with a new session 9 s later', 'a session 20 ms older', 'CURATOR-696', 'ZOOKEEPER-706', 'docs/recipes/mutex.md', 'session-ended']) {
      assert.ok(!caught(line), `not caught: ${line}`);
    }
  });

  it('no issue numbers, branches, "on main", cherry-picks, commits or session numbers', () => {
    assert.deepEqual(historyMentions(), []);
  });
});

describe('README and guides', () => {
  let tmp: string;
  before(() => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'zk-recipes-snippets-')));
  });
  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('inline their examples exactly as examples/ has them (scripts/inline-examples.mjs --check)', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'inline-examples.mjs'), '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    // No guide is left with typedoc's include tag, which GitHub and npm render literally.
    for (const g of GUIDES) assert.doesNotMatch(readFileSync(g, 'utf8'), /\{@includeCode/, relative(REPO, g));
    // Every recipe guide shows a whole service instance.
    for (const name of ['mutex', 'semaphore', 'rwlock', 'leader', 'queue', 'atomic']) {
      assert.match(readFileSync(join(REPO, 'docs', 'recipes', `${name}.md`), 'utf8'), new RegExp(`<!-- example: \\.\\./\\.\\./examples/${name}\\.ts -->`));
    }
  });

  it('type-check every ts and js snippet (and every TSDoc @example) against the built package', () => {
    const all: Snippet[] = [];
    const skipped: string[] = [];
    for (const g of GUIDES) {
      const { snippets, skipped: s } = snippetsOf(g);
      all.push(...snippets);
      skipped.push(...s.map((x) => `${relative(REPO, g)}:${x.line} (${x.reason})`));
    }
    all.push(...tsdocExamples());
    assert.ok(all.length >= 20, `found only ${all.length} snippets`);
    // A project that depends on the package: node_modules/zk-recipes is this repository (its
    // exports, its dist). TypeScript snippets get their preamble in the same file; JavaScript
    // ones are checked as JavaScript (checkJs, so require() is typed), each in a folder of its
    // own with its preamble as a global declaration file beside it.
    mkdirSync(join(tmp, 'node_modules'), { recursive: true });
    symlinkSync(REPO, join(tmp, 'node_modules', 'zk-recipes'), 'dir');
    // The metrics guide's snippets use prom-client (a devDependency here, the user's own there).
    symlinkSync(join(REPO, 'node_modules', 'prom-client'), join(tmp, 'node_modules', 'prom-client'), 'dir');
    // And the OpenTelemetry API and SDKs (devDependencies here too).
    symlinkSync(join(REPO, 'node_modules', '@opentelemetry'), join(tmp, 'node_modules', '@opentelemetry'), 'dir');
    writeFileSync(join(tmp, 'package.json'), '{"type":"module","private":true}');
    const projects = new Map<string, Map<string, { snippet: Snippet; offset: number }>>();
    const add = (dir: string, name: string, text: string, snippet: Snippet, offset: number): void => {
      mkdirSync(join(tmp, dir), { recursive: true });
      writeFileSync(join(tmp, dir, name), text);
      if (!projects.has(dir)) projects.set(dir, new Map());
      projects.get(dir)!.set(name, { snippet, offset });
    };
    const syntaxErrors: string[] = [];
    all.forEach((s, i) => {
      if (s.lang === 'ts') {
        add('ts', `snippet-${i}.ts`, `${s.preamble}${s.code}\nexport {};\n`, s, s.preamble.split('\n').length - 1);
        return;
      }
      const ext = /\brequire\(/.test(s.code) ? 'cjs' : 'mjs';
      const dir = `js-${i}`;
      add(dir, `snippet.${ext}`, `${s.code}\n`, s, 0);
      if (s.preamble) writeFileSync(join(tmp, dir, 'preamble.d.ts'), s.preamble);
      // Plain JavaScript for the Node running the tests (20+): no TypeScript syntax, no `await using`.
      const check = spawnSync(process.execPath, ['--check', join(tmp, dir, `snippet.${ext}`)], { encoding: 'utf8' });
      if (check.status !== 0) syntaxErrors.push(`${relative(REPO, s.file)}:${s.line}: not plain JavaScript for node ${process.version}: ${check.stderr.split('\n').find((l) => /Error/.test(l)) ?? check.stderr}`);
    });
    assert.deepEqual(syntaxErrors, []);
    const errors: string[] = [];
    for (const [dir, files] of projects) {
      writeFileSync(
        join(tmp, dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023', 'ESNext.Disposable'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            allowJs: true,
            checkJs: true,
            skipLibCheck: true,
            typeRoots: [join(REPO, 'node_modules', '@types')],
            types: ['node'],
          },
          include: ['*.ts', '*.mjs', '*.cjs'],
        }),
      );
      const r = spawnSync(process.execPath, [TSC, '-p', join(tmp, dir)], { cwd: join(tmp, dir), encoding: 'utf8', timeout: 120_000 });
      for (const l of (r.stdout + r.stderr).split('\n')) {
        if (!/error TS\d+/.test(l)) continue;
        const m = /^([\w.-]+)\((\d+),(\d+)\): (.*)$/.exec(l);
        const w = m && files.get(m[1]!);
        if (!m || !w) {
          errors.push(`${dir}/${l}`);
          continue;
        }
        const line = Number(m[2]) - w.offset;
        errors.push(`${relative(REPO, w.snippet.file)}:${w.snippet.line + line - 1}: ${m[4]}${line < 1 ? ' (in its preamble)' : ''}`);
      }
      if (r.status !== 0 && errors.length === 0) errors.push(`${dir}: tsc failed: ${r.stdout}${r.stderr}`);
    }
    assert.deepEqual(errors, [], `snippets that do not type-check:\n${errors.join('\n')}`);
    // Skipped snippets say why; none is skipped today.
    assert.deepEqual(skipped, []);
  });

  it('link only to files that exist and anchors that exist (on GitHub and in typedoc)', () => {
    const broken: string[] = [];
    for (const file of LINKED) {
      for (const { line, target } of links(file)) {
        const [path = '', anchor] = target.split('#');
        const to = path === '' ? file : resolve(dirname(file), decodeURI(path));
        const at = `${relative(REPO, file)}:${line}: ${target}`;
        if (!existsSync(to)) {
          broken.push(`${at}: no such file`);
          continue;
        }
        if (!anchor) continue;
        if (to.endsWith('.md')) {
          const { github, typedoc } = anchors(to);
          if (!github.has(anchor) || !typedoc.has(anchor)) broken.push(`${at}: no heading with that anchor (GitHub: ${github.has(anchor)}, typedoc: ${typedoc.has(anchor)})`);
        } else if (to.endsWith('.ts')) {
          if (!exportsOf(to).has(anchor)) broken.push(`${at}: ${relative(REPO, to)} exports no ${anchor}`);
        } else {
          broken.push(`${at}: an anchor into a file that is neither markdown nor a source file`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('guides link to the API (sources under src/), and recipe classes link back to their guides', () => {
    const recipes: [guide: string, source: string, classes: string[]][] = [
      ['mutex', 'mutex/mutex.ts', ['Mutex']],
      ['semaphore', 'semaphore/semaphore.ts', ['Semaphore']],
      ['rwlock', 'rwlock/rwlock.ts', ['ReadWriteLock', 'ReadLock', 'WriteLock']],
      ['leader', 'leader/latch.ts', ['LeaderLatch']],
      ['leader', 'leader/selector.ts', ['LeaderSelector']],
      ['queue', 'queue/queue.ts', ['DistributedQueue']],
    ];
    for (const [guide, source, classes] of recipes) {
      const md = readFileSync(join(REPO, 'docs', 'recipes', `${guide}.md`), 'utf8');
      assert.ok(md.includes(`(../../src/${source}`), `docs/recipes/${guide}.md links to src/${source}`);
      const src = readFileSync(join(REPO, 'src', source), 'utf8');
      for (const name of classes) {
        const doc = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*export (?:abstract )?class ${name}\\b`).exec(src)?.[1] ?? '';
        assert.match(doc, new RegExp(`\\]\\(\\.\\./\\.\\./docs/recipes/${guide}\\.md(#[\\w-]+)?\\)`), `${name}'s TSDoc links to docs/recipes/${guide}.md`);
        assert.match(doc, /@group Recipes/, `${name} is in the Recipes group`);
        assert.match(doc, /@example/, `${name} has an @example`);
        assert.match(doc, /Events/, `${name}'s TSDoc says what it emits`);
      }
    }
  });
});

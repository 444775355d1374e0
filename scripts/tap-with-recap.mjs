// node:test reporter: the TAP reporter, plus a recap of every failed test (file, name, the first
// lines of its error) printed as TAP comments just before the run's summary. A CI log that keeps
// only its tail then still says what failed; the summary stays the last thing printed.
import { tap } from 'node:test/reporters';

const errorLines = 6;

function describe(error) {
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? (cause.stack ?? String(cause)) : String(cause);
  return text.split('\n').slice(0, errorLines);
}

async function* withRecap(source) {
  const failed = [];
  let recapped = false;
  for await (const event of source) {
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      const { name, file, details } = event.data;
      failed.push({ name, file, lines: describe(details?.error) });
    }
    if (!recapped && event.type === 'test:diagnostic' && event.data.nesting === 0 && /^tests \d+/.test(event.data.message)) {
      recapped = true;
      if (failed.length > 0) {
        const recap = [`failed tests (${failed.length}):`];
        for (const f of failed) recap.push(`- ${f.file ?? '?'}: ${f.name}`, ...f.lines.map((l) => `    ${l}`));
        for (const message of recap) yield { type: 'test:diagnostic', data: { nesting: 0, message } };
      }
    }
    yield event;
  }
}

export default async function* tapWithRecap(source) {
  yield* tap(withRecap(source));
}

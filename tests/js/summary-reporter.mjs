/**
 * A node:test reporter for `make test-js`: each failure in full, then one summary line.
 *
 * The default TAP/spec output is over 2 000 lines when everything passes, which buries
 * the one line a person wants (how many passed, what failed).
 */
import { inspect } from 'node:util';

/** Yields the failures as they happen and the totals at the end. */
export default async function* summaryReporter(source) {
  const totals = {};
  for await (const event of source) {
    if (event.type === 'test:fail') {
      const { name, file, line, details } = event.data;
      const where = file ? ` (${file}${line ? `:${line}` : ''})` : '';
      const error = details?.error?.cause ?? details?.error;
      yield `✖ ${name}${where}\n${indent(inspect(error, { depth: 4 }))}\n\n`;
    } else if (event.type === 'test:stderr') {
      yield event.data.message;
    } else if (event.type === 'test:diagnostic' && event.data.nesting === 0) {
      // The runner's own totals ("tests 2199", "pass 2199", "duration_ms 9123.4"...).
      const [key, value] = event.data.message.split(' ');
      if (value !== undefined && !Number.isNaN(Number(value))) totals[key] = Number(value);
    }
  }
  const parts = [`${totals.pass ?? 0} passed`, `${totals.fail ?? 0} failed`];
  for (const key of ['skipped', 'todo', 'cancelled']) if (totals[key]) parts.push(`${totals[key]} ${key}`);
  const seconds = ((totals.duration_ms ?? 0) / 1000).toFixed(1);
  yield `node --test: ${totals.tests ?? 0} tests, ${parts.join(', ')} in ${seconds} s\n`;
}

function indent(text) {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

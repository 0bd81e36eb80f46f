// Adds up vitest's JSON reports (unit and e2e) into one closing line: "N passed, N failed".
import fs from 'node:fs';

let passed = 0, failed = 0, skipped = 0;
const files = process.argv.slice(2);
for (const f of files) {
  if (!fs.existsSync(f)) {
    console.error(`test-summary: ${f} missing (that test run did not finish)`);
    failed++;
    continue;
  }
  const r = JSON.parse(fs.readFileSync(f, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
}
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);

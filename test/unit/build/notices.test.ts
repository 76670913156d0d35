// The shipped bundles carry no license comments: dist/THIRD_PARTY_NOTICES.txt (written by the
// build, packaged in the .vsix) names each bundled package with its version and license text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../docs/readmeBlocks';

describe("the bundles' third-party notices", () => {
  it('name every package the extension, the CLI and the Task Graph page bundle, each with its own license text', () => {
    const notices = readFileSync(join(ROOT, 'dist/THIRD_PARTY_NOTICES.txt'), 'utf8');
    for (const name of ['zod', '@dagrejs/dagre', '@dagrejs/graphlib']) {
      const { version, license } = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
        license: string;
      };
      assert.ok(notices.includes(`${name} ${version} (${license})`), `${name} ${version} is not named`);
    }
    const zodLicense = readFileSync(join(ROOT, 'node_modules/zod/LICENSE'), 'utf8').trim();
    assert.ok(notices.includes(zodLicense), "zod's license text is not in the notices");
  });
});

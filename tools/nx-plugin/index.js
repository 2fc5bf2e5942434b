// @ts-check
/**
 * The workspace's Nx plugin (registered in nx.json "plugins"): every app and library gets its
 * standard targets from the files it has, so a project.json holds its name, tags and project type
 * and nothing that another project.json repeats (ADR 0033). Plain CommonJS on purpose: Nx 23 loads
 * a local plugin with `require`, and TypeScript only through a transpiler this workspace does not
 * install (@swc-node/register or ts-node); `tsc --checkJs` typechecks it (nx run nx-plugin:typecheck).
 *
 * Inferred, per project root R with a project.json (what `.ci/run`, tools/test-all.sh, tools/stack,
 * the Dockerfile and deploy/containers.sh call):
 *
 *   build      R/tsconfig.app.json: rm -rf dist/R; tsc and tsc-alias with --outDir dist/R (an app)
 *              R/tsconfig.lib.json: tsc and tsc-alias of it (a library; its outDir is its own)
 *   serve      R/tsconfig.app.json: node dist/R/R/src/main.js serve (continuous, after build)
 *   migrate    R/tsconfig.app.json and R/src/database/migrations/: node dist/R/R/src/main.js migrate
 *   typecheck  tsc --noEmit of R/tsconfig.spec.json, or of R/tsconfig.json when there is no spec config
 *   lint       R/src: @nx/eslint:lint of R/src
 *   test       R/jest.config.js: @nx/jest:jest
 *   test-int   R/jest.int.config.js: @nx/jest:jest, in band
 *   test-validator  R/jest.validator.config.js: @nx/jest:jest, in band (a JVM validator's tier)
 *
 * A target that the project.json declares is the project's own: it is not inferred at all (no merge),
 * so a project that builds differently (auth-service's assets, settings-web's page, the SDK bundle)
 * states its whole target and nothing else. Caching and inputs come from nx.json's targetDefaults.
 */
const { existsSync, readFileSync, statSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { createNodesFromFiles } = require('@nx/devkit');

/** @typedef {import('@nx/devkit').TargetConfiguration} TargetConfiguration */

/**
 * The targets the files of a project imply, without those its project.json declares.
 * @param {string} root project root, relative to the workspace (`apps/invoice-service`)
 * @param {string} workspaceRoot absolute
 * @returns {{ sourceRoot?: string; targets: Record<string, TargetConfiguration> }}
 */
function inferTargets(root, workspaceRoot) {
  const has = (/** @type {string} */ file) => existsSync(join(workspaceRoot, root, file));
  const isDir = (/** @type {string} */ dir) => has(dir) && statSync(join(workspaceRoot, root, dir)).isDirectory();
  const declared = /** @type {{ targets?: Record<string, unknown>; sourceRoot?: string }} */ (
    JSON.parse(readFileSync(join(workspaceRoot, root, 'project.json'), 'utf8'))
  );
  const own = new Set(Object.keys(declared.targets ?? {}));
  /** @type {Record<string, TargetConfiguration>} */
  const targets = {};
  const add = (/** @type {string} */ name, /** @type {TargetConfiguration} */ target) => {
    if (!own.has(name)) targets[name] = target;
  };
  const dist = `dist/${root}`;
  const main = `${dist}/${root}/src/main.js`;

  if (has('tsconfig.app.json')) {
    const config = `${root}/tsconfig.app.json`;
    add('build', {
      executor: 'nx:run-commands',
      outputs: [`{workspaceRoot}/${dist}`],
      options: {
        commands: [`rm -rf ${dist}`, `tsc -p ${config} --outDir ${dist}`, `tsc-alias -p ${config} --outDir ${dist}`],
        parallel: false,
      },
    });
    add('serve', { executor: 'nx:run-commands', dependsOn: ['build'], continuous: true, options: { command: `node ${main} serve` } });
    if (isDir('src/database/migrations')) {
      add('migrate', { executor: 'nx:run-commands', dependsOn: ['build'], options: { command: `node ${main} migrate` } });
    }
  } else if (has('tsconfig.lib.json')) {
    const config = `${root}/tsconfig.lib.json`;
    add('build', {
      executor: 'nx:run-commands',
      outputs: [`{workspaceRoot}/${dist}`],
      options: { commands: [`tsc -p ${config}`, `tsc-alias -p ${config}`], parallel: false },
    });
  }

  const typecheckConfig = has('tsconfig.spec.json') ? 'tsconfig.spec.json' : has('tsconfig.json') ? 'tsconfig.json' : null;
  if (typecheckConfig) add('typecheck', { executor: 'nx:run-commands', options: { command: `tsc -p ${root}/${typecheckConfig} --noEmit` } });

  if (isDir('src')) add('lint', { executor: '@nx/eslint:lint', options: { lintFilePatterns: [`${root}/src`] } });

  if (has('jest.config.js')) {
    add('test', { executor: '@nx/jest:jest', outputs: [`{workspaceRoot}/coverage/${root}`], options: { jestConfig: `${root}/jest.config.js` } });
  }
  if (has('jest.int.config.js')) {
    add('test-int', { executor: '@nx/jest:jest', options: { jestConfig: `${root}/jest.int.config.js`, runInBand: true } });
  }
  if (has('jest.validator.config.js')) {
    add('test-validator', { executor: '@nx/jest:jest', options: { jestConfig: `${root}/jest.validator.config.js`, runInBand: true } });
  }

  return { ...(declared.sourceRoot || !isDir('src') ? {} : { sourceRoot: `${root}/src` }), targets };
}

/** @type {import('@nx/devkit').CreateNodes} */
const createNodes = [
  '{apps,libs}/*/project.json',
  (projectFiles, options, context) =>
    createNodesFromFiles(
      (projectFile, _options, ctx) => {
        const root = dirname(projectFile);
        return { projects: { [root]: inferTargets(root, ctx.workspaceRoot) } };
      },
      projectFiles,
      options,
      context,
    ),
];

module.exports = { createNodes, inferTargets };

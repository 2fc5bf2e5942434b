/** This package's version, sent in the User-Agent. Kept equal to package.json by version.spec.ts. */
export const VERSION = '1.0.0';

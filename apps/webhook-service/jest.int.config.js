module.exports = require('../../tools/jest/project').int(__dirname);

module.exports = require('../../tools/jest/project').validator(__dirname);

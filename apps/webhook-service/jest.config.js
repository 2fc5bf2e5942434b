module.exports = require('../../tools/jest/project').unit(__dirname);

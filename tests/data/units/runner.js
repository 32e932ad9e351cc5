'use strict';
// An ES5 "class" in CommonJS: a constructor function, methods assigned to its prototype,
// a static, exported functions, and a second class inside an IIFE.
var EventEmitter = require('events').EventEmitter;

/**
 * Runs the tests of a suite.
 */
function Runner(suite, options) {
  this.suite = suite;
  this.options = options || {};
  this.onError = function (err) {
    this.failures.push(err);
  };
}

/** Runs every test, then calls `fn` with the number of failures. */
Runner.prototype.run = function run(fn) {
  var self = this;
  self.failures = [];
  process.onexit = function () {
    self.abort();
  };
  fn(self.failures.length);
  return this;
};

Runner.prototype.abort = () => {
  process.exitCode = 1;
};

Runner.create = (suite) => new Runner(suite, {});

exports.lookupFiles = function lookupFiles(dir, extensions) {
  return extensions.map(function (ext) {
    return dir + '/*.' + ext;
  });
};

module.exports.escape = (text) => text.replace(/[<>&]/g, '');

(function () {
  function Suite(title) {
    this.title = title;
    this.tests = [];
  }

  Suite.prototype.addTest = function (test) {
    this.tests.push(test);
    return this;
  };

  exports.Suite = Suite;
})();

module.exports.Runner = Runner;
module.exports.EventEmitter = EventEmitter;

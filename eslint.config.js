// eslint.config.js — lint rules for the project's JavaScript: the flame graph page's scripts
// (browser; flamegraph/page/), the SVG's script (flamegraph/svg_script.js) and the page's unit
// tests (node; tests/flamegraph/*.js), and bench/wholejvm.py's Rhino script (bench/js/: Rhino's
// shell, ES5 with its `print`, `arguments` and Java `Packages`). scripts/format.sh --check runs eslint with this file;
// formatting is prettier's (.prettierrc.json), so no style rules here.
"use strict";
const js = require("@eslint/js");

const browser = {
  window: "readonly",
  document: "readonly",
  history: "readonly",
  location: "readonly",
  matchMedia: "readonly",
  getComputedStyle: "readonly",
  addEventListener: "readonly",
  innerWidth: "readonly",
  URLSearchParams: "readonly",
  setTimeout: "readonly",
  clearTimeout: "readonly",
  atob: "readonly",
  ResizeObserver: "readonly",
};

module.exports = [
  js.configs.recommended,
  {
    files: ["flamegraph/page/*.js", "flamegraph/svg_script.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...browser, module: "readonly" },
    },
  },
  {
    files: ["tests/flamegraph/*.js", "eslint.config.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "commonjs",
      globals: {
        require: "readonly",
        module: "writable",
        __dirname: "readonly",
        Buffer: "readonly",
      },
    },
  },
  {
    files: ["bench/js/*.js"],
    languageOptions: {
      ecmaVersion: 5,
      sourceType: "script",
      globals: { print: "readonly", arguments: "readonly", Packages: "readonly" },
    },
  },
];

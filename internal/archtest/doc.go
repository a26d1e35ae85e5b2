// Package archtest holds the tests that guard the project's architecture:
// which package may import which (arrows point down, as
// docs/ARCHITECTURE.md says), that the binary links no test-only module,
// that the README and package tools list every tool package, and that no
// file refers to documents outside the repository. It has no code of its
// own.
package archtest

// Package archtest holds the test that guards the project's architecture:
// which package may import which (arrows point down, as
// shared/design/ARCHITECTURE.md section 5 and docs/ARCHITECTURE.md say).
// It has no code of its own.
package archtest

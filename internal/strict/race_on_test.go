//go:build race

package strict

const raceEnabled = true

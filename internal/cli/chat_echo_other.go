//go:build !linux

package cli

// setEcho leaves the echo on: what is typed while the model works shows
// where it is typed.
func setEcho(int, bool) {}

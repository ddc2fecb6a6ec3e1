package cli

import "golang.org/x/sys/unix"

// setEcho turns a terminal's echo on or off, leaving the rest of its mode
// (the console's terminal while the model works: lines, and Ctrl-C as
// SIGINT, as usual).
func setEcho(fd int, on bool) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return
	}
	if on {
		t.Lflag |= unix.ECHO
	} else {
		t.Lflag &^= unix.ECHO
	}
	unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

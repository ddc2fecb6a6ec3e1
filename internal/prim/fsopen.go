package prim

import (
	"fmt"
	"os"
)

// The file tools open by name what the guard judged by name, and a command
// left running (shell-start) can swap a name on the way between the two: a
// directory exchanged with a link to ~/.kube (renameat2 RENAME_EXCHANGE)
// turns the a/config the guard judged into ~/.kube/config when the tool
// opens it. So what a file tool opens, reads, writes and walks, it does
// under the session's kernel floor (Options.Floor, sandbox.Floor.Do), on a
// thread the kernel restricts: a denied file is refused however its name
// was reached. What must reach nodwyn's own data directory (Options.Backup,
// the version store) runs outside it.
//
// Each file fs-read, fs-write, fs-edit and index-grep opens is also judged
// again where it really is (its /proc/thread-self/fd entry) against
// Options.Deny before anything is read from it or written to it, and a new
// file is made in its directory opened and judged the same way, with
// O_EXCL|O_NOFOLLOW (createNew). With the floor off this is what stands
// against the swap; what it leaves: a write to a name that is a dangling
// link, or appears during the call, can still make an empty file through a
// swapped name before it is refused, and fs-find and the walks of
// index-grep can list names in a swapped-in directory.
//
// The floor lets no file be made directly in a directory that holds a
// denied one (the home directory, when it is the folder): fs-write makes
// such a file outside the floor, by createNew only.

// floored runs fn under the kernel floor (none: as it is). When the floor
// cannot be applied fn does not run and the tool fails.
func (t *Tools) floored(tool string, fn func() Result) Result {
	var r Result
	if err := t.opts.Floor.Do(func() error { r = fn(); return nil }); err != nil {
		return failf("%s: nothing was opened: the kernel floor could not be applied: %v", tool, err)
	}
	return r
}

// flooredErr is floored for a tool whose work can also end in an error (a
// cancelled context).
func (t *Tools) flooredErr(tool string, fn func() (Result, error)) (Result, error) {
	var ferr error
	r := t.floored(tool, func() Result {
		r, err := fn()
		ferr = err
		return r
	})
	return r, ferr
}

// deniedOpen says, for a file a tool opened by name, where it really is
// when Options.Deny denies that ("" when not, or when /proc cannot say).
func (t *Tools) deniedOpen(f *os.File) string {
	if t.opts.Deny == nil {
		return ""
	}
	deny := t.opts.DenyResolved
	if deny == nil {
		deny = t.opts.Deny
	}
	real, err := fdPath(f)
	if err != nil || !deny(real) {
		return ""
	}
	return real
}

// fdPath is where an open file really is, as its /proc/thread-self/fd
// entry says (the names on the way as they are now, links resolved).
func fdPath(f *os.File) (string, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var real string
	if cerr := sc.Control(func(fd uintptr) {
		real, err = os.Readlink(fmt.Sprintf("/proc/thread-self/fd/%d", fd))
	}); cerr != nil {
		return "", cerr
	}
	return real, err
}

// deniedResult is the failure for a file that turned out to be denied.
func (t *Tools) deniedResult(tool, abs, real string) Result {
	return failf("%s: %s is %s, a denied path, where it really is (a name on the way changed after the path was judged); nothing was read or written", tool, t.rel(abs), real)
}

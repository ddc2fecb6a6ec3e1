package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel floor (issue 10): every process a primitive starts runs under
// a Landlock ruleset that denies the guard's credential denylist — nodwyn's
// configuration and data directories, $CREDENTIALS_DIRECTORY, ~/.ssh,
// ~/.aws, … — while leaving the rest of the file system as it is. The guard
// reads command lines; the floor holds for what a program opens however it
// builds the name.
//
// Landlock only grants, and a grant on a directory holds for everything
// beneath it, so a subtree is denied by granting everything around it: the
// ancestors of each denied path are walked from "/", each entry of an
// ancestor that is neither denied nor an ancestor itself gets every right
// (a directory) or the file rights (a file), and the denied subtrees get
// nothing. The ruleset is built again for a command when what it was built
// from has changed since the last (an entry made, removed or renamed in an
// ancestor, a denied path appeared or replaced), so what was created since
// is covered; otherwise the last one is used again.
//
// An ancestor itself gets only what is harmless when its denied subtrees
// inherit it: list it, and make a directory in it. Anything more would be
// inherited by the denied directories too: making or writing a file there
// would let a command plant ~/.ssh/config (a ProxyCommand), ~/.aws/config
// (a credential_process) or nodwyn's own config.toml (a base_url that sends
// the key away); removing a file would let it replace one; a link would let
// it point one at a file of its own. So a file cannot be made or removed
// directly in an ancestor (a new ~/solution.sh, git config --global's lock
// file, rm ~/x); a directory can be made there (mkdir ~/.cache) and is
// granted in full from the next command on. Run says so when a command under
// the floor fails. A denied file cannot be read, run, written, truncated,
// replaced or linked or moved out of its directory, and a denied directory
// cannot be moved away.
//
// Go applies a Landlock ruleset to the calling thread only, unless asked
// for all of them: the floor restricts a fresh OS thread that its goroutine
// keeps locked, starts the command from it (fork copies the thread's
// credentials, and with them the Landlock domain), and lets the thread end
// with the goroutine, so nodwyn itself is never restricted and no other
// goroutine runs on that thread. The runtime makes new threads from a
// template thread, never from a locked one.

// Landlock's file-system rights by the ABI that introduced them.
const (
	llRightsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	llRefer    = unix.LANDLOCK_ACCESS_FS_REFER     // ABI 2
	llTruncate = unix.LANDLOCK_ACCESS_FS_TRUNCATE  // ABI 3
	llIoctlDev = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV // ABI 5

	// The rights that apply to a file (a rule on a file may grant only these).
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | llTruncate | llIoctlDev
	// What an ancestor of a denied path gets: see the comment above.
	llAncestorRights = unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR
	// What an ancestor gets with AllowAncestorWrites (sandbox mode): the
	// rights that write, which the denied subtrees inherit too, and none
	// that read, run, link or move between directories (refer), or remove
	// a directory. So a file can be made, written, replaced and removed
	// in the home or a /tmp above it; a denied file stays unreadable and
	// cannot be moved or linked out of its directory, nor a denied
	// directory moved away; what is new in an ancestor is read or run
	// from the next command on, when a build grants it as an entry.
	// What a path gets under write confinement (ConfineWrites) when it is
	// not writable: read, list, run, and a device's ioctls (a terminal's).
	llReadRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | llIoctlDev
	llAncestorWriteRights = llAncestorRights | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE | llTruncate | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
)

// handledRights are the rights a ruleset handles (denies unless granted) on
// a kernel of Landlock ABI abi.
func handledRights(abi int) uint64 {
	r := uint64(llRightsV1)
	if abi >= 2 {
		r |= llRefer
	}
	if abi >= 3 {
		r |= llTruncate
	}
	if abi >= 5 {
		r |= llIoctlDev
	}
	return r
}

// LandlockABI is the Landlock ABI version the kernel offers, or why there is
// none (an old kernel, Landlock not enabled at boot, a seccomp profile or a
// runtime such as gVisor that refuses the system call).
func LandlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch e {
	case 0:
		return int(v), nil
	case unix.ENOSYS:
		return 0, errors.New("this kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)")
	case unix.EOPNOTSUPP:
		return 0, errors.New("this kernel has Landlock built in but not enabled (add landlock to the lsm= boot parameter)")
	case unix.EPERM:
		return 0, errors.New("the Landlock system calls are refused here (a seccomp profile or a container runtime that blocks them)")
	}
	return 0, fmt.Errorf("the Landlock probe failed: %v", e)
}

// Floor is the kernel floor for one session: the paths it denies and the
// ones under them that stay usable. Its zero value is not usable; see
// NewFloor.
type Floor struct {
	deny   []string // physical, cleaned, existing or not; none inside another
	except []string // physical
	abi    int
	nnp    bool // set no_new_privs before restricting (no CAP_SYS_ADMIN)
	// environ is whether a command under Landlock could open another
	// process's /proc/<pid>/environ (the trial's probe of its parent):
	// Landlock's ptrace scoping refuses /proc/<pid>/cwd and ptrace
	// itself, but Linux 6.18 let the environ through.
	environ bool

	ancestorWrites bool // AllowAncestorWrites

	// writable, when confine is set (ConfineWrites), are the only paths
	// a command may write (physical): everything else is granted only
	// the rights that read, list and run.
	writable []string
	confine  bool
	widen    string       // how the person widens writable, for the note
	connect  connectRules // where commands may connect over TCP (floor_net.go)

	ns *SessionNS // the session's namespaces commands start in (SetNamespaces)
	// grantAll: every path granted (GrantAll); the denied ones are hidden
	// by the sandbox-mode mount namespace instead.
	grantAll bool
	all      *ruleset // the ruleset that grants everything, made once

	mu     sync.Mutex
	last   *ruleset // the last build, reused while fresh
	builds int      // how many builds (tests)
	// gone are the denied paths' files as the floor has seen them, by
	// device and inode: an entry of an ancestor that is one of them (a
	// denied directory renamed within its parent, a hard link) is not
	// granted, whatever its name now.
	gone map[fileID]string
	w    *floorWorker // Do's thread (floor_worker.go)
}

type fileID struct{ dev, ino uint64 }

// NewFloor returns the floor that denies deny (absolute paths; they need
// not exist) except except (the scratch directory), or an error that says
// why the kernel cannot hold it here. It tries a ruleset on a thread of its
// own, so an error here is the one a command would meet.
func NewFloor(deny, except []string) (*Floor, error) {
	abi, err := LandlockABI()
	if err != nil {
		return nil, err
	}
	if abi < 2 {
		return nil, fmt.Errorf("this kernel's Landlock ABI %d (Linux before 5.19) refuses every rename and link between directories under a ruleset, which would break git and package managers; the floor needs ABI 2", abi)
	}
	f := &Floor{abi: abi, gone: map[fileID]string{}}
	f.nnp = !hasCapSysAdmin()
	for _, d := range deny {
		if d = physicalPath(d); d != "" && d != "/" && !slices.Contains(f.deny, d) {
			f.deny = append(f.deny, d)
		}
	}
	// A path inside another denied one adds nothing.
	sort.Strings(f.deny)
	var kept []string
	for _, d := range f.deny {
		if !slices.ContainsFunc(kept, func(k string) bool { return within(d, k) }) {
			kept = append(kept, d)
		}
	}
	f.deny = kept
	for _, e := range except {
		if e = physicalPath(e); e != "" {
			f.except = append(f.except, e)
		}
	}
	// The trial: a ruleset that denies nothing, applied on a throw-away
	// thread (the error a command would meet), with a look at whether
	// another process's environment stays open under it. The real ruleset
	// is built for the first command: its cost grows with the entries of
	// the ancestors (a /tmp of 6,000 above the home), and a run's start
	// waits for nothing of it.
	if err := f.trial(); err != nil {
		return nil, err
	}
	return f, nil
}

// trial restricts a throw-away thread by a ruleset that grants everything
// it handles, and there tries to open its parent's /proc/<pid>/environ.
func (f *Floor) trial() error {
	rs, err := f.buildNothingDenied()
	if err != nil {
		return err
	}
	defer rs.close()
	probe := func() error {
		if fd, err := unix.Open(fmt.Sprintf("/proc/%d/environ", unix.Getppid()), unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
			f.environ = true
		}
		return nil
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f.onLockedThread(rs, nil, probe, errc)
	}()
	return <-errc
}

// buildNothingDenied is a ruleset that handles the floor's rights and
// grants them all.
func (f *Floor) buildNothingDenied() (*ruleset, error) {
	handled := handledRights(f.abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), 16, 0)
	if e != 0 {
		return nil, fmt.Errorf("making a Landlock ruleset: %v", e)
	}
	rs := &ruleset{fd: int(fd)}
	if err := rs.add("/", handled, handled); err != nil {
		rs.close()
		return nil, fmt.Errorf("a Landlock rule for /: %w", err)
	}
	return rs, nil
}

// OthersEnvironReadable reports whether a command under the floor can still
// read another process's environment through /proc (the kernel's Landlock
// does not refuse /proc/<pid>/environ of an unrestricted process).
func (f *Floor) OthersEnvironReadable() bool { return f.environ }

// AllowAncestorWrites lets commands write in the directories above a
// denied path (sandbox mode, where the machine is the task's): see
// llAncestorWriteRights. The next command builds its ruleset anew.
func (f *Floor) AllowAncestorWrites() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ancestorWrites = true
	f.last.close()
	f.last = nil
}

// ConfineWrites lets commands write only in writable (absolute paths,
// directories or files; what does not exist yet is skipped when a ruleset
// is built) and in the exception (the scratch directory): every other path
// may be read, listed and run, not written, made, removed or renamed.
// Denied paths stay denied inside a writable one. A writable directory that
// holds a denied path is granted as an ancestor is: its other entries in
// full, itself only what an ancestor gets. widen is how the person widens
// the set, for the note a refused command gets. The next command builds
// its ruleset anew.
func (f *Floor) ConfineWrites(writable []string, widen string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confine, f.widen, f.writable = true, widen, nil
	for _, w := range writable {
		if w = physicalPath(w); w != "" && !slices.Contains(f.writable, w) {
			f.writable = append(f.writable, w)
		}
	}
	sort.Strings(f.writable)
	f.last.close()
	f.last = nil
}

// GrantAll makes the floor grant every path, keeping only what any
// Landlock domain keeps (no mount or umount, ptrace and /proc/PID/root,
// cwd and ns scoped to it): for sandbox mode, where the catalogue is
// hidden by the session's mount namespace (NewSandboxNS) and the machine
// is the task's. The file tools' own opens (Do) are not in that namespace:
// the guard's denylist judges them. The next command builds anew.
func (f *Floor) GrantAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grantAll = true
}

// commandRuleset is the ruleset a command starts under: the one that
// grants everything with GrantAll, else the current build. The caller
// closes what it gets.
func (f *Floor) commandRuleset() (*ruleset, error) {
	f.mu.Lock()
	if !f.grantAll {
		f.mu.Unlock()
		return f.current()
	}
	defer f.mu.Unlock()
	if f.all == nil {
		rs, err := f.buildNothingDenied()
		if err != nil {
			return nil, err
		}
		f.all = rs
	}
	fd, err := unix.FcntlInt(uintptr(f.all.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the Landlock ruleset: %v", err)
	}
	return &ruleset{fd: fd}, nil
}

// SetNamespaces makes every command the floor starts from now on start in
// the session's namespaces (nil: nodwyn's own). The file tools' own opens
// (Do) stay in nodwyn's.
func (f *Floor) SetNamespaces(ns *SessionNS) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ns = ns
}

func (f *Floor) namespaces() *SessionNS {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ns
}

// Writable are the paths commands may write (physical), and whether writes
// are confined at all.
func (f *Floor) Writable() ([]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.writable), f.confine
}

// inWritable reports whether p is a writable path or inside one. f.mu is
// held.
func (f *Floor) inWritable(p string) bool {
	for _, w := range f.writable {
		if within(p, w) {
			return true
		}
	}
	return false
}

// Close lets go of the floor's ruleset and its kept thread (a daemon runs
// many sessions, each with a floor). A nil floor, or a closed one, is left
// as it is; a command started later builds a ruleset anew.
func (f *Floor) Close() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w != nil {
		f.w.retire()
		f.w = nil
	}
	f.last.close()
	f.last = nil
	f.all.close()
	f.all = nil
}

// ABI is the Landlock ABI the floor uses.
func (f *Floor) ABI() int { return f.abi }

// Denied are the paths the floor denies (physical).
func (f *Floor) Denied() []string { return slices.Clone(f.deny) }

// String is the floor for a person: "on (Landlock ABI 7, 9 paths denied)".
func (f *Floor) String() string {
	return fmt.Sprintf("on (Landlock ABI %d, %d paths denied)", f.abi, len(f.deny))
}

// physicalPath is p cleaned with its links resolved as far as they exist
// ("" for a relative path): /home/u/.ssh as a link to /keys is /keys.
func physicalPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	// Resolve the longest part that exists.
	dir, rest := filepath.Dir(p), filepath.Base(p)
	for dir != "/" {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
	return p
}

// within reports whether p is dir or inside it (both clean).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func hasCapSysAdmin() bool {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const bit = unix.CAP_SYS_ADMIN
	return data[bit/32].Effective&(1<<(bit%32)) != 0
}

// ruleset is one command's Landlock ruleset, and what the walk saw in each
// ancestor directory (for the note on what the command created there).
type ruleset struct {
	fd     int
	listed map[string]map[string]bool // ancestor → its entries' names at build

	// What the build saw, so the next command can tell whether a new build
	// would differ (fresh): each denied path's file (zero: none there) and
	// each ancestor's stamp, and when the build began.
	deniedIDs []fileID
	stamps    map[string]stamp
	began     time.Time
	// For each denied path that was not there, the nearest of its
	// directories that was ("" for one that was there): fresh.
	absentIn []string
}

// stamp is what says a directory's entries are as they were: making,
// removing or renaming an entry changes its mtime and ctime.
type stamp struct {
	id           fileID
	mtime, ctime unix.Timespec
}

// stampWindow is how long before a build a change to a directory must be
// for its stamp to be trusted to show the next one. Linux takes a
// directory's times from a clock that moves a tick at a time (1–10 ms; finer
// since 6.13 on file systems with multigrain times), or from whole seconds
// on file systems that keep no more (FAT: two seconds), which give every
// time a zero fraction. A second's window, as this was, made every command
// of a run in the first second or two after a change build its ruleset anew
// (a harness's fresh HOME; a /tmp above it, which other programs change
// all the time), 0.3–0.8 ms each (BenchmarkFloorBuild).
func stampWindow(st stamp) time.Duration {
	if st.mtime.Nsec == 0 && st.ctime.Nsec == 0 {
		return 2*time.Second + 100*time.Millisecond
	}
	return 20 * time.Millisecond
}

func stampOf(path string) (stamp, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return stamp{}, false
	}
	return stamp{fileID{uint64(st.Dev), st.Ino}, st.Mtim, st.Ctim}, true
}

func (r *ruleset) close() {
	if r != nil && r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// build makes the ruleset for one command from the file system as it is
// now. f.mu is held.
func (f *Floor) build() (*ruleset, error) {
	began := time.Now()
	handled := handledRights(f.abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled, Handled_access_net: f.handledNet()}
	// The size of the fields up to Handled_access_net (ABI 1's struct was
	// 8 bytes; newer kernels accept a longer one whose tail is zero).
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), 16, 0)
	if e != 0 {
		return nil, fmt.Errorf("making a Landlock ruleset: %v", e)
	}
	rs := &ruleset{fd: int(fd), listed: map[string]map[string]bool{}, stamps: map[string]stamp{}, began: began,
		deniedIDs: make([]fileID, len(f.deny)), absentIn: make([]string, len(f.deny))}
	if err := f.addConnect(rs); err != nil {
		rs.close()
		return nil, err
	}

	denied := map[string]bool{}
	ancestors := map[string]bool{}
	for i, d := range f.deny {
		var st unix.Stat_t
		if unix.Lstat(d, &st) != nil {
			// Nothing there to deny now; where the path stops, for fresh.
			for a := filepath.Dir(d); ; a = filepath.Dir(a) {
				if unix.Stat(a, &st) == nil || a == "/" {
					rs.absentIn[i] = a
					break
				}
			}
			continue
		}
		rs.deniedIDs[i] = fileID{uint64(st.Dev), st.Ino}
		f.gone[rs.deniedIDs[i]] = d
		// Where it really is, now: a link on the way, or the path itself
		// a link (a command may make one where a denied path is to come,
		// in a directory granted whole), leads elsewhere, and what is
		// written through it lands there.
		for _, p := range []string{d, physicalPath(d)} {
			if p == "" || p == "/" || denied[p] {
				continue
			}
			if p != d {
				if unix.Lstat(p, &st) != nil {
					continue
				}
				f.gone[fileID{uint64(st.Dev), st.Ino}] = p
			}
			denied[p] = true
			for a := filepath.Dir(p); ; a = filepath.Dir(a) {
				ancestors[a] = true
				if a == "/" {
					break
				}
			}
		}
	}
	gone := f.gone

	if len(denied) == 0 {
		// Nothing to deny: everything is granted, or, with writes
		// confined, read everywhere and written where allowed.
		all := handled
		if f.confine {
			all = llReadRights & handled
		}
		if err := rs.add("/", all, handled); err != nil {
			rs.close()
			return nil, err
		}
		if f.confine {
			for _, e := range f.except {
				if err := rs.add(e, handled, handled); err != nil && !errors.Is(err, unix.ENOENT) {
					rs.close()
					return nil, err
				}
			}
		}
		if err := f.addWritable(rs, nil, handled); err != nil {
			rs.close()
			return nil, err
		}
		return rs, nil
	}
	names := make([]string, 0, len(ancestors))
	for a := range ancestors {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		// Stamped before it is read: a change made while it is read
		// changes the stamp, and the next command builds again.
		if st, ok := stampOf(a); ok {
			rs.stamps[a] = st
		}
		anc := uint64(llAncestorRights)
		if f.ancestorWrites {
			anc = llAncestorWriteRights
		}
		// Under write confinement an ancestor outside the writable paths
		// is only listed (no directory made there: mkdir in one command,
		// a systemd unit in the next), and its entries only read.
		entry := handled
		if f.confine && !f.inWritable(a) {
			anc, entry = unix.LANDLOCK_ACCESS_FS_READ_DIR, llReadRights&handled
		}
		if err := rs.add(a, anc&handled, handled); err != nil {
			rs.close()
			return nil, err
		}
		dir, err := os.Open(a)
		if err != nil {
			continue // unreadable: its entries get nothing
		}
		ents, _ := dir.ReadDir(-1)
		dfd := int(dir.Fd())
		seen := make(map[string]bool, len(ents))
		for _, ent := range ents {
			seen[ent.Name()] = true
			p := filepath.Join(a, ent.Name())
			if denied[p] || ancestors[p] || ent.Type()&os.ModeSymlink != 0 {
				// A link's own rule grants nothing through it: what it
				// points to is judged where it is.
				continue
			}
			rights := entry
			if rights != handled && f.inWritable(p) {
				rights = handled
			}
			if err := rs.addAt(dfd, ent.Name(), rights, handled, gone); err != nil {
				dir.Close()
				rs.close()
				return nil, fmt.Errorf("a Landlock rule for %s: %w", p, err)
			}
		}
		dir.Close()
		rs.listed[a] = seen
	}
	for _, e := range f.except {
		if err := rs.add(e, handled, handled); err != nil && !errors.Is(err, unix.ENOENT) {
			rs.close()
			return nil, err
		}
	}
	if err := f.addWritable(rs, func(w string) bool {
		// A writable path that holds a denied one was granted as an
		// ancestor above; one inside a denied path stays denied.
		if ancestors[w] {
			return false
		}
		for d := range denied {
			if within(w, d) {
				return false
			}
		}
		return true
	}, handled); err != nil {
		rs.close()
		return nil, err
	}
	return rs, nil
}

// addWritable grants every right on each writable path that ok accepts
// (nil: all) and that exists. f.mu is held.
func (f *Floor) addWritable(rs *ruleset, ok func(string) bool, handled uint64) error {
	if !f.confine {
		return nil
	}
	for _, w := range f.writable {
		if ok != nil && !ok(w) {
			continue
		}
		if err := rs.add(w, handled, handled); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) {
			return fmt.Errorf("a Landlock rule for %s: %w", w, err)
		}
	}
	return nil
}

// add grants rights on path (a directory's; a file gets the file rights).
func (r *ruleset) add(path string, rights, handled uint64) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFileRights
	}
	return r.rule(pfd, rights&handled)
}

// addAt grants rights (of handled) on the entry name of the directory dfd,
// unless it is one of the denied files under another name (gone).
func (r *ruleset) addAt(dfd int, name string, rights, handled uint64, gone map[fileID]string) error {
	pfd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
			return nil // gone since the listing, or not ours to open
		}
		return err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return err
	}
	if _, ok := gone[fileID{uint64(st.Dev), st.Ino}]; ok {
		return nil
	}
	rights &= handled
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return nil
	default:
		rights &= llFileRights
	}
	return r.rule(pfd, rights)
}

func (r *ruleset) rule(pfd int, rights uint64) error {
	if rights == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// restrict applies the ruleset to the calling thread, which must be locked
// to its goroutine and never unlocked.
func (r *ruleset) restrict(nnp bool) error {
	if nnp {
		// Per thread, like the ruleset: nodwyn's other threads keep it unset.
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			return fmt.Errorf("setting no_new_privs for the Landlock ruleset: %v", e)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.fd), 0, 0); e != 0 {
		return fmt.Errorf("restricting the command with Landlock: %v", e)
	}
	return nil
}

// fresh reports whether a build now would make the same ruleset as rs:
// the same denied paths there (the same files), and every ancestor's
// entries as they were (its stamp unchanged). An ancestor changed shortly
// before rs's build is not trusted to be unchanged, nor one that cannot be
// read now: a change that followed the build's read of it within the
// timestamps' granularity leaves the stamp as it was (see stampWindow).
// What a stale ruleset costs is an entry made in an ancestor since (a new
// directory in the home) that it does not grant; a denied path that is
// made, moved or replaced is seen by its file (deniedIDs), whatever the
// stamps say. f.mu is held.
//
// A denied path that was not there at the build is not looked at itself
// when the nearest of its directories that was there is one of the
// stamped ancestors (absentIn), which the first loop found unchanged and
// trusted: making an entry changes a directory's times, so the path is
// still not there. And if the times were forged (utimensat, and a clock
// set back for the ctime, by one who may), what was made there is still
// not granted: an ancestor's rules grant only the entries it had at the
// build. Every other denied path is looked at each time: one that was
// there can be replaced by a mount, which changes no time, and one that
// appears under a directory the ruleset granted whole (a second home with
// no ~/.config/gcloud yet) is granted until a build sees it.
func (f *Floor) fresh(rs *ruleset) bool {
	for a, was := range rs.stamps {
		now, ok := stampOf(a)
		if !ok || now != was {
			return false
		}
		since := rs.began.Add(-stampWindow(was))
		if m := time.Unix(was.mtime.Unix()); !m.Before(since) {
			return false
		}
		if c := time.Unix(was.ctime.Unix()); !c.Before(since) {
			return false
		}
	}
	for i, d := range f.deny {
		if _, ok := rs.stamps[rs.absentIn[i]]; ok && rs.deniedIDs[i] == (fileID{}) {
			continue
		}
		var st unix.Stat_t
		var id fileID
		if unix.Lstat(d, &st) == nil {
			id = fileID{uint64(st.Dev), st.Ino}
		}
		if id != rs.deniedIDs[i] {
			return false
		}
	}
	return true
}

// refresh makes f.last the ruleset a build now would make: the last one
// while it is fresh, else a new build. f.mu is held.
func (f *Floor) refresh() error {
	if f.last != nil && f.fresh(f.last) {
		return nil
	}
	rs, err := f.build()
	if err != nil {
		return err
	}
	f.last.close()
	f.last = rs
	f.builds++
	return nil
}

// current is the ruleset for a command starting now: the last one when a
// build would make the same (fresh), else a new one. The caller closes what
// it gets (its own copy of the descriptor).
func (f *Floor) current() (*ruleset, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refresh(); err != nil {
		return nil, err
	}
	fd, err := unix.FcntlInt(uintptr(f.last.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the Landlock ruleset: %v", err)
	}
	return &ruleset{fd: fd, listed: f.last.listed}, nil
}

// floorStart is one command started under the floor: what the note after it
// needs.
type floorStart struct {
	listed  map[string]map[string]bool
	writes  bool   // the ancestors could be written in (AllowAncestorWrites)
	confine bool   // writes were confined (ConfineWrites)
	widen   string // how the person widens them
	connect string // where it may connect, when confined (connectLine)
}

func (f *Floor) startInfo(listed map[string]map[string]bool) *floorStart {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &floorStart{listed: listed, writes: f.ancestorWrites, confine: f.confine, widen: f.widen, connect: f.connectLine()}
}

// start starts cmd under a ruleset built now, on a thread restricted for
// it alone (nil cmd: only the restriction, as NewFloor's trial). The
// returned value says what the ancestors held before the command (see
// created).
func (f *Floor) start(cmd *exec.Cmd) (*floorStart, error) {
	var start func() error
	var enter func() error
	if cmd != nil {
		start = cmd.Start
		if ns := f.namespaces(); ns != nil {
			if ns.nsenter != "" {
				// Unprivileged: nsenter joins them.
				done, err := ns.wrap(cmd)
				if err != nil {
					return nil, err
				}
				defer done()
			} else {
				enter = ns.enter
			}
		}
	}
	rs, err := f.restrictedIn(enter, start, cmd != nil)
	if err != nil {
		return nil, err
	}
	return f.startInfo(rs.listed), nil
}

// Do runs fn on an OS thread of its own restricted by the floor, and ends
// the thread after: for nodwyn's own opens of a path the model chose (the
// file tools), so the kernel refuses a denied file however the path was
// swapped between the guard's judgement and the open. fn must not start
// goroutines whose system calls need the restriction (they run elsewhere)
// nor need what the floor denies (the data directory: a backup is written
// outside fn).
func (f *Floor) Do(fn func() error) error {
	if f == nil {
		return fn()
	}
	if err, ok := f.doOnWorker(fn); ok {
		return err
	}
	ferr := error(nil)
	_, err := f.restricted(func() error { ferr = fn(); return nil })
	if err != nil {
		return err
	}
	return ferr
}

// restricted runs then (nil: nothing) on a fresh OS thread restricted by the
// current ruleset. The thread is never the process's main thread: a
// restricted main thread cannot end with its goroutine, so it would stay,
// and the process's leader, which /proc and ptrace judge, would be in the
// command's domain (the command could read nodwyn's memory).
func (f *Floor) restricted(then func() error) (*ruleset, error) {
	return f.restrictedIn(nil, then, false)
}

// restrictedIn is restricted with the thread first made to start its
// children in the session's namespaces by enter (nil: nodwyn's), and, for
// a command, under commandRuleset.
func (f *Floor) restrictedIn(enter, then func() error, command bool) (*ruleset, error) {
	get := f.current
	if command {
		get = f.commandRuleset
	}
	rs, err := get()
	if err != nil {
		return nil, err
	}
	defer rs.close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f.onLockedThread(rs, enter, then, errc)
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return rs, nil
}

// onLockedThread restricts the calling thread, which its goroutine has
// locked, and runs then on it; the thread then ends with the goroutine
// (never unlocked). On the main thread it restricts nothing: it keeps the
// main thread locked while another goroutine, which cannot run there, does
// the work, then gives the main thread back as it was.
func (f *Floor) onLockedThread(rs *ruleset, enter, then func() error, errc chan<- error) {
	if unix.Gettid() == unix.Getpid() {
		inner := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			f.onLockedThread(rs, enter, then, inner)
		}()
		errc <- <-inner
		runtime.UnlockOSThread()
		return
	}
	if enter != nil {
		if err := enter(); err != nil {
			errc <- err
			return
		}
	}
	if err := rs.restrict(f.nnp); err != nil || then == nil {
		errc <- err
		return
	}
	errc <- then()
}

// created lists what is in the ancestor directories now that was not when
// the command started: directories the command made there, which it could
// not write into yet.
func (s *floorStart) created() []string {
	if s == nil {
		return nil
	}
	var out []string
	for a, before := range s.listed {
		ents, err := os.ReadDir(a)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !before[e.Name()] {
				out = append(out, filepath.Join(a, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// ancestors are the directories the command's ruleset gave only the
// ancestors' rights, sorted.
func (s *floorStart) ancestors() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.listed))
	for a := range s.listed {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// floorNote is the line Run adds when a command under the floor failed
// where the floor may be why: it was refused something (output names a
// permission error); made, the directories new beside a denied one since
// the command started (which it could not write into yet), say more.
// Directories alone are no sign: other processes make them in the same
// places (/tmp) all the time, and a failure of the command's own would be
// blamed on the floor.
func floorNote(s *floorStart, made []string, output string) string {
	if s == nil || (!strings.Contains(output, "Permission denied") && !strings.Contains(output, "Operation not permitted")) {
		return ""
	}
	anc := s.ancestors()
	if s.confine {
		// Under write confinement a refused write is the likelier cause,
		// wherever it was.
		note := "[kernel floor: outside sandbox mode commands may write only in the folder, the session's scratch directory, the temporary directory and the build caches; a write anywhere else is refused with Permission denied"
		if s.widen != "" {
			note += " (" + s.widen + ")"
		}
		if len(anc) > 0 {
			note += "; reading stays open except nodwyn's credential catalogue (docs/sandbox.md)"
		}
		if s.connect != "" {
			note += "; " + s.connect
		}
		return note + "]"
	}
	if len(anc) == 0 {
		return ""
	}
	note := "[kernel floor: " + strings.Join(anc, ", ") + " hold directories the floor denies, so under it nothing can be made or removed directly in them but directories, and a new directory can be written into from the next command"
	if s.writes {
		note = "[kernel floor: " + strings.Join(anc, ", ") + " hold paths of nodwyn's credential catalogue, so what a command makes directly in them can be written at once but read, opened for reading and writing (a lock file, git config --global) or run only from the next command"
	}
	if len(made) > 0 {
		const max = 5
		shown := made
		if len(shown) > max {
			shown = shown[:max]
		}
		note += "; new since this command started: " + strings.Join(shown, ", ")
		if len(made) > max {
			note += fmt.Sprintf(" and %d more", len(made)-max)
		}
		note += " (run what failed again)"
	}
	return note + "]"
}

// StartFloored starts cmd under f, or plainly when f is nil: for the
// programs nodwyn runs on its own account in a folder the model can write
// (git status), where a configuration the model wrote could run a command.
func StartFloored(f *Floor, cmd *exec.Cmd) error {
	if f == nil {
		return cmd.Start()
	}
	_, err := f.start(cmd)
	return err
}

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The session's namespaces (issues 27 and 28): outside sandbox mode, where
// the kernel lets nodwyn make them, every command of a session starts in a
// PID namespace, a mount namespace with its own /proc, and a network
// namespace of the session's own:
//
//   - A command sees only the session's processes: not nodwyn, not the
//     shell or wrapper that started it, nor any other program of the
//     person's, so no /proc/PID/environ of theirs (where a key given in
//     the environment stays for as long as that process runs) and no
//     /proc/PID/cmdline. Landlock's ptrace scoping refuses ptrace and
//     /proc/PID/cwd across its domain but let /proc/PID/environ through on
//     Linux 6.18.
//   - What the session started ends with it: the namespace's first process
//     (its init, the holder below) is killed when the session ends or
//     nodwyn dies (PR_SET_PDEATHSIG), and the kernel kills every process
//     left in the namespace with it, whatever it did to its environment,
//     process group or descriptors.
//   - The network namespace holds only loopback: a server a command starts
//     on 127.0.0.1 is reached by the session's later commands, and
//     everything else only through the session's egress proxy, whose
//     listening socket is made in the namespace (a socket stays in the
//     namespace it was made in, whoever accepts on it).
//
// The holder is nodwyn itself, started again with NODWYN_SESSION_INIT in an
// otherwise empty environment (nothing of the person's, no key): as the
// namespace's PID 1 it makes its mounts private, mounts a /proc of the
// namespace over /proc, brings loopback up, says it is ready, and then
// only reaps what is orphaned to it. Commands are not its children: the
// floor starts each from a thread of nodwyn's that has joined the
// namespaces (setns) before it restricts itself, so nodwyn waits for them,
// signals their process groups and reads their output as before; their
// pids in nodwyn's /proc are the host's.
//
// setns into a PID or network namespace needs CAP_SYS_ADMIN in nodwyn's own
// user namespace, and a threaded process cannot join a user namespace, so
// this is root's (CI, containers, Harbor outside sandbox mode). A person's
// unprivileged nodwyn has no session namespaces yet, and says so.

// sessionInitEnv marks the holder's process.
const sessionInitEnv = "NODWYN_SESSION_INIT"

func init() {
	if os.Getenv(sessionInitEnv) == "1" {
		sessionInitMain()
	}
}

// sessionInitMain is the holder: PID 1 of the session's namespaces.
func sessionInitMain() {
	// Signals from the session's commands do not end it: a PID
	// namespace's init gets only the signals it handles, and these are
	// handled by being ignored. SIGKILL from nodwyn (or its death) does.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stdout, "error: %s: %v\n", what, err)
		os.Exit(1)
	}
	mountOnly := os.Getenv(sessionInitEnv+"_MOUNT_ONLY") == "1"
	if os.Getpid() != 1 && !mountOnly {
		fail("the session's init", errors.New("not the first process of a PID namespace"))
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("making the mounts private", err)
	}
	if mountOnly {
		// Sandbox mode: only nodwyn's own directories hidden; no /proc
		// of its own (no PID namespace), no network namespace.
		keep := strings.Split(os.Getenv(sessionInitEnv+"_KEEP"), "\n")
		if err := hideAll(strings.Split(os.Getenv(sessionInitEnv+"_HIDE"), "\n"), keep); err != nil {
			fail("hiding the catalogue", err)
		}
		fmt.Fprintln(os.Stdout, "ready")
		os.Stdout.Close()
		select {} // holds the namespace until nodwyn ends the session
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fail("mounting the namespace's /proc", err)
	}
	if os.Getenv(sessionInitEnv+"_NET") == "1" {
		if err := loopbackUp(); err != nil {
			fail("bringing loopback up", err)
		}
		// The proxy's listener, made here so it is the namespace's, handed
		// to nodwyn over descriptor 3 (nodwyn serves it from its own).
		ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		}
		if err == nil {
			err = unix.Listen(ln, 128)
		}
		if err == nil {
			err = unix.Sendmsg(3, []byte("L"), unix.UnixRights(ln), nil, 0)
		}
		if err != nil {
			fail("the proxy's listener in the namespace", err)
		}
		unix.Close(ln)
		// Then the listeners for the person's local services (nsnet.go),
		// one message each.
		if err := sendLocalListeners(3, os.Getenv(sessionInitEnv+"_LOCAL")); err != nil {
			fail("the local services' listeners in the namespace", err)
		}
		unix.Close(3)
	}
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	fmt.Fprintln(os.Stdout, "ready")
	os.Stdout.Close()
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		<-children
	}
}

// hideAll hides each path of hide that exists: a directory under an empty
// read-only tmpfs (the paths of keep inside it bound back), a file under an
// empty read-only file. Links and what is missing are left.
func hideAll(hide, keep []string) error {
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	var dirs, files []string
	for _, p := range hide {
		var st unix.Stat_t
		if p == "" || unix.Lstat(p, &st) != nil {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			dirs = append(dirs, p)
		case unix.S_IFREG:
			files = append(files, p)
		}
	}
	// The empty file the files are hidden under, on a tmpfs of its own
	// over the first directory (made read-only with it below).
	var empty string
	for i, d := range dirs {
		if err := hideDir(d, keep); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if i == 0 && len(files) > 0 {
			empty = filepath.Join(d, ".hidden-by-nodwyn")
			if err := os.WriteFile(empty, nil, 0o444); err != nil {
				return err
			}
		}
	}
	for _, f := range files {
		if empty == "" {
			break // no directory to hold the empty file: the floor alone
		}
		if err := unix.Mount(empty, f, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := unix.Mount("", f, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|flags, ""); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	for _, d := range dirs {
		if err := unix.Mount("", d, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// hideDir mounts an empty tmpfs over the directory d (read-only once
// hideAll is done with it), with each path of keep that is inside d bound
// back where it was (the session's scratch directory under nodwyn's data
// directory).
func hideDir(d string, keep []string) error {
	type kept struct {
		rel string
		fd  int
	}
	var back []kept
	for _, k := range keep {
		rel, err := filepath.Rel(d, k)
		if k == "" || err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		fd, err := unix.Open(k, unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err != nil {
			continue // not there: nothing to keep
		}
		back = append(back, kept{rel, fd})
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", d, "tmpfs", flags, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, k := range back {
		to := filepath.Join(d, k.rel)
		if err := os.MkdirAll(to, 0o700); err != nil {
			return err
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), to, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("keeping %s: %w", to, err)
		}
		unix.Close(k.fd)
	}
	return nil
}

// loopbackUp brings the namespace's lo up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// SessionNS are a session's namespaces, held by their init process.
type SessionNS struct {
	pid, mnt, net int // the namespaces' descriptors; net is -1 without one
	user          int // the user namespace's, -1 but for an unprivileged nodwyn
	holder        int // the init's pid, in nodwyn's namespace
	// nsenter, for an unprivileged nodwyn, is the program each command
	// starts through: it joins the session's user namespace (which a
	// process with threads cannot) and the others, then runs the command.
	nsenter  string
	listener net.Listener    // made in the network namespace by the init
	local    []LocalListener // the same, on the person's local services' addresses (nsnet.go)
	counters *netCounters    // the network namespace's counters (nsnet.go), opened at the first read
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// NewSandboxNS makes the mount namespace of a session in sandbox mode,
// where the paths of hide that exist — the credential catalogue's, nodwyn's
// own directories, the credentials directory — are empty and read-only to
// commands (a directory under a tmpfs, a file under an empty file), the
// paths of keep under them (the scratch directory) bound back; root only.
// What commands start there keeps the namespace, and runs on, after the
// session and nodwyn end (seed 000). With it the floor grants every path
// (Floor.GrantAll): the home and /tmp above it are the task's to write and
// read back, and what is hidden is hidden by the mounts, which a command
// under Landlock can neither undo nor get round (no mount or umount, no
// other process's /proc/PID/root or ns).
func NewSandboxNS(hide, keep []string) (*SessionNS, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("hiding nodwyn's own directories in a mount namespace needs root here")
	}
	return newSessionNS(false, true, []string{
		sessionInitEnv + "_MOUNT_ONLY=1",
		sessionInitEnv + "_HIDE=" + strings.Join(hide, "\n"),
		sessionInitEnv + "_KEEP=" + strings.Join(keep, "\n"),
	})
}

// NewSessionNS makes a session's PID and mount namespaces, and a network
// namespace holding only loopback when withNet, or says why it cannot here.
// With withNet, the namespace's loopback gets a listener on each address of
// local (loopback ip:port, as "127.0.0.1:5432" or "[::1]:8080"): the
// person's local services, which nodwyn forwards to (LocalListeners).
func NewSessionNS(withNet bool, local ...string) (*SessionNS, error) {
	var env []string
	if withNet && len(local) > 0 {
		if err := checkLocal(local); err != nil {
			return nil, err
		}
		env = []string{sessionInitEnv + "_LOCAL=" + strings.Join(local, "\n")}
	}
	return newSessionNS(withNet, false, env)
}

func newSessionNS(withNet, mountOnly bool, extraEnv []string) (*SessionNS, error) {
	var nsenter string
	if os.Geteuid() != 0 {
		// A process with threads cannot join a user namespace, so each
		// command starts through nsenter (util-linux), which does.
		p, err := exec.LookPath("nsenter")
		if err != nil {
			return nil, errors.New("an unprivileged nodwyn joins the session's namespaces through nsenter (util-linux), which is not installed")
		}
		nsenter = p
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding nodwyn's own program: %w", err)
	}
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS)
	if mountOnly {
		flags = unix.CLONE_NEWNS
	}
	env := append([]string{sessionInitEnv + "=1"}, extraEnv...)
	if withNet {
		flags |= unix.CLONE_NEWNET
		env = append(env, sessionInitEnv+"_NET=1")
	}
	s := &SessionNS{pid: -1, mnt: -1, net: -1, user: -1, nsenter: nsenter, counters: &netCounters{},
		stop: make(chan struct{}), done: make(chan struct{})}
	var attr syscall.SysProcAttr
	attr.Cloneflags, attr.Pdeathsig = flags, syscall.SIGKILL
	if nsenter != "" {
		// A user namespace of the person's own, the person's ids mapped
		// to themselves: the init has the rights to mount its /proc and
		// bring loopback up there, and commands keep their ids.
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// The person's id is not root there, so the rights to mount, to
		// bring loopback up and to listen on a port below 1024 for a local
		// service (nsnet.go) must survive the init's exec: ambient, in
		// that user namespace only. Commands join without them.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE}
	}
	// The listeners' way back from the init: a socket pair, its end as
	// descriptor 3 there (packets: one listener, or why not, each).
	var ours, theirs *os.File
	if withNet {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("the session's namespaces: %w", err)
		}
		ours, theirs = os.NewFile(uintptr(fds[0]), "nsinit"), os.NewFile(uintptr(fds[1]), "nsinit")
		defer ours.Close()
	}
	type started struct {
		pid int
		err error
	}
	startc := make(chan started, 1)
	go func() {
		// The holder's parent death signal follows the thread that
		// started it: this one stays until the session ends.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // the thread is as it was: nothing was changed on it
		defer close(s.done)
		cmd := exec.Command(exe)
		cmd.Args = []string{"nodwyn-session-init"}
		cmd.Env = env
		cmd.Dir = "/"
		cmd.SysProcAttr = &attr
		if theirs != nil {
			cmd.ExtraFiles = []*os.File{theirs}
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			startc <- started{err: err}
			return
		}
		err = cmd.Start()
		if theirs != nil {
			theirs.Close()
		}
		if err != nil {
			startc <- started{err: fmt.Errorf("starting the session's namespaces: %w", err)}
			return
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			msg := strings.TrimSpace(strings.TrimPrefix(line, "error: "))
			if msg == "" {
				msg = "it ended before it was ready"
			}
			startc <- started{err: fmt.Errorf("the session's namespaces: %s", msg)}
			return
		}
		startc <- started{pid: cmd.Process.Pid}
		<-s.stop
		_ = cmd.Process.Kill() // and the kernel kills all that is left in the namespace
		_ = cmd.Wait()
	}()
	st := <-startc
	if st.err != nil {
		return nil, st.err
	}
	s.holder = st.pid
	open := func(kind string) (int, error) {
		return unix.Open(fmt.Sprintf("/proc/%d/ns/%s", st.pid, kind), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if mountOnly {
		s.mnt, err = open("mnt")
	} else if s.pid, err = open("pid"); err == nil {
		if s.mnt, err = open("mnt"); err == nil && withNet {
			s.net, err = open("net")
		}
	}
	if err == nil && nsenter != "" {
		s.user, err = open("user")
	}
	if err == nil && ours != nil {
		s.listener, err = receiveListener(ours)
		for _, a := range localAddrs(extraEnv) {
			if err != nil || a == "" {
				break
			}
			ln, lerr := receiveListener(ours)
			var refused *initRefused
			if errors.As(lerr, &refused) {
				s.local = append(s.local, LocalListener{Addr: a, Err: refused})
				continue
			}
			err = lerr
			s.local = append(s.local, LocalListener{Addr: a, Listener: ln})
		}
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("the session's namespaces: %w", err)
	}
	return s, nil
}

// receiveListener takes the listener the init sent over c, or what it
// said instead (an *initRefused: it could not make that one).
func receiveListener(c *os.File) (net.Listener, error) {
	buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(c.Fd()), buf, oob, 0)
	if err != nil {
		return nil, fmt.Errorf("receiving the proxy's listener: %w", err)
	}
	if n > 0 && buf[0] == 'E' {
		return nil, &initRefused{string(buf[1:n])}
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("receiving the proxy's listener: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("receiving the proxy's listener: %v", err)
	}
	unix.CloseOnExec(fds[0])
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	defer f.Close()
	return net.FileListener(f)
}

// Listener is a listener on 127.0.0.1 made in the session's network
// namespace (nil without one): what nodwyn serves the proxy on. Close
// closes it.
func (s *SessionNS) Listener() net.Listener {
	if s == nil {
		return nil
	}
	return s.listener
}

// wrap makes cmd start through nsenter into the session's namespaces (an
// unprivileged nodwyn's way in), keeping its program, arguments and
// directory. The namespaces are handed to nsenter as descriptors: under
// the floor it may not open /proc/<init>/ns/*, Landlock's ptrace scoping
// refuses it the init outside its domain. done closes nodwyn's copies
// once the command has started.
func (s *SessionNS) wrap(cmd *exec.Cmd) (done func(), err error) {
	kinds := []struct {
		flag string
		fd   int
	}{{"--user", s.user}, {"--pid", s.pid}, {"--mount", s.mnt}, {"--net", s.net}}
	args := []string{s.nsenter}
	var files []*os.File
	done = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, k := range kinds {
		if k.fd < 0 {
			continue
		}
		d, err := unix.FcntlInt(uintptr(k.fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			done()
			return nil, fmt.Errorf("entering the session's namespaces: %w", err)
		}
		args = append(args, fmt.Sprintf("%s=/proc/self/fd/%d", k.flag, 3+len(cmd.ExtraFiles)+len(files)))
		files = append(files, os.NewFile(uintptr(d), "ns"))
	}
	args = append(args, "--preserve-credentials")
	if cmd.Dir != "" {
		args = append(args, "--wd="+cmd.Dir)
	}
	args = append(args, "--", cmd.Path)
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path, cmd.Args = s.nsenter, args
	cmd.ExtraFiles = append(cmd.ExtraFiles, files...)
	return done, nil
}

// Network reports whether the session has a network namespace.
func (s *SessionNS) Network() bool { return s != nil && s.net >= 0 }

// Holder is the pid of the namespaces' init, in nodwyn's namespace.
func (s *SessionNS) Holder() int {
	if s == nil {
		return 0
	}
	return s.holder
}

// enter makes the calling thread, locked to its goroutine and never given
// back, start its children in the session's namespaces: its own mount
// namespace (and so /proc), the PID namespace for its children, and the
// network namespace.
func (s *SessionNS) enter() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil { // a mount namespace is joined by a thread that shares no fs
		return fmt.Errorf("entering the session's namespaces: %w", err)
	}
	if err := unix.Setns(s.mnt, unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("entering the session's mount namespace: %w", err)
	}
	if s.pid >= 0 {
		if err := unix.Setns(s.pid, unix.CLONE_NEWPID); err != nil {
			return fmt.Errorf("entering the session's PID namespace: %w", err)
		}
	}
	if s.net >= 0 {
		if err := unix.Setns(s.net, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("entering the session's network namespace: %w", err)
		}
	}
	return nil
}

// Close kills the namespaces' init, and with it every process still in
// the PID namespace, and waits for it.
func (s *SessionNS) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		if s.listener != nil {
			s.listener.Close()
		}
		for _, l := range s.local {
			if l.Listener != nil {
				l.Listener.Close()
			}
		}
		s.counters.close()
		for _, fd := range []int{s.pid, s.mnt, s.net, s.user} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	})
}

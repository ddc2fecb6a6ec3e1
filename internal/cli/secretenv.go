package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/nodwyn/nodwyn/internal/prim"
)

// The key nodwyn reads must not be readable by the programs it runs, and a
// child can read /proc/<nodwyn's pid>/environ: that file shows the
// environment the process was started with (the strings the kernel put at
// the top of its first stack), whatever os.Unsetenv does later. So before
// anything else, CleanEnvironment moves every secret-looking variable (by
// its name or its value's shape: prim.Secret, the table ScrubEnv uses for
// the commands too) into memory (hiddenEnv, which Getenv consults) and wipes its bytes where the
// kernel reads /proc/<pid>/environ from (scrubEnviron, through
// /proc/self/mem: Go copied the environment at start, so nothing of the
// process reads those bytes again). Where that is impossible, nodwyn
// re-executes itself with an environment that lacks the variables, handing
// them over through a pipe (reexecHidden). The wipe costs a few syscalls;
// the re-exec cost a second start of the whole process (15–20 ms).

const envFDVar = "NODWYN_HIDDEN_ENV_FD"

// hideByExecVar, set to 1, makes CleanEnvironment re-execute even where it
// could wipe in place: the tests take both paths with it.
const hideByExecVar = "NODWYN_HIDE_ENV_BY_EXEC"

// pathNotSecret are variables whose names look secret but hold where the
// secrets are, which nodwyn must know to protect them (the guard, the
// kernel floor and the folder rules read them from the process's
// environment). Hidden, they were "" there, and nothing protected
// $CREDENTIALS_DIRECTORY. The commands' environment is an allow-list
// (prim.ScrubEnv): they do not get it either way.
var pathNotSecret = map[string]bool{"CREDENTIALS_DIRECTORY": true}

// readByRuntime are variables Go's standard library reads from the process
// environment itself (net/http's proxy settings, read by the provider's
// transport through http.ProxyFromEnvironment), not through Getenv. One
// with a password in it (HTTPS_PROXY=http://user:pass@proxy:3128) is wiped
// from /proc/<pid>/environ like any secret but stays in the Go
// environment: unset, the model's requests would bypass the proxy. The
// commands never get it (prim.ScrubEnv drops a secret value, allow-listed
// or not).
var readByRuntime = map[string]bool{"HTTP_PROXY": true, "http_proxy": true, "HTTPS_PROXY": true, "https_proxy": true}

// hidden reports whether CleanEnvironment takes name=value out of the
// environment: doctor asks the same of /proc/self/environ.
func hidden(name, value string) bool {
	return prim.Secret(name, value) && !pathNotSecret[name]
}

// hiddenEnv holds the secret variables moved out of the environment.
var hiddenEnv = map[string]string{}

// CleanEnvironment takes the secret-looking variables out of the
// environment and out of /proc/<pid>/environ, keeping them in hiddenEnv. It
// wipes them in place, or re-executes the process without them (returning
// in the new process). When neither is possible the variables are only
// unset, which still keeps them from the children, though not from
// /proc/PID/environ.
func CleanEnvironment() {
	if fdText, ok := os.LookupEnv(envFDVar); ok {
		os.Unsetenv(envFDVar)
		readHidden(fdText)
		return
	}
	byExec := os.Getenv(hideByExecVar) == "1"
	os.Unsetenv(hideByExecVar)
	var keep, hide []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if hidden(name, value) {
			hide = append(hide, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	if len(hide) == 0 {
		return
	}
	if byExec || scrubEnviron(hide) != nil {
		reexecHidden(keep, hide) // returns only when it could not
	}
	for _, kv := range hide {
		name, val, _ := strings.Cut(kv, "=")
		hiddenEnv[name] = val
		if !readByRuntime[name] {
			os.Unsetenv(name)
		}
	}
}

// scrubEnviron overwrites with NUL bytes each entry of hide in the memory
// /proc/self/environ shows (from env_start to env_end of /proc/self/stat),
// and reads it back to be sure. The Go runtime copied the environment at
// start; with cgo, libc's environ then holds an empty string there.
func scrubEnviron(hide []string) error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// The fields after the command's name, which is in parentheses and
	// may hold anything: field 3 (state) is the first, env_start is 50.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return errors.New("/proc/self/stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 49 {
		return errors.New("/proc/self/stat: no env_start and env_end")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || end <= start || end-start > 1<<24 {
		return fmt.Errorf("/proc/self/stat: env_start %q, env_end %q", f[47], f[48])
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	area := make([]byte, end-start)
	if _, err := mem.ReadAt(area, start); err != nil {
		return err
	}
	if err := wipeEntries(area, hide); err != nil {
		return err
	}
	if _, err := mem.WriteAt(area, start); err != nil {
		return err
	}
	check := make([]byte, len(area))
	if _, err := mem.ReadAt(check, start); err != nil {
		return err
	}
	if !bytes.Equal(check, area) {
		return errors.New("/proc/self/mem: the environment did not change")
	}
	return nil
}

// wipeEntries overwrites with NUL bytes every NUL-terminated entry of area
// whose name is the name of one of hide: all of them, a second
// OPENAI_API_KEY=… after the first included (the Go runtime keeps only the
// first, but the kernel shows both). It is an error when one of hide is
// not there: area is then not the environment the process was started
// with.
func wipeEntries(area []byte, hide []string) error {
	want := make(map[string]bool, len(hide))
	names := make(map[string]bool, len(hide))
	for _, kv := range hide {
		want[kv] = true
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	found := map[string]bool{}
	var wipe [][2]int
	for off := 0; off < len(area); {
		n := bytes.IndexByte(area[off:], 0)
		if n < 0 {
			n = len(area) - off
		}
		kv := string(area[off : off+n])
		if name, _, _ := strings.Cut(kv, "="); names[name] {
			if want[kv] {
				found[kv] = true
			}
			wipe = append(wipe, [2]int{off, off + n})
		}
		off += n + 1
	}
	for kv := range want {
		if !found[kv] {
			return errors.New("the environment's memory is not the environment the process has")
		}
	}
	for _, w := range wipe {
		clear(area[w[0]:w[1]])
	}
	return nil
}

// reexecHidden re-executes the process with keep as its environment,
// handing hide to the new process through a pipe. It returns only when
// that failed.
func reexecHidden(keep, hide []string) {
	exe, err := os.Executable()
	var p [2]int
	if err == nil {
		err = syscall.Pipe(p[:]) // not close-on-exec: the new image inherits the read end
	}
	if err == nil && len(strings.Join(hide, "\n")) < 60000 { // fits the pipe's buffer, so the write never blocks
		w := os.NewFile(uintptr(p[1]), "hidden-env")
		for _, kv := range hide {
			fmt.Fprintf(w, "%s\n", strconv.Quote(kv))
		}
		w.Close()
		syscall.CloseOnExec(p[1])
		keep = append(keep, fmt.Sprintf("%s=%d", envFDVar, p[0]))
		// Exec returns only when it failed.
		_ = syscall.Exec(exe, os.Args, keep)
		syscall.Close(p[0])
	}
}

func readHidden(fdText string) {
	fd, err := strconv.Atoi(fdText)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "hidden-env")
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		kv, err := strconv.Unquote(sc.Text())
		if err != nil {
			continue
		}
		name, val, _ := strings.Cut(kv, "=")
		hiddenEnv[name] = val
		if readByRuntime[name] { // in the Go environment, not in /proc/<pid>/environ
			os.Setenv(name, val)
		}
	}
}

// Getenv reads the environment, including the variables CleanEnvironment hid.
func Getenv(name string) string {
	if v, ok := hiddenEnv[name]; ok {
		return v
	}
	return os.Getenv(name)
}

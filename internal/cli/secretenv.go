package cli

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/nodwyn/nodwyn/internal/prim"
)

// The key nodwyn reads must not be readable by the programs it runs, and a
// child can read /proc/<nodwyn's pid>/environ: that file shows the
// environment the process was started with, whatever os.Unsetenv does later.
// So before anything else, nodwyn moves every secret-looking variable into a
// pipe and re-executes itself with an environment that lacks them
// (CleanEnvironment); the new process reads them from the pipe into memory
// (hiddenEnv) and getenv consults that.

const envFDVar = "NODWYN_HIDDEN_ENV_FD"

// pathNotSecret are variables whose names look secret but hold where the
// secrets are, which nodwyn must know to protect them (the guard, the
// kernel floor and the folder rules read them from the process's
// environment). Hidden, they were "" there, and nothing protected
// $CREDENTIALS_DIRECTORY. The commands' environment is an allow-list
// (prim.ScrubEnv): they do not get it either way.
var pathNotSecret = map[string]bool{"CREDENTIALS_DIRECTORY": true}

// hiddenEnv holds the secret variables moved out of the environment.
var hiddenEnv = map[string]string{}

// CleanEnvironment re-executes the process without secret-looking variables
// in its environment, handing them over through a pipe. It returns only when
// there is nothing to hide, after the re-exec (in the new process), or when
// re-executing is impossible (then the variables are unset, which still keeps
// them from the children, though not from /proc/PID/environ).
func CleanEnvironment() {
	if fdText, ok := os.LookupEnv(envFDVar); ok {
		os.Unsetenv(envFDVar)
		readHidden(fdText)
		return
	}
	var keep, hide []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if prim.SecretName(name) && !pathNotSecret[name] {
			hide = append(hide, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	if len(hide) == 0 {
		return
	}
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
		// Exec returns only when it failed: fall through to unsetting.
		_ = syscall.Exec(exe, os.Args, keep)
		syscall.Close(p[0])
	}
	for _, kv := range hide {
		name, val, _ := strings.Cut(kv, "=")
		hiddenEnv[name] = val
		os.Unsetenv(name)
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
	}
}

// Getenv reads the environment, including the variables CleanEnvironment hid.
func Getenv(name string) string {
	if v, ok := hiddenEnv[name]; ok {
		return v
	}
	return os.Getenv(name)
}

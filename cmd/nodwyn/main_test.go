package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
)

func TestMain(m *testing.M) {
	// The test binary is also the MCP test server (internal/mcp/mcptest):
	// a script declares command = "nodwyn" with env NODWYN_MCPTEST = "1".
	mcptest.ServeIfAsked()
	testscript.Main(m, map[string]func(){"nodwyn": main})
}

// TestScripts runs whole sessions with the scripted model:
// testdata/script/*.txtar. Each runs in its own $WORK with HOME, the XDG
// directories and TMPDIR inside it.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonlines": jsonLines,
			"httpget":   httpGet,
			"killpid":   killPID,
			"exitcode":  exitCode,
			"waitfile":  waitFile,
			"environ-lacks": func(ts *testscript.TestScript, neg bool, args []string) {
				environHas(ts, !neg, args)
			},
			"environ-has": environHas,
			"jsonfile":    jsonFile,
			"fakemodel":   fakeModel,
			"pidgone":     pidGone,
			"journaladd":  journalAppend,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "landlock": // the kernel floor can be on here
				_, err := sandbox.LandlockABI()
				return err == nil, nil
			case "sessionns": // a session's PID, mount and network namespaces can be had here
				ns, err := sandbox.NewSessionNS(true)
				ns.Close()
				return err == nil, nil
			case "sandboxns": // sandbox mode's mount namespace can be had here (root)
				ns, err := sandbox.NewSandboxNS(nil, nil)
				ns.Close()
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			for _, d := range []string{home, filepath.Join(e.WorkDir, "tmp")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			e.Setenv("HOME", home)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			e.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
			e.Setenv("TMPDIR", filepath.Join(e.WorkDir, "tmp"))
			// A script that builds a helper with go shares the build
			// cache of the go test that runs it (not a fresh one in the
			// script's home, which would compile the standard library).
			if c := goCache(); c != "" {
				e.Setenv("GOCACHE", c)
			}
			e.Setenv("NODWYN_PROFILE", "")
			// A binary built with -race sleeps a second before it exits
			// (the race detector's atexit_sleep_ms): the scripts start
			// nodwyn hundreds of times.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

// jsonLines checks that every non-empty line of a file (or stdout/stderr) is
// one JSON object: jsonlines stdout | jsonlines FILE.
func jsonLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonlines stdout|stderr|FILE")
	}
	text := ts.ReadFile(args[0]) // stdout and stderr name the last command's
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	n, bad := 0, ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		n++
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil && bad == "" {
			bad = line
		}
	}
	if neg {
		if bad == "" && n > 0 {
			ts.Fatalf("every line is JSON")
		}
		return
	}
	if bad != "" {
		ts.Fatalf("not a JSON object: %s", bad)
	}
	if n == 0 {
		ts.Fatalf("no JSON lines")
	}
}

// httpGet fetches PATH from the server whose log file names its port
// ("… port N …"), and writes the body to stdout: httpget LOGFILE PATH.
func httpGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: httpget LOGFILE PATH")
	}
	m := regexp.MustCompile(`port (\d+)`).FindStringSubmatch(ts.ReadFile(args[0]))
	if m == nil {
		ts.Fatalf("no port in %s", args[0])
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%s%s", m[1], args[1]))
	if err != nil {
		if neg {
			return
		}
		ts.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	ts.Stdout().Write(body)
	if neg {
		ts.Fatalf("the server still answers")
	}
}

// killPID stops the process whose id is in FILE; with ! it expects none.
func killPID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: killpid FILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("pid file: %v", err)
	}
	if zombie(pid) { // ended, but its new parent has not reaped it
		err = syscall.ESRCH
	} else {
		err = syscall.Kill(pid, syscall.SIGKILL)
	}
	if neg && err == nil {
		ts.Fatalf("process %d was still running", pid)
	}
	if !neg && err != nil {
		ts.Fatalf("kill %d: %v", pid, err)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// exitCode runs a command and checks its exit status: exitcode N CMD ARGS….
func exitCode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if (got == want) == neg {
		ts.Fatalf("exit status %d, want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// waitFile waits up to 20 s for a file to appear: waitfile FILE. A
// regular file counts once it holds something: a shell's `echo $$ > pid`
// makes it empty before it writes, and a script that acted on the empty
// file (interrupting the command) could find it empty for good.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(ts.MkAbs(args[0])); err == nil && (!fi.Mode().IsRegular() || fi.Size() > 0) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear", args[0])
}

// environHas checks /proc/PID/environ of the process whose id is in PIDFILE
// for TEXT: environ-has PIDFILE TEXT (environ-lacks is its negation).
func environHas(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: environ-has PIDFILE TEXT")
	}
	pid := strings.TrimSpace(ts.ReadFile(args[0]))
	b, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		ts.Fatalf("reading the environment of %s: %v", pid, err)
	}
	has := strings.Contains(string(b), args[1])
	if has == neg {
		ts.Fatalf("/proc/%s/environ: contains %q = %v", pid, args[1], has)
	}
}

// jsonFile checks one value of a JSON file by a dotted path (numbers index
// arrays): jsonfile FILE PATH WANT. WANT is compared with the value's text;
// \n in WANT is a newline.
func jsonFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonfile FILE PATH WANT")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &v); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	for _, k := range strings.Split(args[1], ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				ts.Fatalf("%s: no element %s", args[1], k)
			}
			v = x[i]
		default:
			ts.Fatalf("%s: %s is not in a JSON object or array", args[1], k)
		}
	}
	got := fmt.Sprint(v)
	want := strings.ReplaceAll(args[2], `\n`, "\n")
	if (got == want) == neg {
		ts.Fatalf("%s = %q, want %q", args[1], got, want)
	}
}

var goCacheOnce = sync.OnceValue(func() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// goCache is the build cache of the go that runs the tests, or "".
func goCache() string { return goCacheOnce() }

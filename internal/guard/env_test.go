package guard

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testEnv is a temporary home with planted canary credentials, nodwyn's
// directories where XDG puts them (outside the home), a credentials
// directory, a folder under the home and a scratch directory.
type testEnv struct {
	Home, Config, Data, Cred, Folder, Scratch string
}

const canary = "CANARY-5f1d2e3c4b5a"

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	root := t.TempDir()
	e := &testEnv{
		Home:    filepath.Join(root, "home"),
		Config:  filepath.Join(root, "xdg-config", "nodwyn"),
		Data:    filepath.Join(root, "xdg-data", "nodwyn"),
		Cred:    filepath.Join(root, "credentials"),
		Scratch: filepath.Join(root, "tmp", "nodwyn-scratch-s1-abc"),
	}
	e.Folder = filepath.Join(e.Home, "src", "proj")
	plant := map[string]string{
		filepath.Join(e.Home, ".ssh", "id_rsa"):      "-----BEGIN OPENSSH PRIVATE KEY-----\n" + canary + "\n-----END OPENSSH PRIVATE KEY-----\n",
		filepath.Join(e.Home, ".ssh", "config"):      "Host x\n",
		filepath.Join(e.Home, ".aws", "credentials"): "[default]\naws_secret_access_key = " + canary + "\n",
		filepath.Join(e.Home, ".kube", "config"):     canary,
		filepath.Join(e.Home, ".bashrc"):             "# bashrc\n",
		filepath.Join(e.Config, "config.toml"):       "api_key = \"" + canary + "\"\n",
		filepath.Join(e.Data, "sessions", "s1.json"): canary,
		filepath.Join(e.Cred, "api-key"):             canary,
		filepath.Join(e.Folder, "README.md"):         "# proj\n",
		filepath.Join(e.Folder, "main.go"):           "package main\n",
		filepath.Join(e.Folder, "internal", "x.go"):  "package internal\n",
		filepath.Join(e.Scratch, "notes.txt"):        "scratch\n",
	}
	// A list a file tool wrote in an earlier call: it names no directory
	// on the command line that reads it.
	plant[filepath.Join(e.Folder, "paths.txt")] = filepath.Join(e.Home, ".ssh", "id_rsa") + "\n"
	for p, c := range plant {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// The suites judge verdicts, not speed (the benchmarks do, and
// TestAParseErrorOrATimeoutFailsClosedWhenTheLineMentionsHome the bound):
// the analysis gets 10 s, so a loaded machine under -race (where the
// slowest line takes ten times its 10–16 ms) does not turn a legitimate
// line into a confirm of a line not judged in time.
func (e *testEnv) opts(sandbox bool) Options {
	return Options{
		Folder: e.Folder, Scratch: e.Scratch, Home: e.Home,
		ConfigDir: e.Config, DataDir: e.Data, CredentialsDir: e.Cred,
		Sandbox: sandbox, Unattended: sandbox, Lean: sandbox,
		AnalysisTimeout: 10 * time.Second,
	}
}

func (e *testEnv) guard(sandbox bool) *Guard { return New(e.opts(sandbox)) }

// floorGuard is the guard of a run whose kernel floor is on.
func (e *testEnv) floorGuard(sandbox bool) *Guard {
	o := e.opts(sandbox)
	o.KernelFloor = true
	return New(o)
}

// expand fills a suite line's placeholders.
func (e *testEnv) expand(line string) string {
	return strings.NewReplacer(
		"{{HOME}}", e.Home, "{{CONFIG}}", e.Config, "{{DATA}}", e.Data,
		"{{CRED}}", e.Cred, "{{FOLDER}}", e.Folder, "{{SCRATCH}}", e.Scratch,
		"↵", "\n",
	).Replace(line)
}

func shell(line string) Request {
	return Request{Tool: "shell-exec", Args: map[string]any{"command": line}}
}

func file(tool, path string) Request {
	return Request{Tool: tool, Args: map[string]any{"path": path, "content": "x", "old": "a", "new": "b"}}
}

// suiteLine is one line of a testdata suite.
type suiteLine struct {
	Tag  string
	Line string
	No   int
}

func readSuite(t testing.TB, name string) []suiteLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []suiteLine
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		tag := ""
		if t, rest, ok := strings.Cut(l, "\t"); ok && len(t) <= 2 {
			tag, l = t, rest
		} else if rest, ok := strings.CutPrefix(l, "sc: "); ok {
			tag, l = "sc", rest
		} else if rest, ok := strings.CutPrefix(l, "floor: "); ok {
			tag, l = "floor", rest
		}
		out = append(out, suiteLine{Tag: tag, Line: l, No: n})
	}
	return out
}

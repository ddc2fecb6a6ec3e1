package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
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
			e.Setenv("NODWYN_PROFILE", "")
			if os.Geteuid() == 0 {
				e.Setenv("IS_ROOT", "1")
			}
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

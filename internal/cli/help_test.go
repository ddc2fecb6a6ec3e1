package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/store"
)

// nodwyn help, --version and -v work as a person used to other CLIs
// expects; a parse error's hint has one space.
func TestHelpAndVersion(t *testing.T) {
	env := homeEnv(t.TempDir())
	for _, c := range []struct{ a, b []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "run"}, []string{"run", "--help"}},
		{[]string{"help", "journal", "verify"}, []string{"journal", "verify", "--help"}},
	} {
		codeA, outA, errA := nodwyn(env, "", c.a...)
		codeB, outB, _ := nodwyn(env, "", c.b...)
		if codeA != 0 || outA != outB || !strings.HasPrefix(outA, "Usage: nodwyn") {
			t.Errorf("nodwyn %s: exit %d, %q\n%s\nwant what nodwyn %s prints (exit %d)", strings.Join(c.a, " "), codeA, errA, outA, strings.Join(c.b, " "), codeB)
		}
	}
	for _, arg := range []string{"--version", "-v", "version"} {
		if code, out, errs := nodwyn(env, "", arg); code != 0 || out != "nodwyn "+Version+"\n" || errs != "" {
			t.Errorf("nodwyn %s: exit %d, %q %q", arg, code, out, errs)
		}
	}
	code, _, errs := nodwyn(env, "", "--bogus")
	if code != ExitUsage || !strings.Contains(errs, "run 'nodwyn --help' for usage") {
		t.Errorf("nodwyn --bogus: exit %d, %q", code, errs)
	}
	if code, _, errs := nodwyn(env, "", "help", "nosuch"); code != ExitUsage || !strings.Contains(errs, "nosuch") {
		t.Errorf("nodwyn help nosuch: exit %d, %q", code, errs)
	}
	// Typos of commands and flags are answered with the one meant.
	if _, _, errs := nodwyn(env, "", "sesions"); !strings.Contains(errs, `did you mean "sessions"?`) {
		t.Errorf("nodwyn sesions: %q", errs)
	}
	if _, _, errs := nodwyn(env, "", "run", "--profle", "x", "task"); !strings.Contains(errs, `did you mean "--profile"?`) {
		t.Errorf("nodwyn run --profle: %q", errs)
	}
}

// commandPaths are the paths of every command of the CLI ("journal verify").
func commandPaths(t *testing.T) []string {
	t.Helper()
	var c CLI
	k, err := kong.New(&c, kong.Name("nodwyn"), kong.Vars{"version": "", "providers": ""})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, ch := range n.Children {
			paths = append(paths, commandPathOf(ch))
			walk(ch)
		}
	}
	walk(k.Model.Node)
	return paths
}

// Every command's --help ends with examples, and every example is of a
// command there is.
func TestEveryHelpHasExamples(t *testing.T) {
	env := homeEnv(t.TempDir())
	paths := append([]string{""}, commandPaths(t)...)
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
		args := append(strings.Fields(p), "--help")
		code, out, errs := nodwyn(env, "", args...)
		_, tail, found := strings.Cut(out, "\nExamples:\n")
		if code != 0 || !found || tail == "" {
			t.Errorf("nodwyn %s: exit %d, no examples at its end:\n%s%s", strings.Join(args, " "), code, out, errs)
			continue
		}
		if strings.Contains(tail, "\nFlags:") || strings.Count(out, "Examples:") != 1 {
			t.Errorf("nodwyn %s: the examples are not once and last:\n%s", strings.Join(args, " "), out)
		}
		if !strings.Contains(tail, "nodwyn "+p) {
			t.Errorf("no example of %q runs it:\n%s", p, tail)
		}
	}
	for p := range examples {
		if !seen[p] {
			t.Errorf("examples of %q, which is no command", p)
		}
	}
}

// chat --help and run --help name every provider there is.
func TestHelpListsEveryProvider(t *testing.T) {
	env := homeEnv(t.TempDir())
	for _, cmd := range []string{"chat", "run"} {
		_, out, _ := nodwyn(env, "", cmd, "--help")
		for _, p := range config.ProviderNames() {
			if !strings.Contains(out, p) {
				t.Errorf("%s --help does not name the provider %s:\n%s", cmd, p, out)
			}
		}
	}
}

// saveSessions saves n finished sessions, the newest last, each with a log.
func saveSessions(t *testing.T, st *store.Store, n int) []string {
	t.Helper()
	var ids []string
	base := time.Now().Add(-time.Hour)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("%s-%06d", at.Format("20060102-150405"), i)
		if err := st.SaveState(&store.SessionState{ID: id, Folder: "/src/p", Instruction: fmt.Sprintf("task %d", i), Status: "finished", Created: at, Updated: at}); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf(`{"type":"run.start","time":%q,"data":{"session":%q,"instruction":"task %d"}}`+"\n", at.Format(time.RFC3339Nano), id, i)
		if err := os.MkdirAll(filepath.Dir(st.LogPath(id)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(st.LogPath(id), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// nodwyn log with no id is the last session's, as journal verify's is; an
// unknown id is said once.
func TestLogDefaultsToLast(t *testing.T) {
	home, st := listingStore(t)
	env := homeEnv(home)
	ids := saveSessions(t, st, 2)
	code, out, errs := nodwyn(env, "", "log")
	codeL, outL, _ := nodwyn(env, "", "log", "last")
	if code != 0 || out != outL || codeL != 0 || !strings.Contains(out, "task 1") {
		t.Errorf("nodwyn log: exit %d %q\n%s\nwant the last session's (%s):\n%s", code, errs, out, ids[1], outL)
	}
	code, _, errs = nodwyn(env, "", "log", "nonexist")
	if code != ExitUsage || !strings.Contains(errs, `"nonexist"`) || strings.Contains(errs, "nodwyn: nodwyn") || strings.Count(errs, "nonexist") != 1 {
		t.Errorf("nodwyn log nonexist: exit %d, %q", code, errs)
	}
	_, _, errs = nodwyn(env, "", "journal", "verify", "nonexist")
	if strings.Contains(errs, "nodwyn: nodwyn") || strings.Count(errs, "nonexist") != 1 {
		t.Errorf("nodwyn journal verify nonexist: %q", errs)
	}
}

// nodwyn sessions lists the newest 20 and says how many more there are;
// -n and --limit choose, 0 is all.
func TestSessionsLimit(t *testing.T) {
	home, st := listingStore(t)
	env := homeEnv(home)
	ids := saveSessions(t, st, 23)
	rows := func(out string) int { return strings.Count(out, "\n") - 1 } // less the header
	code, out, errs := nodwyn(env, "", "sessions")
	if code != 0 || rows(out) != 20 || !strings.Contains(out, ids[22]) || strings.Contains(out, ids[2]) || errs != "3 more; --limit 0 for all\n" {
		t.Errorf("nodwyn sessions: exit %d, %d rows, %q\n%s", code, rows(out), errs, out)
	}
	if _, out, errs := nodwyn(env, "", "sessions", "-n", "2"); rows(out) != 2 || !strings.Contains(out, ids[21]) || errs != "21 more; --limit 0 for all\n" {
		t.Errorf("nodwyn sessions -n 2: %q\n%s", errs, out)
	}
	if _, out, errs := nodwyn(env, "", "sessions", "--limit", "0"); rows(out) != 23 || errs != "" {
		t.Errorf("nodwyn sessions --limit 0: %d rows, %q", rows(out), errs)
	}
	if code, _, errs := nodwyn(env, "", "sessions", "--limit", "-1"); code != ExitUsage || !strings.Contains(errs, "--limit") {
		t.Errorf("nodwyn sessions --limit -1: exit %d, %q", code, errs)
	}
}

// logout has no --no-keychain: its error says what to do with logout.
func TestLogoutSuggestsNoFlagItLacks(t *testing.T) {
	getenv := keyEnv(t.TempDir(), map[string]string{"DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""})
	code, _, errs := nodwyn(getenv, "", "logout", "openai")
	if code != ExitFailed || strings.Contains(errs, "--no-keychain") || !strings.Contains(errs, "start a keyring daemon") || !strings.Contains(errs, "nodwyn logout openai") {
		t.Errorf("logout with no Secret Service: exit %d\n%s", code, errs)
	}
	code, _, errs = nodwyn(getenv, "sk-0123456789abcdef", "login", "openai")
	if code != ExitFailed || strings.Contains(errs, "--no-keychain") || !strings.Contains(errs, "credentials file") {
		t.Errorf("login with no Secret Service: exit %d\n%s", code, errs)
	}
}

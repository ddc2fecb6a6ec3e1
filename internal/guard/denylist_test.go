package guard

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

func TestDenylistRefusesTheProtectedDirectoriesByPath(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	denied := []string{
		filepath.Join(e.Home, ".ssh", "id_rsa"),
		filepath.Join(e.Home, ".ssh", "config"),
		filepath.Join(e.Home, ".aws", "config"),
		filepath.Join(e.Home, ".gnupg", "pubring.kbx"),
		filepath.Join(e.Home, ".config", "gcloud", "x.db"),
		filepath.Join(e.Home, ".azure", "x.json"),
		filepath.Join(e.Home, ".kube", "config"),
		filepath.Join(e.Config, "config.toml"),
		filepath.Join(e.Data, "sessions", "s1.json"),
		filepath.Join(e.Cred, "api-key"),
		// nodwyn's default places and its former name, wherever XDG points
		filepath.Join(e.Home, ".config", "nodwyn", "config.toml"),
		filepath.Join(e.Home, ".local", "share", "nodwyn", "log"),
		filepath.Join(e.Home, ".config", "nibb", "config.toml"),
		filepath.Join(filepath.Dir(e.Data), "nibb", "log"),
		"/proc/self/environ", "/proc/1/mem", "/proc/self/root/etc/hostname", "/proc/self/cwd", "/proc/self/fd/3",
	}
	for _, p := range denied {
		for _, tool := range []string{"fs-read", "fs-write", "fs-edit"} {
			d := g.Check(bg, file(tool, p))
			if d.Verdict != Refuse || d.Checker != "PathDenylist" {
				t.Errorf("%s %s: got %v by %s (%s), want refuse by PathDenylist", tool, p, d.Verdict, d.Checker, d.Reason)
			}
		}
		if ok, why := g.Denylist().Denied(p); !ok || why == "" {
			t.Errorf("Denied(%s) = %v, %q", p, ok, why)
		}
		if ok, why := g.Denylist().DeniedResolved(p); !ok || why == "" {
			t.Errorf("DeniedResolved(%s) = %v, %q", p, ok, why)
		}
	}
	// Ordinary files, inside and outside the folder, are not the denylist's.
	for _, p := range []string{filepath.Join(e.Folder, "main.go"), filepath.Join(e.Home, ".bashrc"), "/etc/hosts", "/proc/cpuinfo"} {
		if ok, why := g.Denylist().Denied(p); ok {
			t.Errorf("Denied(%s) = true (%s)", p, why)
		}
		if ok, why := g.Denylist().DeniedResolved(p); ok {
			t.Errorf("DeniedResolved(%s) = true (%s)", p, why)
		}
	}
	// A credential-shaped name is denied wherever the kernel says it is.
	if ok, _ := g.Denylist().DeniedResolved(filepath.Join(e.Folder, "id_rsa")); !ok {
		t.Error("DeniedResolved of a credential-shaped name in the folder: not denied")
	}
}

// DeniedResolved judges the path as the kernel gave it, without resolving
// it again: a link on the way (which a kernel-resolved path cannot hold) is
// not followed, where Denied follows it.
func TestDeniedResolvedDoesNotResolveAgain(t *testing.T) {
	e := newTestEnv(t)
	ssh := filepath.Join(e.Home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.Folder, "keys")
	if err := os.Symlink(ssh, link); err != nil {
		t.Fatal(err)
	}
	g := e.guard(false)
	p := filepath.Join(link, "known")
	if ok, _ := g.Denylist().Denied(p); !ok {
		t.Errorf("Denied(%s) through a link to ~/.ssh: not denied", p)
	}
	if ok, why := g.Denylist().DeniedResolved(p); ok {
		t.Errorf("DeniedResolved(%s) looked at the link: %s", p, why)
	}
	if ok, _ := g.Denylist().DeniedResolved(filepath.Join(ssh, "known")); !ok {
		t.Error("DeniedResolved of the real path: not denied")
	}
}

func TestDenylistFollowsLinksBeforeDotDot(t *testing.T) {
	e := newTestEnv(t)
	sub := filepath.Join(e.Home, ".ssh", "sub")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.Folder, "l")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	g := e.guard(false)
	// Lexically l/../id_rsa is the folder's id_rsa; the system reaches
	// ~/.ssh/id_rsa.
	p := filepath.Join(e.Folder, "l") + "/../config"
	if ok, _ := g.Denylist().Denied(p); !ok {
		t.Errorf("Denied(%s) = false; the link leads into ~/.ssh", p)
	}
	if d := g.Check(bg, file("fs-read", "l/../config")); d.Verdict != Refuse {
		t.Errorf("fs-read l/../config: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, shell("cat l/../config")); d.Verdict != Refuse {
		t.Errorf("cat l/../config: %v (%s)", d.Verdict, d.Reason)
	}
	// A plain directory of the same shape is fine.
	if err := os.MkdirAll(filepath.Join(e.Folder, "m"), 0o700); err != nil {
		t.Fatal(err)
	}
	if d := g.Check(bg, file("fs-read", "m/../main.go")); d.Verdict != Allow {
		t.Errorf("fs-read m/../main.go: %v (%s)", d.Verdict, d.Reason)
	}
}

func TestCredentialShapedNamesAreDeniedButSourceFilesAreNot(t *testing.T) {
	for name, want := range map[string]bool{
		"id_rsa": true, "id_ed25519.pub": true, ".env": true, ".env.local": true, "prod.env": true,
		"server.pem": true, "server.key": true, "credentials": true, "credentials.json": true,
		".netrc": true, ".git-credentials": true, ".env.js": true, "cert.p12": true,
		"credentials.go": false, "credentials.js": false, "credentials.md": false, "id_test.py": false,
		"main.go": false, "README.md": false, "environment.yaml": false, "keys.go": false, "Makefile": false,
	} {
		if got := DeniedName(name); got != want {
			t.Errorf("DeniedName(%q) = %v, want %v", name, got, want)
		}
	}
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		if d := g.Check(bg, file("fs-read", "config/.env")); d.Verdict != Refuse {
			t.Errorf("sandbox=%v fs-read config/.env: %v", sandbox, d.Verdict)
		}
		if d := g.Check(bg, file("fs-edit", "web/credentials.js")); d.Verdict != Allow {
			t.Errorf("sandbox=%v fs-edit web/credentials.js: %v (%s)", sandbox, d.Verdict, d.Reason)
		}
	}
}

func TestScratchIsOutsideTheProtectedDirectoriesWhichStayDenied(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	if within(e.Scratch, e.Data) || within(e.Scratch, e.Config) {
		t.Fatal("test setup: the scratch directory should be outside nodwyn's directories")
	}
	if d := g.Check(bg, file("fs-write", filepath.Join(e.Scratch, "repro.py"))); d.Verdict != Allow {
		t.Errorf("fs-write in scratch: %v (%s)", d.Verdict, d.Reason)
	}
	// By path.
	for _, p := range []string{filepath.Join(e.Data, "sessions", "s1.json"), filepath.Join(e.Config, "config.toml")} {
		if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse {
			t.Errorf("fs-read %s: %v", p, d.Verdict)
		}
	}
	// Through a link made in the scratch directory.
	link := filepath.Join(e.Scratch, "d")
	if err := os.Symlink(e.Data, link); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(link, "sessions", "s1.json")
	if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse || !strings.Contains(d.Reason, e.Data) {
		t.Errorf("fs-read through a scratch link: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, shell("cat "+p)); d.Verdict != Refuse {
		t.Errorf("cat through a scratch link: %v (%s)", d.Verdict, d.Reason)
	}
	// By a program's default denylist (fs-find and index-grep skip them).
	if ok, _ := NewPathDenylist(e.opts(false)).Denied(filepath.Join(e.Config, "init.scm")); !ok {
		t.Error("a denylist built from the options does not deny the config directory")
	}
	// Nothing of them reaches a reason.
	if d := g.Check(bg, file("fs-read", p)); strings.Contains(d.Reason, canary) {
		t.Error("the reason leaks the canary")
	}
}

func TestScratchInsideTheDataDirectoryIsStillTheOnePlaceToUse(t *testing.T) {
	e := newTestEnv(t)
	e.Scratch = filepath.Join(e.Data, "tmp", "nodwyn-scratch-s2-xyz")
	if err := os.MkdirAll(e.Scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(e.Data, "tmp", "other-file")
	if err := os.WriteFile(other, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	g := e.guard(false)
	if d := g.Check(bg, file("fs-write", filepath.Join(e.Scratch, "notes.txt"))); d.Verdict != Allow {
		t.Errorf("fs-write in the scratch directory: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, shell("go test ./... > $TMPDIR/test.log")); d.Verdict != Allow {
		t.Errorf("a command writing to $TMPDIR: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, shell("cat "+filepath.Join(e.Scratch, "notes.txt"))); d.Verdict != Allow {
		t.Errorf("cat in the scratch directory: %v (%s)", d.Verdict, d.Reason)
	}
	for _, p := range []string{other, filepath.Join(e.Data, "sessions", "s1.json"), filepath.Join(e.Scratch, "..", "other-file")} {
		if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse {
			t.Errorf("fs-read %s: %v (%s)", p, d.Verdict, d.Reason)
		}
		if d := g.Check(bg, shell("cat "+p)); d.Verdict != Refuse {
			t.Errorf("cat %s: %v (%s)", p, d.Verdict, d.Reason)
		}
	}
	// A link out of the scratch directory is judged by where it leads.
	link := filepath.Join(e.Scratch, "out")
	if err := os.Symlink(filepath.Join(e.Data, "sessions"), link); err != nil {
		t.Fatal(err)
	}
	if d := g.Check(bg, file("fs-read", filepath.Join(link, "s1.json"))); d.Verdict != Refuse {
		t.Errorf("fs-read through a link out of the scratch directory: %v", d.Verdict)
	}
	// Credential-shaped names are refused there as anywhere.
	if d := g.Check(bg, file("fs-write", filepath.Join(e.Scratch, "id_rsa"))); d.Verdict != Refuse {
		t.Errorf("fs-write scratch/id_rsa: %v", d.Verdict)
	}
}

func TestFindAndGrepMayStartAboveADeniedDirectoryAndSkipIt(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(true)
	if d := g.Check(bg, Request{Tool: "fs-find", Args: map[string]any{"pattern": "*.conf", "path": e.Home}}); d.Verdict != Allow {
		t.Errorf("fs-find from the home directory in sandbox mode: %v (%s)", d.Verdict, d.Reason)
	}
	if d := g.Check(bg, Request{Tool: "index-grep", Args: map[string]any{"pattern": "x", "path": filepath.Join(e.Home, ".ssh")}}); d.Verdict != Refuse {
		t.Errorf("index-grep in ~/.ssh: %v", d.Verdict)
	}
	if ok, _ := g.Denylist().Denied(filepath.Join(e.Home, ".ssh", "known_hosts")); !ok {
		t.Error("fs-find would not skip ~/.ssh/known_hosts")
	}
}

func TestDenylistIgnoresLetterCaseInTheProtectedDirectories(t *testing.T) {
	e := newTestEnv(t)
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, p := range []string{
			filepath.Join(e.Home, ".SSH", "id_rsa"),
			filepath.Join(e.Home, ".Aws", "config"),
			filepath.Join(strings.ToUpper(e.Config), "config.toml"),
		} {
			if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse {
				t.Errorf("sandbox=%v fs-read %s: got %v (%s)", sandbox, p, d.Verdict, d.Reason)
			}
		}
	}
}

func TestAPathThroughADirectoryNotYetMadeIsJudgedAsTheToolOpensIt(t *testing.T) {
	e := newTestEnv(t)
	if err := os.Symlink(filepath.Join(e.Home, ".ssh"), filepath.Join(e.Folder, "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.Home, filepath.Join(e.Folder, "homelnk")); err != nil {
		t.Fatal(err)
	}
	// The file tools clean the path (filepath.Join) and make missing
	// directories, so newdir/../lnk/x is lnk/x: in ~/.ssh.
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, p := range []string{"newdir/../lnk/authorized_keys", "a/b/../../lnk/config"} {
			for _, tool := range []string{"fs-read", "fs-write"} {
				if d := g.Check(bg, file(tool, p)); d.Verdict != Refuse {
					t.Errorf("sandbox=%v %s %s: got %v (%s)", sandbox, tool, p, d.Verdict, d.Reason)
				}
			}
		}
		if d := g.Check(bg, shell("mkdir -p nd && cat nd/../lnk/config")); d.Verdict != Refuse {
			t.Errorf("sandbox=%v a line through a directory it makes: got %v (%s)", sandbox, d.Verdict, d.Reason)
		}
	}
	if d := e.guard(false).Check(bg, file("fs-read", "newdir/../homelnk/.bashrc")); d.Verdict != Refuse {
		t.Errorf("RepoPin: a path out through a link behind a missing directory: got %v (%s)", d.Verdict, d.Reason)
	}
	if d := e.guard(false).Check(bg, file("fs-write", "newdir/../internal/y.go")); d.Verdict != Allow {
		t.Errorf("a path inside: got %v (%s)", d.Verdict, d.Reason)
	}
}

func TestASearchPatternThroughALinkIntoAProtectedDirectoryIsRefused(t *testing.T) {
	e := newTestEnv(t)
	if err := os.Symlink(e.Home, filepath.Join(e.Folder, "homelnk")); err != nil {
		t.Fatal(err)
	}
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		for _, req := range []Request{
			{Tool: "fs-find", Args: map[string]any{"path": ".", "pattern": "homelnk/.ssh/*"}},
			{Tool: "index-grep", Args: map[string]any{"path": ".", "pattern": "BEGIN", "glob": "homelnk/.aws/*"}},
		} {
			if d := g.Check(bg, req); d.Verdict != Refuse {
				t.Errorf("sandbox=%v %v: got %v (%s)", sandbox, req.Args, d.Verdict, d.Reason)
			}
		}
		if d := g.Check(bg, Request{Tool: "fs-find", Args: map[string]any{"path": ".", "pattern": "internal/*.go"}}); d.Verdict != Allow {
			t.Errorf("sandbox=%v internal/*.go: got %v (%s)", sandbox, d.Verdict, d.Reason)
		}
	}
}

func TestTheUsersOwnHomeStaysDeniedWhenHOMEPointsElsewhere(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || u.HomeDir == "/" {
		t.Skip("no home directory in the password database")
	}
	e := newTestEnv(t) // HOME is a temporary directory
	for _, sandbox := range []bool{false, true} {
		g := e.guard(sandbox)
		p := filepath.Join(u.HomeDir, ".ssh", "id_rsa")
		if d := g.Check(bg, file("fs-read", p)); d.Verdict != Refuse {
			t.Errorf("sandbox=%v fs-read %s: %v (%s)", sandbox, p, d.Verdict, d.Reason)
		}
		if d := g.Check(bg, shell("cat "+p)); d.Verdict != Refuse {
			t.Errorf("sandbox=%v cat %s: %v (%s)", sandbox, p, d.Verdict, d.Reason)
		}
	}
}

// The credential names are matched as filepath.Match matches them, each
// glob and every name of a corpus made to sit at their edges.
func TestCredentialGlobsMatchAsFilepathMatch(t *testing.T) {
	names := []string{"", ".", "id_", "id_rsa", "id", "x_rsa", "_rsa", "rsa", ".env", ".env.", ".env.local", "a.env", "env",
		"credentials", "credentials.", "credentials.json", "credential", ".credentials", ".credentialsx", "secrets.", "secrets",
		".secrets", ".secretsfoo", "a.pem", ".pem", "pem", "x.key.bak", "key.pem.txt", ".netrc", "netrc", "_netrc", "x.p12",
		"main.go", "README.md", "id_rsa.pub", "a*b", "[x]", "?", "é.key", ".env.*"}
	for _, g := range credentialNames {
		names = append(names, g, g+"x", "x"+g, strings.ReplaceAll(g, "*", ""), strings.ReplaceAll(g, "*", "abc"))
	}
	for _, g := range append(append([]string(nil), credentialNames...), "a*b", "a?c", "[ab]*", "**") {
		c := compileNameGlob(g)
		for _, n := range names {
			want, _ := filepath.Match(g, n)
			if got := c.match(n); got != want {
				t.Errorf("glob %q, name %q: %v, filepath.Match says %v", g, n, got, want)
			}
		}
		if strings.Contains(g, "?") || strings.Count(g, "*") > 1 || (strings.Contains(g, "*") && !strings.HasPrefix(g, "*") && !strings.HasSuffix(g, "*")) {
			if !c.general {
				t.Errorf("glob %q is not matched by filepath.Match", g)
			}
		}
	}
}

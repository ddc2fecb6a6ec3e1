package egress

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAllowlistDecide(t *testing.T) {
	var a Allowlist
	if err := a.Add(
		Rule{Pattern: "*.Example.com", Source: "config.toml:2", Person: true},
		Rule{Pattern: "api.example.com", Source: "config.toml:2", Person: true},
		Rule{Pattern: "proxy.golang.org", Source: "go.mod: the Go module proxy"},
		Rule{Pattern: "[::1]", Source: "config.toml:2", Person: true},
	); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host         string
		allow, local bool
		rule         string
	}{
		{"proxy.golang.org", true, false, `"proxy.golang.org" from go.mod: the Go module proxy`},
		{"PROXY.golang.org.", true, false, `"proxy.golang.org" from go.mod`},
		{"a.example.com", true, false, `"*.example.com" from config.toml:2`},
		{"a.b.example.com", true, false, `"*.example.com"`},
		{"api.example.com", true, true, `"api.example.com" from config.toml:2`}, // the exact rule, though the pattern came first
		{"example.com", false, false, `no allowed host or pattern matches "example.com"`},
		{"badexample.com", false, false, "no allowed host"},
		{"example.com.evil.test", false, false, "no allowed host"},
		{"proxy.golang.org.evil.test", false, false, "no allowed host"},
		{"::1", true, true, `"::1"`},
	} {
		d := a.Decide(t.Context(), c.host, 443)
		if d.Allow != c.allow || d.Local != c.local || !strings.Contains(d.Rule, c.rule) {
			t.Errorf("%s: %+v, want allow %v local %v rule %q", c.host, d, c.allow, c.local, c.rule)
		}
	}
	var empty Allowlist
	if d := empty.Decide(t.Context(), "proxy.golang.org", 443); d.Allow {
		t.Error("the zero Allowlist allows")
	}
}

// A local service named with its port is allowed on that port alone; its
// rule shows the entry as the person wrote it, and is the person's (Local).
func TestAllowlistPort(t *testing.T) {
	var a Allowlist
	if err := a.Add(
		Rule{Pattern: "127.0.0.1:5432", Source: "config.toml", Person: true},
		Rule{Pattern: "localhost:3000", Source: "config.toml", Person: true},
		Rule{Pattern: "[::1]:8080", Source: "config.toml", Person: true},
	); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host  string
		port  int
		allow bool
		rule  string
	}{
		{"127.0.0.1", 5432, true, `"127.0.0.1:5432" from config.toml`},
		{"127.0.0.1", 5433, false, "no allowed host"},
		{"localhost", 3000, true, `"localhost:3000"`},
		{"localhost", 5432, false, "no allowed host"},
		{"::1", 8080, true, `"[::1]:8080"`},
		{"::1", 0, false, "no allowed host"},
	} {
		d := a.Decide(t.Context(), c.host, c.port)
		if d.Allow != c.allow || d.Allow && !d.Local || !strings.Contains(d.Rule, c.rule) {
			t.Errorf("%s:%d: %+v", c.host, c.port, d)
		}
	}
	if got := a.Rules()[2]; got.Pattern != "::1" || got.Port != 8080 || got.String() != "[::1]:8080" {
		t.Errorf("rule %+v %s", got, got)
	}
}

func TestCheckPattern(t *testing.T) {
	for _, p := range []string{"example.com", "*.example.com", "10.0.0.1", "::1", "[::1]", "localhost",
		"127.0.0.1:5432", "localhost:3000", "LOCALHOST:3000", "[::1]:8080", "127.0.0.2:80"} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for p, want := range map[string]string{
		"":                    "empty",
		"*":                   "not a host",
		"*.":                  "empty",
		"https://example.com": "without scheme",
		"example.com/x":       "not a host",
		"example.com:443":     "has a port",
		"10.0.0.1:80":         "a port goes only with a service on this machine's loopback",
		"127.0.0.1:0":         "has a port",
		"127.0.0.1:99999":     "has a port",
		"localhost:x":         "has a port",
		"*.localhost:80":      "has a port",
		"[fe80::1%lo]:80":     "has a port",
		"a.*.example.com":     "not a host",
	} {
		err := CheckPattern(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", p, err, want)
		}
	}
	var a Allowlist
	err := a.Add(Rule{Pattern: "ok.test"}, Rule{Pattern: "https://x", Source: "/home/p/config.toml:4"})
	if err == nil || !strings.HasPrefix(err.Error(), "/home/p/config.toml:4: ") || len(a.Rules()) != 0 {
		t.Errorf("Add: %v, %d rules", err, len(a.Rules()))
	}
}

func TestRemoteHost(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/nodwyn/nodwyn.git":       "github.com",
		"https://user:tok@GitLab.com:8443/x/y.git":   "gitlab.com",
		"http://git.test:8080/repo.git":              "git.test",
		"ssh://git@codeberg.org:2222/x/y.git":        "codeberg.org",
		"git://git.kernel.org/pub/scm/git/git.git":   "git.kernel.org",
		"git@github.com:nodwyn/nodwyn.git":           "github.com",
		"example.org:repo.git":                       "example.org",
		"[git@host6.test:22]:repo.git":               "host6.test",
		"[::1]:repo.git":                             "::1",
		"https://[2001:db8::1]/r.git":                "2001:db8::1",
		"/srv/git/repo.git":                          "",
		"../sibling":                                 "",
		"./a:b":                                      "",
		"file:///srv/git/repo.git":                   "",
		"ext::ssh -o ProxyCommand=evil host %S repo": "",
		"codecommit::us-east-1://repo":               "",
	} {
		if got := remoteHost(url); got != want {
			t.Errorf("remoteHost(%q) = %q, want %q", url, got, want)
		}
	}
}

func hosts(rules []Rule) []string {
	var h []string
	for _, r := range rules {
		h = append(h, r.Pattern)
	}
	return h
}

func TestDefaultsFromFolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	folder := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(folder, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("web/package.json", "{}\n")
	write(".npmrc", "; comment\nregistry=https://npm.evil.test/\n@corp:registry=https://npm.corp.test\n")
	write("node_modules/x/Cargo.toml", "") // what a tool downloaded says nothing
	write("requirements-dev.txt", "--index-url https://pypi.mirror.test/simple\nrequests\n")
	for _, args := range [][]string{
		{"init", "-q"},
		{"remote", "add", "origin", "https://github.com/nodwyn/nodwyn.git"},
		{"remote", "add", "lab", "git@gitlab.example:team/x.git"},
		{"remote", "add", "mirror", "ssh://git@codeberg.org:2222/x/y.git"},
		{"remote", "add", "local", "/srv/git/x.git"},
		{"remote", "set-url", "--push", "origin", "https://push.github.test/nodwyn/nodwyn.git"},
	} {
		cmd := exec.Command("git", append([]string{"-C", folder}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+folder)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	home := t.TempDir()
	allow, noted := Defaults(t.Context(), folder, []string{"HOME=" + home})
	got := hosts(allow)
	want := []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org", "pypi.org", "files.pythonhosted.org",
		"github.com", "push.github.test", "gitlab.example", "codeberg.org"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("defaults lack %s: %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("defaults %v, want %v", got, want)
	}
	for _, r := range allow {
		if r.Person || r.Source == "" {
			t.Errorf("rule %+v", r)
		}
	}
	if r := allow[slices.Index(got, "registry.npmjs.org")]; r.Source != filepath.Join("web", "package.json")+": the npm registry (npm's registry default)" {
		t.Errorf("npm's source: %q", r.Source)
	}
	if r := allow[slices.Index(got, "github.com")]; !strings.Contains(r.Source, `git remote "origin"`) {
		t.Errorf("origin's source: %q", r.Source)
	}
	if n := hosts(noted); !slices.Equal(n, []string{"npm.evil.test", "npm.corp.test", "pypi.mirror.test"}) {
		t.Errorf("noted %v", noted)
	} else if noted[0].Source != ".npmrc:2 (the folder's own file, so not allowed)" {
		t.Errorf("noted source %q", noted[0].Source)
	}

	// The defaults decide: the registry passes, the folder's .npmrc does
	// not.
	var a Allowlist
	if err := a.Add(allow...); err != nil {
		t.Fatal(err)
	}
	if !a.Decide(t.Context(), "proxy.golang.org", 443).Allow || a.Decide(t.Context(), "npm.evil.test", 443).Allow {
		t.Error("the defaults decide wrong")
	}
}

// The person's Go settings, from the environment or the go env file, are
// allowed beside the defaults (which a command that does not get them
// falls back to), GOPRIVATE's hosts with them.
func TestDefaultsGoSettings(t *testing.T) {
	folder := t.TempDir()
	os.WriteFile(filepath.Join(folder, "go.mod"), []byte("module m\n"), 0o644)
	allow, _ := Defaults(t.Context(), folder, []string{"GOPROXY=https://goproxy.corp.test/mod,direct", "GOSUMDB=off",
		"GOPRIVATE=git.corp.test/team,*.internal.test,github.com/me/*,*/x,"})
	if got := hosts(allow); !slices.Equal(got, []string{"goproxy.corp.test", "git.corp.test", "*.internal.test", "github.com", "proxy.golang.org", "sum.golang.org"}) ||
		!strings.Contains(allow[0].Source, "GOPROXY in nodwyn's environment") || !strings.Contains(allow[1].Source, "GOPRIVATE in nodwyn's environment") {
		t.Errorf("%+v", allow)
	}
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "go"), 0o755)
	os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOPROXY=https://athens.test\nGOSUMDB=sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ivk+jJ+c9KGGfUE https://sumproxy.test\n"), 0o644)
	allow, _ = Defaults(t.Context(), folder, []string{"XDG_CONFIG_HOME=" + cfg})
	if got := hosts(allow); !slices.Equal(got, []string{"athens.test", "sumproxy.test", "proxy.golang.org", "sum.golang.org"}) {
		t.Errorf("%v", got)
	}
	// No file of an ecosystem, no git: nothing.
	if allow, noted := Defaults(t.Context(), t.TempDir(), nil); len(allow)+len(noted) != 0 {
		t.Errorf("%v %v", allow, noted)
	}
}

// An ecosystem the run uses beside its folder (an MCP server started with
// npx) allows its registry, the rule saying who uses it; an empty folder
// allows none.
func TestDefaultsForAnEcosystemTheRunUses(t *testing.T) {
	folder := t.TempDir()
	if allow, _ := Defaults(context.Background(), folder, nil); len(allow) != 0 {
		t.Fatalf("an empty folder allows %v", allow)
	}
	allow, _ := Defaults(context.Background(), folder, nil, Use{Ecosystem: "npm", Source: "config.toml:4: the MCP server everything (npx)"})
	if len(allow) != 1 || allow[0].Pattern != "registry.npmjs.org" || !strings.HasPrefix(allow[0].Source, "config.toml:4: the MCP server everything (npx): ") {
		t.Errorf("allowed %+v", allow)
	}
}

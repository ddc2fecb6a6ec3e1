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

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setup returns dirs and a project folder, both empty, in a temp dir.
func setup(t *testing.T) (Dirs, string) {
	t.Helper()
	root := t.TempDir()
	dirs := Dirs{Config: filepath.Join(root, "config", "nodwyn"), Data: filepath.Join(root, "data", "nodwyn")}
	folder := filepath.Join(root, "project")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	return dirs, folder
}

func TestResolveDirsHonoursXDG(t *testing.T) {
	got := ResolveDirs(env(map[string]string{"XDG_CONFIG_HOME": "/x/conf", "XDG_DATA_HOME": "/y/data/"}), "/home/u")
	want := Dirs{Config: "/x/conf/nodwyn", Data: "/y/data/nodwyn"}
	if got != want {
		t.Errorf("ResolveDirs with XDG set = %+v, want %+v", got, want)
	}
}

func TestResolveDirsDefaultsUnderHome(t *testing.T) {
	for _, e := range []map[string]string{
		nil,
		{"XDG_CONFIG_HOME": "", "XDG_DATA_HOME": ""},
		{"XDG_CONFIG_HOME": "relative/conf", "XDG_DATA_HOME": "rel"}, // not absolute: ignored, as XDG says
	} {
		got := ResolveDirs(env(e), "/home/u")
		want := Dirs{Config: "/home/u/.config/nodwyn", Data: "/home/u/.local/share/nodwyn"}
		if got != want {
			t.Errorf("ResolveDirs(%v) = %+v, want %+v", e, got, want)
		}
	}
}

func TestLoadNoFilesIsEmpty(t *testing.T) {
	dirs, folder := setup(t)
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.File, File{}) || len(c.Sources) != 0 {
		t.Errorf("Load with no files = %+v, want zero", c)
	}
}

func TestLoadLayersFieldByField(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), `
[provider]
name = "openai"
model = "gpt-user"
base_url = "http://user.example/v1"

[loop]
profile = "full"

[limits]
max_tool_calls = 50
timeout = "30m"
`)
	write(t, ProjectConfig(folder), `
# the project picks its own model and profile, nothing else
[provider]
model = "gpt-project"
[loop]
profile = "mine"
[limits]
max_tool_calls = 10
`)
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := File{
		Provider: Provider{Name: "openai", Model: "gpt-project", BaseURL: "http://user.example/v1"},
		Loop:     Loop{Profile: "mine"},
		Limits:   Limits{MaxToolCalls: 10, Timeout: Duration(30 * time.Minute)}, // a project's may lower a limit (limits_test.go)
	}
	if !reflect.DeepEqual(c.File, want) {
		t.Errorf("layered =\n %+v\nwant\n %+v", c.File, want)
	}
	wantSources := []string{filepath.Join(dirs.Config, "config.toml"), ProjectConfig(folder)}
	if strings.Join(c.Sources, "|") != strings.Join(wantSources, "|") {
		t.Errorf("Sources = %q, want %q", c.Sources, wantSources)
	}
	if got, want := c.Origin["provider.model"], ProjectConfig(folder)+":4"; got != want {
		t.Errorf("Origin[provider.model] = %q, want %q", got, want)
	}
	if got, want := c.Origin["provider.name"], filepath.Join(dirs.Config, "config.toml")+":3"; got != want {
		t.Errorf("Origin[provider.name] = %q, want %q", got, want)
	}
	if c.Limits.Timeout.Std() != 30*time.Minute {
		t.Errorf("Timeout.Std() = %v", c.Limits.Timeout.Std())
	}
}

func TestLoadEnvironmentWinsOverFiles(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[provider]\nname = \"anthropic\"\nmodel = \"m1\"\n[loop]\nprofile = \"full\"\n")
	write(t, ProjectConfig(folder), "[provider]\nbase_url = \"http://project.example\"\n")
	c, err := Load(dirs, folder, env(map[string]string{
		"NODWYN_PROFILE":     "lean",
		"NODWYN_MODEL":       "m2",
		"ANTHROPIC_BASE_URL": "http://env.example",
		"OPENAI_BASE_URL":    "http://openai-not-used.example",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Provider{Name: "anthropic", Model: "m2", BaseURL: "http://env.example"}
	if c.Provider != want || c.Loop.Profile != "lean" {
		t.Errorf("got %+v profile %q, want %+v profile lean", c.Provider, c.Loop.Profile, want)
	}
	if c.Origin["provider.base_url"] != "env ANTHROPIC_BASE_URL" || c.Origin["loop.profile"] != "env NODWYN_PROFILE" {
		t.Errorf("Origin = %v", c.Origin)
	}
}

func TestLoadBaseURLEnvFollowsTheProvider(t *testing.T) {
	dirs, folder := setup(t)
	// The provider comes from the environment too, and picks which base URL
	// variable applies.
	c, err := Load(dirs, folder, env(map[string]string{
		"NODWYN_PROVIDER":    "openai",
		"OPENAI_BASE_URL":    "http://localhost:8080/v1",
		"ANTHROPIC_BASE_URL": "http://wrong.example",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.Name != "openai" || c.Provider.BaseURL != "http://localhost:8080/v1" {
		t.Errorf("Provider = %+v", c.Provider)
	}
	// A script provider reads neither.
	c, err = Load(dirs, folder, env(map[string]string{"NODWYN_PROVIDER": "script", "OPENAI_BASE_URL": "http://x"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.BaseURL != "" {
		t.Errorf("script provider took a base URL: %+v", c.Provider)
	}
}

func TestLoadWithoutFolderReadsOnlyUserConfig(t *testing.T) {
	dirs, _ := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[loop]\nprofile = \"full\"\n")
	c, err := Load(dirs, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Loop.Profile != "full" || len(c.Sources) != 1 {
		t.Errorf("got %+v", c)
	}
}

// loadErr loads a project file with text and returns the *Error.
func loadErr(t *testing.T, text string) (*Error, string) {
	t.Helper()
	dirs, folder := setup(t)
	p := ProjectConfig(folder)
	write(t, p, text)
	_, err := Load(dirs, folder, env(nil))
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

func TestLoadMalformedNamesFileLineAndKey(t *testing.T) {
	ce, msg := loadErr(t, "[provider]\nname = \"openai\"\nmodel = \"unterminated\n")
	if ce.Line != 3 || ce.Key != "provider.model" {
		t.Errorf("error %q: line %d key %q, want line 3 key provider.model", msg, ce.Line, ce.Key)
	}
	if !strings.Contains(msg, ":3:") || !strings.Contains(msg, "provider.model") {
		t.Errorf("message %q does not show line 3 and the key", msg)
	}
}

func TestLoadMalformedSyntaxWithoutKey(t *testing.T) {
	ce, msg := loadErr(t, "[loop]\nprofile = \"lean\"\n[limits\n")
	if ce.Line != 3 {
		t.Errorf("error %q: line %d, want 3", msg, ce.Line)
	}
}

func TestLoadWrongTypeNamesLineAndKey(t *testing.T) {
	ce, msg := loadErr(t, "[loop]\nprofile = \"lean\"\n\n[limits]\nmax_tool_calls = \"many\"\n")
	if ce.Line != 5 || ce.Key != "limits.max_tool_calls" || !strings.Contains(msg, "whole number") {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
	ce, msg = loadErr(t, "[limits]\ntimeout = 30\n")
	if ce.Line != 2 || ce.Key != "limits.timeout" || !strings.Contains(msg, `"30m"`) {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
	ce, msg = loadErr(t, "loop = \"lean\"\n")
	if ce.Line != 1 || ce.Key != "loop" || !strings.Contains(msg, "table") {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
}

func TestLoadBadDurationNamesLineAndKey(t *testing.T) {
	ce, msg := loadErr(t, "[limits]\nmax_tool_calls = 3\ntimeout = \"soon\"\n")
	if ce.Line != 3 || ce.Key != "limits.timeout" || !strings.Contains(msg, "30m") {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
	ce, msg = loadErr(t, "[limits]\ntimeout = \"-5m\"\n")
	if ce.Line != 2 || !strings.Contains(msg, "negative") {
		t.Errorf("error %q: line %d", msg, ce.Line)
	}
}

func TestLoadUnknownKeyNamesFileLineAndKey(t *testing.T) {
	ce, msg := loadErr(t, "[provider]\nname = \"openai\"\n\n# a comment\nmodle = \"gpt\"\n")
	if ce.Line != 5 || ce.Key != "provider.modle" {
		t.Errorf("error %q: line %d key %q, want line 5 key provider.modle", msg, ce.Line, ce.Key)
	}
	if !strings.Contains(msg, "unknown key") || !strings.Contains(msg, "provider.model") {
		t.Errorf("message %q should say unknown and list the known keys", msg)
	}
	// An unknown table, and a dotted key in a known one.
	ce, _ = loadErr(t, "[loop]\nprofile = \"x\"\n[extras]\nx = 1\n")
	if ce.Line != 3 || ce.Key != "extras" {
		t.Errorf("unknown table: line %d key %q", ce.Line, ce.Key)
	}
	ce, _ = loadErr(t, "[loop]\nprofile = \"x\"\nhooks.pre = \"y\"\n")
	if ce.Line != 3 || !strings.HasPrefix(ce.Key, "loop.hooks") {
		t.Errorf("unknown dotted key: line %d key %q", ce.Line, ce.Key)
	}
	// A key inside a multi-line string is not a key.
	ce, _ = loadErr(t, "[provider]\nmodel = \"\"\"\nfoo = 1\n\"\"\"\nfoo = 2\n")
	if ce.Line != 5 || ce.Key != "provider.foo" {
		t.Errorf("after a multi-line string: line %d key %q, want 5 provider.foo", ce.Line, ce.Key)
	}
}

func TestLoadRefusesRunProperties(t *testing.T) {
	for _, tc := range []struct {
		text, key string
		line      int
	}{
		{"yolo = true\n", "yolo", 1},
		{"[loop]\nprofile = \"lean\"\nunattended = true\n", "loop.unattended", 3},
		{"[provider]\nname = \"openai\"\n\n[run]\nsandbox = true\n", "run.sandbox", 5},
		{"sandbox = true\n", "sandbox", 1},
		{"[loop]\nYOLO = false\n", "loop.YOLO", 2},
		// Refused even when the value has the wrong type: the key is the problem.
		{"[limits]\nmax_tool_calls = \"x\"\nyolo = 1\n", "limits.yolo", 3},
	} {
		ce, msg := loadErr(t, tc.text)
		if ce.Line != tc.line || ce.Key != tc.key {
			t.Errorf("%q: line %d key %q, want %d %q (%s)", tc.text, ce.Line, ce.Key, tc.line, tc.key, msg)
		}
		if !strings.Contains(msg, "properties of a run, given by flags only") {
			t.Errorf("%q: message %q does not say these are flags only", tc.text, msg)
		}
	}
}

func TestLoadRefusesRunPropertiesInUserConfigToo(t *testing.T) {
	dirs, folder := setup(t)
	p := filepath.Join(dirs.Config, "config.toml")
	write(t, p, "[loop]\nsandbox = true\n")
	_, err := Load(dirs, folder, env(nil))
	if err == nil || !strings.HasPrefix(err.Error(), p+":2:") || !strings.Contains(err.Error(), "flags only") {
		t.Fatalf("Load = %v, want a refusal naming %s:2", err, p)
	}
}

func TestLoadSaysKeysBelongElsewhere(t *testing.T) {
	ce, msg := loadErr(t, "[provider]\nname = \"openai\"\napi_key = \"sk-secret-value\"\n")
	if ce.Line != 3 || ce.Key != "provider.api_key" || !strings.Contains(msg, "credentials.toml") {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
	if strings.Contains(msg, "sk-secret-value") {
		t.Errorf("message %q shows the secret", msg)
	}
}

func TestLoadQuotedKeysAreFound(t *testing.T) {
	ce, _ := loadErr(t, "[provider]\n\"name\" = \"openai\"\n'odd key' = 1\n")
	if ce.Line != 3 || ce.Key != `provider."odd key"` {
		t.Errorf("quoted key: line %d key %q", ce.Line, ce.Key)
	}
}

func TestLoadAcceptsInlineTablesAndDottedKeys(t *testing.T) {
	dirs, folder := setup(t)
	write(t, ProjectConfig(folder), "provider = { name = \"script\", script = \"replies.txt\" }\nloop.profile = \"full\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.Name != "script" || c.Provider.Script != "replies.txt" || c.Loop.Profile != "full" {
		t.Errorf("got %+v", c.File)
	}
}

func TestLoadUnreadableFileIsAnError(t *testing.T) {
	dirs, folder := setup(t)
	// A directory where the file should be cannot be read.
	if err := os.MkdirAll(ProjectConfig(folder), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dirs, folder, env(nil))
	if err == nil || !strings.Contains(err.Error(), ProjectConfig(folder)) {
		t.Fatalf("Load = %v, want an error naming the file", err)
	}
}

func TestAPIKeyLookupOrder(t *testing.T) {
	dirs, folder := setup(t)
	write(t, CredentialsPath(dirs), "[keys]\nopenai = \"sk-from-file\"\nanthropic = \"ak-from-file\"\n")

	for _, tc := range []struct {
		name, provider, keyEnv string
		env                    map[string]string
		want                   string
	}{
		{"default env var first", "openai", "", map[string]string{"OPENAI_API_KEY": "sk-env"}, "sk-env"},
		{"named env var", "openai", "MY_KEY", map[string]string{"MY_KEY": "sk-mine", "OPENAI_API_KEY": "sk-env"}, "sk-mine"},
		{"named env var empty: file, not the default var", "openai", "MY_KEY", map[string]string{"OPENAI_API_KEY": "sk-env"}, "sk-from-file"},
		{"file when env is empty", "openai", "", nil, "sk-from-file"},
		{"anthropic default", "anthropic", "", map[string]string{"ANTHROPIC_API_KEY": "ak-env"}, "ak-env"},
		{"anthropic file", "anthropic", "", nil, "ak-from-file"},
		{"no key anywhere", "script", "", nil, ""},
		{"no provider", "", "", nil, ""},
	} {
		got, err := APIKey(dirs, tc.provider, tc.keyEnv, env(tc.env))
		if err != nil || got != tc.want {
			t.Errorf("%s: APIKey = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	_ = folder
}

func TestAPIKeyNeverFromTheProjectFolder(t *testing.T) {
	dirs, folder := setup(t)
	// A project that carries credentials: none of them is used, whether the
	// folder is the working directory or not.
	write(t, filepath.Join(folder, ".nodwyn", "credentials.toml"), "[keys]\nopenai = \"sk-planted\"\n")
	write(t, filepath.Join(folder, "credentials.toml"), "[keys]\nopenai = \"sk-planted\"\n")
	t.Chdir(folder)
	got, err := APIKey(dirs, "openai", "", env(nil))
	if err != nil || got != "" {
		t.Errorf("APIKey = %q, %v; want no key", got, err)
	}
	// And the project's config cannot carry one either.
	write(t, ProjectConfig(folder), "[keys]\nopenai = \"sk-planted\"\n")
	if _, err := Load(dirs, folder, env(nil)); err == nil || !strings.Contains(err.Error(), "credentials.toml") {
		t.Errorf("Load of a project config with [keys] = %v, want a refusal pointing at credentials.toml", err)
	}
	// The user's credentials file is still used alongside.
	write(t, CredentialsPath(dirs), "[keys]\nopenai = \"sk-user\"\n")
	if got, err := APIKey(dirs, "openai", "", env(nil)); err != nil || got != "sk-user" {
		t.Errorf("APIKey = %q, %v; want sk-user", got, err)
	}
}

func TestAPIKeyMalformedCredentialsHidesTheText(t *testing.T) {
	dirs, _ := setup(t)
	write(t, CredentialsPath(dirs), "[keys]\nopenai = \"sk-secret-unterminated\n")
	_, err := APIKey(dirs, "openai", "", env(nil))
	if err == nil {
		t.Fatal("APIKey succeeded on a malformed file")
	}
	if !strings.HasPrefix(err.Error(), CredentialsPath(dirs)+":2") {
		t.Errorf("error %q does not name file and line 2", err)
	}
	if strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("error %q shows the file's text", err)
	}
	// An environment variable still wins without reading the file.
	if got, err := APIKey(dirs, "openai", "", env(map[string]string{"OPENAI_API_KEY": "sk-env"})); err != nil || got != "sk-env" {
		t.Errorf("APIKey with env = %q, %v", got, err)
	}
}

func TestAPIKeyCredentialsUnknownKeyAndType(t *testing.T) {
	dirs, _ := setup(t)
	write(t, CredentialsPath(dirs), "[keys]\nopenai = \"sk\"\n[other]\nx = \"y\"\n")
	if _, err := APIKey(dirs, "openai", "", env(nil)); err == nil || !strings.Contains(err.Error(), ":3: key other") {
		t.Errorf("APIKey = %v, want unknown key other at line 3", err)
	}
	write(t, CredentialsPath(dirs), "[keys]\nopenai = 42\n")
	if _, err := APIKey(dirs, "openai", "", env(nil)); err == nil || !strings.Contains(err.Error(), ":2: key keys.openai") {
		t.Errorf("APIKey = %v, want keys.openai at line 2", err)
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d.Std() != 90*time.Minute {
		t.Fatalf("UnmarshalText = %v, %v", d, err)
	}
	b, _ := d.MarshalText()
	if string(b) != "1h30m0s" {
		t.Errorf("MarshalText = %q", b)
	}
}

func TestRelativeConfigDirIsNeverRead(t *testing.T) {
	// Without HOME, ResolveDirs gives relative directories; read from the
	// working directory they would be the project's files.
	_, folder := setup(t)
	dirs := ResolveDirs(env(nil), "")
	if filepath.IsAbs(dirs.Config) {
		t.Fatalf("ResolveDirs with no home = %+v, expected relative", dirs)
	}
	write(t, filepath.Join(folder, dirs.Config, "credentials.toml"), "[keys]\nopenai = \"sk-planted\"\n")
	write(t, filepath.Join(folder, dirs.Config, "config.toml"), "[loop]\nprofile = \"planted\"\n")
	t.Chdir(folder)
	if got, err := APIKey(dirs, "openai", "", env(nil)); err != nil || got != "" {
		t.Errorf("APIKey = %q, %v; want no key", got, err)
	}
	c, err := Load(dirs, "", env(nil))
	if err != nil || c.Loop.Profile != "" || len(c.Sources) != 0 {
		t.Errorf("Load = %+v, %v; want nothing read", c, err)
	}
}

// A variable set to white space is unset, as an empty one is ("" and " "
// both leave the files' profile), and a value's surrounding white space
// (a .env file's trailing space or CR) is dropped.
func TestLoadEnvironmentBlankIsUnsetAndValuesAreTrimmed(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[loop]\nprofile = \"full\"\n[provider]\nname = \"openai\"\n")
	for _, blank := range []string{"", " ", "\t\r\n"} {
		c, err := Load(dirs, folder, env(map[string]string{"NODWYN_PROFILE": blank}))
		if err != nil {
			t.Fatal(err)
		}
		if c.Loop.Profile != "full" || strings.HasPrefix(c.Origin["loop.profile"], "env") {
			t.Errorf("NODWYN_PROFILE=%q: profile %q from %s", blank, c.Loop.Profile, c.Origin["loop.profile"])
		}
	}
	c, err := Load(dirs, folder, env(map[string]string{"NODWYN_PROVIDER": " openai\r", "NODWYN_MODEL": "gpt-4o ", "OPENAI_BASE_URL": "http://localhost:8080/v1\n", "NODWYN_PROFILE": " lean "}))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Provider{Name: "openai", Model: "gpt-4o", BaseURL: "http://localhost:8080/v1"}); c.Provider != want || c.Loop.Profile != "lean" {
		t.Errorf("got %+v profile %q", c.Provider, c.Loop.Profile)
	}
}

func TestLoadProviderTimeouts(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[provider]\nrequest_timeout = \"15m\"\nidle_timeout = \"45s\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.RequestTimeout.Std() != 15*time.Minute || c.Provider.IdleTimeout.Std() != 45*time.Second {
		t.Errorf("request_timeout %s idle_timeout %s", c.Provider.RequestTimeout, c.Provider.IdleTimeout)
	}
	ce, msg := loadErr(t, "[provider]\nname = \"openai\"\nidle_timeout = \"a while\"\n")
	if ce.Line != 3 || ce.Key != "provider.idle_timeout" || !strings.Contains(msg, "30m") {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
	ce, msg = loadErr(t, "[provider]\nrequest_timeout = 600\n")
	if ce.Line != 2 || ce.Key != "provider.request_timeout" || !strings.Contains(msg, `"30m"`) {
		t.Errorf("error %q: line %d key %q", msg, ce.Line, ce.Key)
	}
}

// [daemon] socket is the person's to choose: a project's config.toml
// naming one is not taken (a note says so), the person's is.
func TestOnlyThePersonsConfigChoosesTheDaemon(t *testing.T) {
	dirs, folder := setup(t)
	project := []byte("[daemon]\nsocket = \"/tmp/elsewhere.sock\"\n")
	c, err := LoadWith(dirs, folder, project, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Daemon.Socket != "" || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "only your own config.toml chooses the daemon") {
		t.Errorf("a project's socket: %q, notes %q", c.Daemon.Socket, c.Notes)
	}
	write(t, filepath.Join(dirs.Config, "config.toml"), "[daemon]\nsocket = \"/run/user/1/nodwyn/daemon.sock\"\n")
	c, err = LoadWith(dirs, folder, project, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Daemon.Socket != "/run/user/1/nodwyn/daemon.sock" || !strings.HasSuffix(c.Origin["daemon.socket"], "config.toml:2") {
		t.Errorf("the person's socket: %q from %q", c.Daemon.Socket, c.Origin["daemon.socket"])
	}
}

// [provider] context_window, [provider.prices] and [provider.compat] are
// read, a price as a whole number or not; a wrong type names the line.
func TestProviderWindowPricesCompat(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[provider]\ncontext_window = 32000\napi = \"responses\"\n[provider.prices]\ninput = 3\noutput = 15.5\n[provider.compat]\nmax_tokens_field = \"max_tokens\"\nno_stream_options = true\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Provider; p.ContextWindow != 32000 || p.API != "responses" || p.Prices != (Prices{Input: 3, Output: 15.5}) ||
		p.Compat != (Compat{MaxTokensField: "max_tokens", NoStreamOptions: true}) {
		t.Errorf("got %+v", p)
	}
	ce, msg := loadErr(t, "[provider.prices]\ninput = \"cheap\"\n")
	if ce.Line != 2 || ce.Key != "provider.prices.input" || !strings.Contains(msg, "a number") {
		t.Errorf("a price that is a string: %s", msg)
	}
	if ce, msg = loadErr(t, "[provider.prices]\noutput = -1\n"); ce.Line != 2 || !strings.Contains(msg, "0 or more") {
		t.Errorf("a negative price: %s", msg)
	}
}

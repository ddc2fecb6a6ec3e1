package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What commands may write and where they may connect are the person's to
// widen: a project's file is noted and not taken, and a contract that
// tries is refused.
func TestConfinementKeysAreThePersonsOnly(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\nwritable = [\"~/.local/share/tool\"]\nallow_hosts = [\"example.com\"]\nnetwork = \"proxy\"\n")
	write(t, ProjectConfig(folder), "[sandbox]\nwritable = [\"~\"]\nallow_hosts = [\"*.evil.example\"]\nnetwork = \"open\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Sandbox.Writable, []string{"~/.local/share/tool"}) || !reflect.DeepEqual(c.Sandbox.AllowHosts, []string{"example.com"}) || c.Sandbox.Network != "proxy" {
		t.Errorf("sandbox = %+v, want the person's values", c.Sandbox)
	}
	if len(c.Notes) != 3 {
		t.Errorf("notes = %q, want three saying the project's keys were not taken", c.Notes)
	}
	for _, n := range c.Notes {
		if !strings.Contains(n, "not taken") || !strings.Contains(n, ProjectConfig(folder)) {
			t.Errorf("note %q does not say the project's key was not taken", n)
		}
	}

	// A project alone opens nothing.
	dirs2, folder2 := setup(t)
	write(t, ProjectConfig(folder2), "[sandbox]\nnetwork = \"open\"\nwritable = [\"/\"]\n")
	c, err = Load(dirs2, folder2, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Network != "" || len(c.Sandbox.Writable) != 0 {
		t.Errorf("a project's keys were taken: %+v", c.Sandbox)
	}

	for _, key := range []string{"writable = [\"/srv\"]", "allow_hosts = [\"x.example\"]", "allow_ports = [5432]", "network = \"open\"", "namespaces = \"off\""} {
		p := filepath.Join(t.TempDir(), "contract.toml")
		write(t, p, "[[check]]\nname = \"unit\"\ncommand = \"true\"\n[sandbox]\n"+key+"\n")
		if _, err := LoadContract(p, false); err == nil || !strings.Contains(err.Error(), "only your own config.toml") {
			t.Errorf("contract with %s: err = %v, want a refusal", key, err)
		}
	}
}

func TestConfinementKeysNameTheLineOfABadValue(t *testing.T) {
	for _, bad := range []struct{ line, key string }{
		{`writable = ["relative/dir"]`, "sandbox.writable"},
		{`allow_hosts = ["https://example.com"]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["example.com:443"]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["*."]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["10.0.0.5:5432"]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["127.0.0.1:0"]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["localhost:99999"]`, "sandbox.allow_hosts"},
		{`allow_hosts = ["[fe80::1%lo]:80"]`, "sandbox.allow_hosts"},
		{`network = "closed"`, "sandbox.network"},
		{`namespaces = "no"`, "sandbox.namespaces"},
	} {
		dirs, folder := setup(t)
		write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\n"+bad.line+"\n")
		_, err := Load(dirs, folder, env(nil))
		var ce *Error
		if err == nil || !errors.As(err, &ce) || ce.Line != 2 || ce.Key != bad.key {
			t.Errorf("%s: err = %v, want an error at line 2 naming %s", bad.line, err, bad.key)
		}
	}
}

// A service on this machine's loopback is allowed by its port (the
// session forwards it into its namespace); addresses, IPv6's included, and
// names stay as they were.
func TestAllowHostsTakesALocalServiceByItsPort(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\nallow_hosts = [\"127.0.0.1:5432\", \"localhost:3000\", \"[::1]:8080\", \"::1\", \"192.0.2.7\", \"example.com\"]\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Sandbox.AllowHosts, " "); got != "127.0.0.1:5432 localhost:3000 [::1]:8080 ::1 192.0.2.7 example.com" {
		t.Errorf("allow_hosts = %s", got)
	}
}

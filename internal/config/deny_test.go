package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The person adds to the credential catalogue in their own config.toml;
// a project's file cannot (nor undo theirs), and a contract cannot either.
func TestSandboxDenyIsThePersonsOnly(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\ndeny = [\"~/.config/tool/token\", \"/srv/secrets\"]\n")
	write(t, ProjectConfig(folder), "[sandbox]\ndeny = []\nmode = \"no_sandbox\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"~/.config/tool/token", "/srv/secrets"}; !reflect.DeepEqual(c.Sandbox.Deny, want) {
		t.Errorf("deny = %q, want the person's %q", c.Sandbox.Deny, want)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "not taken") || !strings.Contains(c.Notes[0], ProjectConfig(folder)) {
		t.Errorf("notes = %q, want one saying the project's deny was not taken", c.Notes)
	}

	// A project alone cannot add either (nor does it fail the run).
	dirs2, folder2 := setup(t)
	write(t, ProjectConfig(folder2), "[sandbox]\ndeny = [\"~/x\"]\n")
	c, err = Load(dirs2, folder2, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sandbox.Deny) != 0 || len(c.Notes) != 1 {
		t.Errorf("a project's deny: deny = %q, notes = %q; want none taken, one note", c.Sandbox.Deny, c.Notes)
	}
}

func TestSandboxDenyNamesTheLineOfABadPath(t *testing.T) {
	for _, bad := range []string{`deny = ["relative/path"]`, `deny = ["/"]`, `deny = "~/x"`, `deny = [1]`} {
		dirs, folder := setup(t)
		write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\n"+bad+"\n")
		_, err := Load(dirs, folder, env(nil))
		var ce *Error
		if err == nil || !errors.As(err, &ce) || ce.Line != 2 || ce.Key != "sandbox.deny" {
			t.Errorf("%s: err = %v, want an error at line 2 naming sandbox.deny", bad, err)
		}
	}
}

func TestContractCannotDeny(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "contract.toml")
	write(t, p, "[[check]]\nname = \"unit\"\ncommand = \"true\"\n[sandbox]\ndeny = [\"~/x\"]\n")
	if _, err := LoadContract(p, false); err == nil || !strings.Contains(err.Error(), "only your own config.toml") {
		t.Errorf("contract with [sandbox] deny: err = %v, want a refusal", err)
	}
}

package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalogueParses(t *testing.T) {
	es := Catalogue()
	if len(es) < 40 {
		t.Fatalf("the catalogue has %d entries", len(es))
	}
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.Path] {
			t.Errorf("%s is in the catalogue twice", e.Path)
		}
		seen[e.Path] = true
	}
	for _, bad := range []string{"/abs dir x\n", "~/.x folder what\n", "~/.x dir\n"} {
		if _, err := parseCatalogue(bad); err == nil || !strings.Contains(err.Error(), "catalogue.txt:1") {
			t.Errorf("%q: err = %v, want one naming the line", bad, err)
		}
	}
}

// docs/sandbox.md lists every entry of the catalogue, as it is.
func TestDocsListTheCatalogue(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sandbox.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Catalogue() {
		kind := "file"
		if e.Dir {
			kind = "dir"
		}
		if row := "| `" + e.Path + "` | " + kind + " | " + e.What + " |"; !strings.Contains(string(b), row) {
			t.Errorf("docs/sandbox.md lacks the row %s", row)
		}
	}
}

// A refusal names the catalogue entry and where to read about it; the
// person's own entries are denied as the catalogue's are.
func TestRefusalsNameTheCatalogueEntry(t *testing.T) {
	home := t.TempDir()
	d := NewPathDenylist(Options{Folder: t.TempDir(), Home: home, Deny: []string{"~/.config/tool/token", "/srv/secrets"}})
	for path, want := range map[string]string{
		filepath.Join(home, ".netrc"):                          "~/.netrc in nodwyn's credential catalogue (logins for ftp, curl and git",
		filepath.Join(home, ".docker/config.json"):             "~/.docker/config.json in nodwyn's credential catalogue",
		filepath.Join(home, ".config/gh/hosts.yml"):            "~/.config/gh in nodwyn's credential catalogue",
		filepath.Join(home, ".config/tool/token"):              "listed in your config.toml's [sandbox] deny",
		"/srv/secrets/db.txt":                                  "listed in your config.toml's [sandbox] deny",
		filepath.Join(home, ".local/share/keyrings/x.keyring"): "GNOME keyrings",
	} {
		denied, why := d.Denied(path)
		if !denied || !strings.Contains(why, want) || !strings.Contains(why, "docs/sandbox.md") {
			t.Errorf("%s: denied=%v %q, want it naming %q", path, denied, why, want)
		}
	}
	for _, ok := range []string{filepath.Join(home, ".docker/contexts/meta.json"), filepath.Join(home, ".cargo/config.toml"), filepath.Join(home, ".config/ghostty/config")} {
		if denied, why := d.Denied(ok); denied {
			t.Errorf("%s: refused (%s), want allowed", ok, why)
		}
	}
}

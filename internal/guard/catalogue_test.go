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

// A $NAME entry is denied where the variable puts the tool's files: each
// path of a list, the entry's rest joined on, a relative path from where
// nodwyn started. Left out: an unset variable; a place that is the home,
// the folder or above them, also through a link; one inside the folder
// (the project's own file) or directly in /tmp. The tool's other files
// there stay ordinary.
func TestCatalogueFollowsTheVariablesThatMoveCredentials(t *testing.T) {
	root := t.TempDir()
	home, folder := filepath.Join(root, "home"), filepath.Join(root, "home", "src", "proj")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link-to-folder")
	if err := os.Symlink(folder, link); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	env := map[string]string{
		"CARGO_HOME":                     filepath.Join(root, "opt", "cargo"),
		"KUBECONFIG":                     filepath.Join(root, "k1") + "::relative/k2:" + filepath.Join(root, "etc", "k3"),
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(root, "keys", "sa.json"),
		"GNUPGHOME":                      home,                 // the home itself
		"PASSWORD_STORE_DIR":             root,                 // above the home
		"GH_CONFIG_DIR":                  folder + "/.gh",      // inside the folder
		"CLOUDSDK_CONFIG":                filepath.Dir(folder), // above the folder
		"AZURE_CONFIG_DIR":               link,                 // the folder through a link
		"PGPASSFILE":                     "/tmp/pgpass",        // directly in /tmp
	}
	d := NewPathDenylist(Options{Folder: folder, Home: home, Getenv: func(k string) string { return env[k] }})
	for path, want := range map[string]string{
		filepath.Join(root, "opt", "cargo", "credentials.toml"): "$CARGO_HOME/credentials.toml in nodwyn's credential catalogue",
		filepath.Join(root, "opt", "cargo", "credentials"):      "$CARGO_HOME/credentials in",
		filepath.Join(root, "k1"):                               "$KUBECONFIG in",
		filepath.Join(root, "etc", "k3"):                        "$KUBECONFIG in",
		filepath.Join(wd, "relative", "k2"):                     "$KUBECONFIG in",
		filepath.Join(root, "keys", "sa.json"):                  "a Google service account key",
	} {
		if denied, why := d.Denied(path); !denied || !strings.Contains(why, want) {
			t.Errorf("%s: denied %v (%s), want %q", path, denied, why, want)
		}
	}
	for _, path := range []string{
		filepath.Join(root, "opt", "cargo", "config.toml"), filepath.Join(root, "opt", "cargo", "registry", "x.crate"),
		filepath.Join(home, "notes.txt"), filepath.Join(folder, "main.go"), filepath.Join(root, "other.txt"),
		filepath.Join(folder, ".gh", "hosts.yml"), filepath.Join(link, "main.go"), "/tmp/pgpass",
		filepath.Join(root, "keys", "README"),
	} {
		if denied, why := d.Denied(path); denied {
			t.Errorf("%s is denied (%s)", path, why)
		}
	}
}

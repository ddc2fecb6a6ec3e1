package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A typo of a known key is answered with that key, not with all 29 of them.
func TestUnknownKeyDidYouMean(t *testing.T) {
	for _, c := range []struct {
		text, key, want string
		line            int
	}{
		{"[provider]\nname = \"openai\"\nmodle = \"gpt\"\n", "provider.modle", "unknown key provider.modle; did you mean provider.model?", 3},
		{"[provider]\nbase_ulr = \"http://x\"\n", "provider.base_ulr", "did you mean provider.base_url?", 2},
		// The words of key_env the other way round: not an API key.
		{"[provider]\nenv_key = \"MY_KEY\"\n", "provider.env_key", "did you mean provider.key_env?", 2},
		{"[limits]\nmax_tool_call = 5\n", "limits.max_tool_call", "did you mean limits.max_tool_calls?", 2},
		{"[provder]\nmodel = \"x\"\n", "provder", "did you mean provider?", 1},
		// A known key outside its table.
		{"model = \"gpt\"\n", "model", "did you mean provider.model (under [provider])?", 1},
		// A key's name holding a variable's name: key_env is meant.
		{"[provider]\napi_key = \"OPENAI_KEY_2\"\n", "provider.api_key", `write key_env = "OPENAI_KEY_2" under [provider]`, 2},
	} {
		ce, msg := loadErr(t, c.text)
		if ce.Key != c.key || ce.Line != c.line || !strings.Contains(msg, c.want) {
			t.Errorf("%q:\n got %q (key %q line %d)\nwant %q at key %s line %d", c.text, msg, ce.Key, ce.Line, c.want, c.key, c.line)
		}
		if !strings.HasPrefix(msg, ce.File+":") || strings.Contains(msg, "known keys are") || strings.Contains(msg, "credentials.toml") {
			t.Errorf("%q: %q should name the file first and neither list every key nor talk of API keys", c.text, msg)
		}
		if strings.Contains(msg, "key "+c.key+": ") {
			t.Errorf("%q: %q names the key twice", c.text, msg)
		}
	}
}

// With nothing near, the keys listed are those of the key's table; a
// secret under a secret's name is still told where keys go.
func TestUnknownKeyNothingNear(t *testing.T) {
	_, msg := loadErr(t, "[limits]\nbananas = 3\n")
	if !strings.Contains(msg, "the keys of [limits] are limits.max_tool_calls") || strings.Contains(msg, "provider.model") || strings.Contains(msg, "did you mean") {
		t.Errorf("got %q, want the keys of [limits] only", msg)
	}
	_, msg = loadErr(t, "[provider]\nsort_key = 3\n")
	if strings.Contains(msg, "credentials.toml") || !strings.Contains(msg, "the keys of [provider] are") {
		t.Errorf("a number under a name ending in _key is no API key: %q", msg)
	}
	_, msg = loadErr(t, "[provider]\ntoken = \"sk-abcdefghijklmnopqrstuvwxyz\"\n")
	if !strings.Contains(msg, "credentials.toml") || strings.Contains(msg, "sk-abc") {
		t.Errorf("a key in config.toml: %q", msg)
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		word  string
		cands []string
		want  string
	}{
		{"nosuch", []string{"lean", "full", "careful"}, ""},
		{"ful", []string{"lean", "full", "careful"}, "full"},
		{"carefull", []string{"lean", "full", "careful"}, "careful"},
		{"laen", []string{"lean", "full"}, "lean"},
		{"x", []string{"y"}, "y"},
		{"foo", []string{"api"}, ""},
	} {
		if got := Suggest(c.word, c.cands); got != c.want {
			t.Errorf("Suggest(%q, %v) = %q, want %q", c.word, c.cands, got, c.want)
		}
	}
}

// A project's .nodwyn/ is found from a subdirectory of its repository, as
// AGENTS.md is, and no further than the work tree's root.
func TestFindProjectFromSubdirectory(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, ".nodwyn"), sub, filepath.Join(root, ".nodwyn")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, looked := FindProject(sub)
	if dir != repo || !reflect.DeepEqual(looked, []string{sub, filepath.Join(repo, "a"), repo}) {
		t.Errorf("FindProject(%s) = %s, %v; want %s, looked in the three up to the root", sub, dir, looked, repo)
	}
	if got := ProjectConfig(sub); got != filepath.Join(repo, ".nodwyn", "config.toml") {
		t.Errorf("ProjectConfig = %s", got)
	}
	// The nearest wins.
	if err := os.MkdirAll(filepath.Join(repo, "a", ".nodwyn"), 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, _ := FindProject(sub); dir != filepath.Join(repo, "a") {
		t.Errorf("FindProject = %s, want the nearest, %s", dir, filepath.Join(repo, "a"))
	}
	// No work tree: the folder alone, never root's .nodwyn above it.
	loose := filepath.Join(root, "loose", "x")
	if err := os.MkdirAll(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, looked := FindProject(loose); dir != loose || len(looked) != 1 {
		t.Errorf("FindProject(%s) = %s, %v; want the folder alone", loose, dir, looked)
	}
	// Load layers the repository's config.toml from the subdirectory.
	write(t, filepath.Join(repo, ".nodwyn", "config.toml"), "[loop]\nprofile = \"lean\"\n")
	os.Remove(filepath.Join(repo, "a", ".nodwyn"))
	c, err := Load(Dirs{}, sub, env(nil))
	if err != nil || c.Loop.Profile != "lean" || c.Origin["loop.profile"] != filepath.Join(repo, ".nodwyn", "config.toml")+":2" {
		t.Errorf("Load from %s: %v, %+v", sub, err, c)
	}
}

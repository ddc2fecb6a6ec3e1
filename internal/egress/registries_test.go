package egress

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// personal is a temporary HOME and system directory for the person's
// package tools' configuration, and a folder of every ecosystem that
// reads it.
type personal struct {
	home, etc, folder string
}

func newPersonal(t *testing.T) *personal {
	t.Helper()
	p := &personal{home: t.TempDir(), etc: t.TempDir(), folder: t.TempDir()}
	old := etcDir
	etcDir = p.etc
	t.Cleanup(func() { etcDir = old })
	for _, f := range []string{"package.json", "requirements.txt"} {
		os.WriteFile(filepath.Join(p.folder, f), []byte("{}\n"), 0o644)
	}
	return p
}

func (p *personal) write(t *testing.T, path, content string) string {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The token a file holds, which no rule may carry.
const token = "npm_SECRETTOKEN123"

// The person's ~/.npmrc and pip.conf files name their registries: their
// hosts are allowed beside the tools' defaults, each rule naming the file
// and line it came from and nothing the line holds; tokens, auth lines and
// other keys give nothing.
func TestDefaultsPersonsRegistries(t *testing.T) {
	p := newPersonal(t)
	npmrc := p.write(t, filepath.Join(p.home, ".npmrc"), "; the person's\n"+
		"//npm.corp.test/:_authToken="+token+"\n"+
		"registry = \"https://npm.corp.test/\"\n"+
		"@team:registry=https://user:"+token+"@npm.team.test/\n"+
		"@env:registry=${NPM_MIRROR}/npm/\n"+
		"proxy=http://proxy.elsewhere.test/\n"+
		"always-auth=true\n")
	pipNew := p.write(t, filepath.Join(p.home, ".config", "pip", "pip.conf"), "[global]\n"+
		"timeout = 60\n"+
		"index-url = https://__token__:"+token+"@pypi.corp.test/simple\n"+
		"extra-index-url =\n"+
		"    https://extra1.test/simple\n"+
		"    https://extra2.test/simple\n"+
		"trusted-host = trusted.elsewhere.test\n")
	p.write(t, filepath.Join(p.home, ".pip", "pip.conf"), "[install]\nindex_url: https://legacy.test/simple\n")
	p.write(t, filepath.Join(p.etc, "pip.conf"), "[global]\nindex-url=https://system.test/simple\n")
	xdgDirs := t.TempDir()
	p.write(t, filepath.Join(xdgDirs, "pip", "pip.conf"), "[global]\nindex-url=https://xdg-system.test/simple\n")
	env := []string{"HOME=" + p.home, "XDG_CONFIG_DIRS=" + xdgDirs, "NPM_MIRROR=https://mirror.env.test"}
	allow, _ := Defaults(t.Context(), p.folder, env)
	got := hosts(allow)
	want := []string{"npm.corp.test", "npm.team.test", "mirror.env.test", "registry.npmjs.org",
		"xdg-system.test", "system.test", "legacy.test", "pypi.corp.test", "extra1.test", "extra2.test", "pypi.org", "files.pythonhosted.org"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %v\nwant %v", got, want)
	}
	for _, r := range allow {
		if strings.Contains(r.Source, token) || strings.Contains(r.Pattern, token) || strings.Contains(r.Source, "https://") {
			t.Errorf("a rule carries what the file holds: %+v", r)
		}
		if r.Person {
			t.Errorf("a default is the person's: %+v", r)
		}
	}
	if r := allow[0]; r.Source != "package.json: "+npmrc+":3 (your npm configuration)" {
		t.Errorf("source %q", r.Source)
	}
	if r := allow[slices.Index(got, "extra2.test")]; r.Source != "requirements.txt: "+pipNew+":4 (your pip configuration)" {
		t.Errorf("source %q", r.Source)
	}
	for _, h := range []string{"proxy.elsewhere.test", "trusted.elsewhere.test"} {
		if slices.Contains(got, h) {
			t.Errorf("%s (not a registry) is allowed", h)
		}
	}

	// PIP_CONFIG_FILE=/dev/null: pip reads no file, nor does this.
	allow, _ = Defaults(t.Context(), p.folder, append(env, "PIP_CONFIG_FILE=/dev/null"))
	if got := hosts(allow); slices.Contains(got, "pypi.corp.test") || !slices.Contains(got, "pypi.org") {
		t.Errorf("with PIP_CONFIG_FILE=/dev/null: %v", got)
	}
}

// The environment's settings, whatever npm's case, and the files they
// point at; the user config elsewhere (npm_config_userconfig), the global
// one under the prefix where node is on PATH; XDG_CONFIG_HOME's pip.conf
// and PIP_CONFIG_FILE.
func TestDefaultsRegistriesFromEnvironment(t *testing.T) {
	p := newPersonal(t)
	p.write(t, filepath.Join(p.home, ".npmrc"), "registry=https://not-read.test/\n")
	user := p.write(t, filepath.Join(t.TempDir(), "npmrc"), "registry=https://user-elsewhere.test/\n")
	prefix := t.TempDir()
	p.write(t, filepath.Join(prefix, "bin", "node"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(prefix, "bin", "node"), 0o755)
	p.write(t, filepath.Join(prefix, "etc", "npmrc"), "registry=https://global.test/\n")
	xdg := t.TempDir()
	p.write(t, filepath.Join(xdg, "pip", "pip.conf"), "[global]\nindex-url=https://xdg-home.test/simple\n")
	cfgFile := p.write(t, filepath.Join(t.TempDir(), "pip.ini"), "[global]\nindex-url=https://pip-config-file.test/simple\n")
	env := []string{"HOME=" + p.home, "XDG_CONFIG_DIRS=" + t.TempDir(), "PATH=/nonexistent:" + filepath.Join(prefix, "bin"),
		"NPM_CONFIG_REGISTRY=https://env-npm.test/", "npm_config_userconfig=" + user,
		"PIP_INDEX_URL=https://env-pip.test/simple", "PIP_EXTRA_INDEX_URL=https://env-extra1.test/ https://env-extra2.test/",
		"UV_DEFAULT_INDEX=https://env-uv.test/simple", "XDG_CONFIG_HOME=" + xdg, "PIP_CONFIG_FILE=" + cfgFile}
	allow, _ := Defaults(t.Context(), p.folder, env)
	got := hosts(allow)
	want := []string{"env-npm.test", "user-elsewhere.test", "global.test", "registry.npmjs.org",
		"env-pip.test", "env-extra1.test", "env-extra2.test", "env-uv.test", "xdg-home.test", "pip-config-file.test", "pypi.org", "files.pythonhosted.org"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %v\nwant %v", got, want)
	}
	if r := allow[0]; r.Source != "package.json: NPM_CONFIG_REGISTRY in nodwyn's environment" {
		t.Errorf("source %q", r.Source)
	}
	// Without an ecosystem's files, none of its settings.
	if allow, _ := Defaults(t.Context(), t.TempDir(), env); len(allow) != 0 {
		t.Errorf("%v", allow)
	}
}

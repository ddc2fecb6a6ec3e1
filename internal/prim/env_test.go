package prim

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=C",
		"TMPDIR=/tmp", "PWD=/somewhere", "OLDPWD=/before",
		"OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=ghp", "MY_SECRET=s", "DB_PASSWORD=p",
		"LC_API_KEY=allow-listed by LC_* but secret-shaped",
		"EDITOR=vi", "AWS_SESSION_TOKEN=t", "malformed", "=empty-name",
		"PATH=/usr/bin:/bin", // a repeated name keeps its last value
	}
	allow := append(DefaultOptions().EnvAllow, "PWD", "HOME_TOKEN_DIR")
	got := ScrubEnv(environ, allow)
	want := []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=C", "TMPDIR=/tmp"}
	if !slices.Equal(got, want) {
		t.Errorf("ScrubEnv:\n got %q\nwant %q", got, want)
	}
}

func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "anthropic_api_key": true, "KEYCHAIN": true, "GH_TOKEN": true,
		"CLIENT_SECRET": true, "PGPASSWORD": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"PATH": false, "HOME": false, "LANG": false, "TERM": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDefaultEnvAllow(t *testing.T) {
	allow := DefaultOptions().EnvAllow
	for _, name := range []string{"PATH", "HOME", "LANG", "LC_*", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ"} {
		if !slices.Contains(allow, name) {
			t.Errorf("EnvAllow lacks %s", name)
		}
	}
	if slices.Contains(allow, "PWD") {
		t.Error("EnvAllow has PWD")
	}
}

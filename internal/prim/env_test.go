package prim

import (
	"slices"
	"strings"
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
		// the wider list: words of a name, and parts
		"DB_PASS": true, "smtp_pass": true, "MYSQL_PWD": true, "BASIC_AUTH": true, "HTTP_AUTHORIZATION": true,
		"SSH_AUTH_SOCK": true, "GPG_PRIVATE": true, "SESSION_COOKIE": true, "SENTRY_DSN": true, "DSN": true,
		"AZURE_STORAGE_CONNECTION_STRING": true, "DB_CONN_STR": true, "SIGNING_PASSPHRASE": true,
		"PATH": false, "HOME": false, "LANG": false, "TERM": false,
		// the shell's directories are paths, whatever the word list says
		"PWD": false, "OLDPWD": false, "pwd": false,
		// words inside other words are not the word
		"GIT_AUTHOR_NAME": false, "GIT_ASKPASS": false, "BYPASS_CACHE": false, "COMPASS_DIR": false,
		"DATABASE_URL": false, "REDIS_URL": false, "OPENAI_BASE_URL": false, "HTTPS_PROXY": false,
		"XDG_SESSION_ID": false, "DBUS_SESSION_BUS_ADDRESS": false, "PRIVATEER": false, "NODWYN_TEST_PRIVATE_BUS": false, "PRIVATE_NETWORK": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// The value's shape: a key of a known provider, a URL with a password, a
// secret parameter, a PEM private key; and the ordinary values that share
// a prefix or a scheme with them and must pass.
func TestSecretValues(t *testing.T) {
	secret := []string{
		"postgres://u:pw@host/db",
		"postgresql://user:p%40ss@db.example.com:5432/app?sslmode=require",
		"https://user:password@host/v1",
		"redis://:hunter2@cache:6379/0",
		"amqp://guest:guest@rabbit:5672/",
		"mongodb+srv://app:s3cret@cluster0.example.net/test",
		"jdbc:postgresql://u:pw@h/db",
		"http://proxy.local:3128,https://u:p@other:8080", // any URL of a list
		"  https://user:password@host/v1\n",
		"postgresql:///db?host=/var/run/postgresql&password=x",
		"host=db user=app password=secret dbname=x",
		"Server=tcp:db,1433;Database=x;User ID=u;Password=pw;",
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc123==;",
		"https://acct.blob.core.windows.net/c?sv=2020-08-04&sig=abcDEF%3D",
		"http://localhost:8888/?token=0123abcd",
		// a secret parameter's name as the end of a longer one
		"https://api.example.com/v1?client_api_key=abc12345",
		"host=db user=app db_password=hunter2",
		"https://gitlab.example.com/api/v4/projects?private_token=glpat-abc",
		"https://x.example/hook?x.secret=abcdefgh",
		"https://npm.example.com/?_authToken=npm_abc", // npm's
		"https://api.example.com/?accessToken=abc12345", "dbPassword=hunter22",
		"https://api.example.com/?x-api-key=abc12345", "https://app.example/cb#access_token=abc12345",
		"a=1,db_password=hunter22", `"db_password=hunter22"`,
		"sk-" + strings.Repeat("a1B2", 12),
		"sk-proj-" + strings.Repeat("Ab3_-x", 8),
		"sk-ant-api03-" + strings.Repeat("xY9", 30),
		"sk-or-v1-" + strings.Repeat("0f", 32),
		"ghp_" + strings.Repeat("A1b2", 9),
		"gho_" + strings.Repeat("A1b2", 9),
		"ghu_" + strings.Repeat("A1b2", 9),
		"ghs_" + strings.Repeat("A1b2", 9),
		"ghr_" + strings.Repeat("A1b2", 9),
		"github_pat_11ABCDEFG0" + strings.Repeat("x_Y", 20),
		"glpat-" + strings.Repeat("aB3-", 5),
		"xoxb-123456789012-1234567890123-abcdefABCDEF",
		"xoxp-123-456-789-abcdef",
		"xapp-1-A0123-456-abcdef",
		"AKIAIOSFODNN7EXAMPLE",
		"ASIAIOSFODNN7EXAMPLE",
		"AIza" + strings.Repeat("a", 35),
		"hf_" + strings.Repeat("aB", 17),
		"npm_" + strings.Repeat("a1", 18),
		"pypi-AgEIcHlwaS5vcmc" + strings.Repeat("x", 60),
		"dop_v1_" + strings.Repeat("0a", 32),
		"SG." + strings.Repeat("a", 22) + "." + strings.Repeat("b", 43),
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	}
	for _, v := range secret {
		if !SecretValue(v) {
			t.Errorf("SecretValue(%q) = false, want true", v)
		}
	}
	ordinary := []string{
		"", "/usr/local/bin:/usr/bin:/bin", "/home/u", "C.UTF-8", "xterm-256color",
		"postgres:///db?host=/var/run/postgresql", // a local socket: no password
		"postgres://me@host/db",                   // a user, no password
		"postgres://me:@host/db",                  // an empty password
		"https://api.openai.com/v1", "http://127.0.0.1:8080/v1", "http://proxy.local:3128",
		"http://host:8080/path@with-at", // '@' after the authority
		"git@github.com:org/repo.git",
		"/home/u/sk-learn-experiments-folder/bin:/usr/bin", // a key's prefix in a path
		"sk-learn",              // too short to be a key
		"AKIAIOSFODNN7EXAMPLE2", // an AWS key id has 16 after its prefix
		"ghp_short",
		"-mod=mod", "--token=abc", "--api_key=abc", // a flag, not a parameter
		"https://x.example/?notoken=1&monkey=2", // a name that only ends in the letters
		"rs=0:di=01;34:ln=01;36:*.key=00;31",    // LS_COLORS
		"unix:path=/run/user/1000/bus,guid=0123456789abcdef",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
	}
	for _, v := range ordinary {
		if SecretValue(v) {
			t.Errorf("SecretValue(%q) = true, want false", v)
		}
	}
}

// The commands' environment: an allow-listed variable whose value is a
// secret is kept out as one whose name is; its ordinary neighbours pass.
func TestScrubEnvBySecretValue(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u",
		"DATABASE_URL=postgres://u:pw@host/db",
		"LOCAL_DATABASE_URL=postgres:///db?host=/var/run/postgresql",
		"OPENAI_BASE_URL=https://user:password@host/v1",
		"PLAIN_BASE_URL=https://api.openai.com/v1",
		"LC_PASTED=sk-ant-api03-" + strings.Repeat("xY9", 30),
		"LC_OK=C",
		"MYSQL_PWD=pw", "PWD=/w",
	}
	allow := []string{"PATH", "HOME", "LC_*", "DATABASE_URL", "LOCAL_DATABASE_URL", "OPENAI_BASE_URL", "PLAIN_BASE_URL", "MYSQL_PWD", "PWD"}
	got := ScrubEnv(environ, allow)
	want := []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LOCAL_DATABASE_URL=postgres:///db?host=/var/run/postgresql",
		"PLAIN_BASE_URL=https://api.openai.com/v1", "LC_OK=C"}
	if !slices.Equal(got, want) {
		t.Errorf("ScrubEnv:\n got %q\nwant %q", got, want)
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

// A toolchain's places pass to commands (an image's GOPATH=/go, a runner's
// RUSTUP_HOME), an index URL with a password in it does not, and nodwyn's
// own directories' variables stay out.
func TestToolchainPlacesPassToCommands(t *testing.T) {
	env := ScrubEnv([]string{
		"GOPATH=/go",
		"RUSTUP_HOME=/usr/local/rustup",
		"CARGO_HOME=/usr/local/cargo",
		"JAVA_HOME=/usr/lib/jvm/java-17",
		"GOPROXY=https://goproxy.example.com,direct",
		"npm_config_registry=https://npm.example.com/",
		"PIP_INDEX_URL=https://user:hunter2@pypi.example.com/simple",
		"PIP_EXTRA_INDEX_URL=https://glpat-abcdefghij0123456789@gitlab.example.com/api/v4/projects/1/packages/pypi/simple",
		"UV_INDEX_URL=https://pypi.example.com/simple?private_token=abc123",
		"GOSUMDB=sum.golang.org",
		"MAVEN_OPTS=-Dmaven.repo.password=hunter2",
		"GOFLAGS=-ldflags=-X=main.apiKey=abc123",
		"XDG_CONFIG_HOME=/home/p/.config",
		"XDG_DATA_HOME=/home/p/.local/share",
	}, DefaultOptions().EnvAllow)
	for _, want := range []string{"GOPATH=/go", "RUSTUP_HOME=/usr/local/rustup", "CARGO_HOME=/usr/local/cargo", "JAVA_HOME=/usr/lib/jvm/java-17",
		"GOPROXY=https://goproxy.example.com,direct", "npm_config_registry=https://npm.example.com/", "GOSUMDB=sum.golang.org"} {
		if !slices.Contains(env, want) {
			t.Errorf("%s did not pass: %q", want, env)
		}
	}
	for _, kv := range env {
		for _, gone := range []string{"PIP_INDEX_URL=", "PIP_EXTRA_INDEX_URL=", "UV_INDEX_URL=", "MAVEN_OPTS=", "GOFLAGS=", "XDG_CONFIG_HOME=", "XDG_DATA_HOME="} {
			if strings.HasPrefix(kv, gone) {
				t.Errorf("%s passed to commands", kv)
			}
		}
	}
}

// A registry's token where ToolchainEnv's URLs carry it when it is no
// password: the user name, a query, a parameter.
func TestToolchainURLsWithATokenAreDropped(t *testing.T) {
	for _, kv := range []string{
		"GOPROXY=https://x-access-token@proxy.corp.example/,direct",
		"GOPROXY=https://proxy.golang.org,https://ghp_abc@proxy.corp.example|direct",
		"npm_config_registry=https://npm.example.com/?_authToken=npm_abc",
		"npm_config_registry=https://npm.example.com/;_authToken=npm_abc",
		"PIP_INDEX_URL=https://ghp_abc@pypi.example.com/simple",
	} {
		if env := ScrubEnv([]string{kv}, DefaultOptions().EnvAllow); len(env) != 0 {
			t.Errorf("%s passed to commands", kv)
		}
	}
	for _, kv := range []string{"GOPROXY=https://proxy.golang.org,direct", "GOPROXY=off", "npm_config_registry=https://registry.npmjs.org/"} {
		if env := ScrubEnv([]string{kv}, DefaultOptions().EnvAllow); len(env) != 1 {
			t.Errorf("%s did not pass", kv)
		}
	}
}

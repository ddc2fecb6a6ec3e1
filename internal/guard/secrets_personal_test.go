package guard

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestRedactFindsPersonalCredentials: what a person's config files and
// shell history hold (issue 27: an AGENTS.md linked to ~/.docker/config.json,
// ~/.bash_history or rclone.conf reached the provider with these in it) is
// redacted, each with its kind; the text around it stays.
func TestRedactFindsPersonalCredentials(t *testing.T) {
	g := New(Options{Folder: t.TempDir(), Home: t.TempDir()})
	for _, c := range []struct {
		text, kind string
		gone       []string // what must not be left
		kept       []string // what must be
	}{
		// ~/.docker/config.json: auth is base64 of "alice:hunter2pw".
		{`{"auths": {"https://index.docker.io/v1/": {"auth": "YWxpY2U6aHVudGVyMnB3"}}}`, "docker-auth", []string{"YWxpY2U6aHVudGVyMnB3"}, []string{`"auths"`, "index.docker.io"}},
		{`{"auths": {"ghcr.io": {"auth":"YWxpY2U6aHVudGVyMg=="}}}`, "docker-auth", []string{"YWxpY2U6aHVudGVyMg"}, []string{"ghcr.io"}},
		{`"ghcr.io": {"identitytoken": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"}`, "docker-token", []string{"eyJhbGci"}, []string{"ghcr.io"}},
		{`{"RegistryToken": "opaque-registry-bearer-1"}`, "docker-token", []string{"opaque-registry-bearer-1"}, nil},
		// ~/.bash_history.
		{"mysql -u root -pS3cretPw shop", "password", []string{"S3cretPw"}, []string{"mysql -u root -p", " shop"}},
		{"mysqldump -uroot -p'my pw' shop > dump.sql", "password", []string{"my pw"}, []string{"> dump.sql"}},
		{"/usr/bin/mariadb -h db -P 3306 -u app -p\"pa$$\"", "password", []string{"pa$$"}, []string{"-P 3306"}},
		{"sshpass -p hunter2 ssh -p 22 alice@host", "password", []string{"hunter2"}, []string{"ssh -p 22 alice@host"}},
		{"sshpass -phunter2 scp f host:", "password", []string{"hunter2"}, nil},
		{"docker login -u alice -p hunter2 registry.example.com", "password", []string{"hunter2"}, []string{"registry.example.com"}},
		{"podman login --password hunter2 quay.io", "password", []string{"hunter2"}, []string{"quay.io"}},
		{"wget --user=alice --password=hunter2 https://example.com/f", "password", []string{"hunter2"}, []string{"--user=alice"}},
		{"mongosh --username admin --password hunter2 mongodb://db", "password", []string{"hunter2"}, []string{"mongodb://db"}},
		{"tool --db-password 'hunter 2' --verbose", "password", []string{"hunter 2"}, []string{"--verbose"}},
		{"curl -u alice:hunter2 https://api.example.com/x", "password", []string{"hunter2"}, []string{"alice", "https://api.example.com/x"}},
		{"curl -s --user 'alice:hunter2' https://api.example.com/x", "password", []string{"hunter2"}, nil},
		{"PGPASSWORD=hunter2 psql -h db -U app", "password", []string{"hunter2"}, []string{"psql -h db -U app"}},
		{"export MYSQL_PWD='hunter2'", "password", []string{"hunter2"}, []string{"export MYSQL_PWD="}},
		{"docker run -e POSTGRES_PASSWORD=hunter2 -p 5432:5432 postgres", "password", []string{"hunter2"}, []string{"-p 5432:5432"}},
		{"openssl enc -aes-256-cbc -pass pass:hunter2 -in f", "password", []string{"hunter2"}, []string{"-in f"}},
		// AWS: the id, and a secret written beside it or set by the CLI.
		{"AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "aws-secret-key", []string{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI"}, []string{","}},
		{`keys = ("ASIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")`, "aws-secret-key", []string{"IOSFODNN7EXAMPLE", "wJalrXUtnFEMI"}, []string{"keys = ("}},
		{"aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key", []string{"wJalrXUtnFEMI"}, []string{"aws configure set"}},
		{"ASIAIOSFODNN7EXAMPLE", "aws-access-key", []string{"IOSFODNN7EXAMPLE"}, nil},
		// ~/.config/rclone/rclone.conf.
		{"[box]\ntype = sftp\nuser = alice\npass = nBkRPCj1Hf4gTyHydKcPYb8H0V3L8g\n", "config-password", []string{"nBkRPCj1Hf4gTyHydKcPYb8H0V3L8g"}, []string{"user = alice"}},
		{"[drive]\ntype = drive\ntoken = {\"access_token\":\"ya29.a0\",\"token_type\":\"Bearer\",\"refresh_token\":\"1//0g\",\"expiry\":\"2025-01-01T00:00:00Z\"}\n", "oauth-token", []string{"ya29", "1//0g"}, []string{"type = drive"}},
		// ~/.git-credentials, a URL with a password, ~/.netrc.
		{"https://alice:ghs_short1@github.com\n", "url-password", []string{"ghs_short1"}, []string{"https://alice:", "@github.com"}},
		{"DATABASE_URL=postgres://app:hunter2@db:5432/shop", "url-password", []string{"hunter2"}, []string{"@db:5432/shop"}},
		{"machine example.com login alice password hunter2\n", "netrc-password", []string{"hunter2"}, []string{"machine example.com login alice"}},
		{"machine example.com\n  login alice\n  password hunter2\n", "netrc-password", []string{"hunter2"}, []string{"login alice"}},
	} {
		red := g.Redact(c.text)
		if !strings.Contains(red, "[REDACTED:"+c.kind+"]") {
			t.Errorf("Redact(%q) = %q, want a [REDACTED:%s]", c.text, red, c.kind)
		}
		for _, s := range c.gone {
			if strings.Contains(red, s) {
				t.Errorf("Redact(%q) = %q: %q left", c.text, red, s)
			}
		}
		for _, s := range c.kept {
			if !strings.Contains(red, s) {
				t.Errorf("Redact(%q) = %q: %q lost", c.text, red, s)
			}
		}
	}
}

// TestRedactLeavesOrdinaryNeighboursAlone: the options that mean a port or
// a flag, what stands for a password, and code that only names one are
// not redacted.
func TestRedactLeavesOrdinaryNeighboursAlone(t *testing.T) {
	g := New(Options{Folder: t.TempDir(), Home: t.TempDir()})
	for _, text := range []string{
		"mkdir -p build/out && cp -p a b",
		"ssh -p 22 alice@host",
		"scp -P 2222 f host:",
		"docker run -p 8080:80 -u 1000:1000 nginx",
		"docker login registry && docker run -p 8080:80 img",
		"echo \"$PW\" | docker login --password-stdin -u alice ghcr.io",
		"git push -u origin main",
		"mysql -u root -p shop",
		"mysql -u root -p\"$MYSQL_PASSWORD\" shop",
		"mysql -uroot -p$DB_PASS shop",
		"cc $(mysql_config --cflags) -pthread x.c",
		"sshpass -f pwfile ssh -p 22 host",
		"curl -u \"$USER:$TOKEN\" https://api.example.com",
		"curl -u alice https://api.example.com",
		"curl -o out -p http://localhost:8080/x",
		"python -m http.server 8000",
		`parser.add_argument("--password", help="the password")`,
		"usage: tool [--password PASSWORD] [--port PORT]",
		"tool --password=<your-password>",
		"tool --password ${PASSWORD}",
		"export DB_PASSWORD=$(cat /run/secrets/db)",
		"PWD=/home/alice OLDPWD=/tmp BYPASS=1",
		"postgres://app:${DB_PASSWORD}@db:5432/shop",
		"http://localhost:8080/path?q=1",
		"ssh://git@github.com:22/org/repo.git",
		"git@github.com:org/repo.git",
		`session = {"auth": "basic", "mode": "none"}`,
		`{"auth": "none"}`,
		`{"auth": "true"}`,
		`{"auth": ""}`,
		`encoded = "YWxpY2U6aHVudGVyMnB3"`, // base64 of user:pw, but not an auth
		`greeting = "aGVsbG8gd29ybGQ="`,
		"password = os.environ[\"PW\"]\npassword = get_password()\n",
		"    pass\n",
		"pass = 1\npassword = hunter2\n", // a human word is no obscured rclone pass
		"token = {\"a\": 1}\n",
		"The password is kept in the vault.\n",
		"Forgot your password? Reset it.\n",
		"AKIA_PREFIX = \"AKIA\"; AKIAFOO; TestAKIAIsDetected\n",
		`AWS_ACCESS_KEY_ID = "<your-aws-access-key-id>"`,
		`AWS_SECRET_ACCESS_KEY = "<your-aws-secret-access-key>"`,
	} {
		if got := g.Redact(text); got != text {
			t.Errorf("Redact(%q) = %q", text, got)
		}
	}
}

// TestPersonalPasswordsAreRedactedNotScanned: a person's passwords are
// kept from what the model reads, but the model typing or writing one a
// task gives it is not a security confirm (ingress-only patterns); a token
// shape found by the same new patterns is scanned both ways.
func TestPersonalPasswordsAreRedactedNotScanned(t *testing.T) {
	g := New(Options{Folder: t.TempDir(), Home: t.TempDir()})
	for _, line := range []string{
		"mysql -uroot -pexample -e 'select 1' shop",
		"PGPASSWORD=example psql -h localhost -U app -c 'select 1'",
		"sshpass -p example ssh -p 2222 test@localhost true",
	} {
		if g.Redact(line) == line {
			t.Errorf("Redact(%q) left it as it was", line)
		}
		if d := g.Check(bg, shell(line)); d.Checker == "ContentScan" {
			t.Errorf("%q: %v by the content scan (%s)", line, d.Verdict, d.Reason)
		}
	}
	for _, content := range []string{
		"machine localhost login test password example\n",
		`{"auths": {"localhost:5000": {"auth": "dGVzdDpleGFtcGxl"}}}`,
	} {
		req := Request{Tool: "fs-write", Args: map[string]any{"path": "cfg.json", "content": content}}
		if d := g.Check(bg, req); d.Checker == "ContentScan" {
			t.Errorf("writing %q: %v by the content scan (%s)", content, d.Verdict, d.Reason)
		}
	}
	const secretBesideID = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	if kind := NewContentScan(nil).Find(`"identitytoken": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"`); kind != "docker-token" {
		t.Errorf("a docker identity token written: %q, want docker-token", kind)
	}
	if kind := NewContentScan(nil).Find(secretBesideID); kind == "" {
		t.Errorf("an AWS key pair written: not found")
	}
}

// TestPlantedKeysCanBeReplaced is the sanitizing task (Terminal-Bench's
// "replace the API keys in this repository with placeholders"): the model
// reads the file with the keys redacted in place, so it sees which line
// holds which kind of key; writing the placeholders, or a sed that
// replaces the keys by pattern, is not a security confirm. (Redaction
// changes only what the model reads; the file keeps its keys until the
// model's edit removes them. A sed naming the literal key goes through in
// sandbox mode with the kernel floor: withoutRemovedKeys.)
func TestPlantedKeysCanBeReplaced(t *testing.T) {
	g := New(Options{Folder: t.TempDir(), Home: t.TempDir()})
	planted := `config = {"AWS_ACCESS_KEY_ID": "AKIA1234567890123456", "AWS_SECRET_ACCESS_KEY": "D4w8z9wKN1aVeT3BpQj6kIuN7wH8X0M9KfV5OqzF"}`
	want := `config = {"AWS_ACCESS_KEY_ID": "[REDACTED:aws-access-key]", "AWS_SECRET_ACCESS_KEY": "[REDACTED:aws-secret-key]"}`
	if got := g.Redact(planted); got != want {
		t.Errorf("the model reads\n%s\nwant\n%s", got, want)
	}
	fixed := `config = {"AWS_ACCESS_KEY_ID": "<your-aws-access-key-id>", "AWS_SECRET_ACCESS_KEY": "<your-aws-secret-access-key>"}`
	if d := g.Check(bg, Request{Tool: "fs-write", Args: map[string]any{"path": "config.py", "content": fixed}}); d.Verdict != Allow {
		t.Errorf("writing the placeholders: %v by %s (%s)", d.Verdict, d.Checker, d.Reason)
	}
	if d := g.Check(bg, Request{Tool: "fs-edit", Args: map[string]any{"path": "config.py", "old": "a", "new": fixed}}); d.Verdict != Allow {
		t.Errorf("editing in the placeholders: %v by %s (%s)", d.Verdict, d.Checker, d.Reason)
	}
	sed := `sed -i -E 's/AKIA[0-9A-Z]{16}/<your-aws-access-key-id>/g' config.py`
	if kind := NewContentScan(nil).Find(sed); kind != "" {
		t.Errorf("%s: the content scan finds %s", sed, kind)
	}
}

// TestLineWindowsFindWhatTheWholeTextDoes is the prefilter's check (as in
// TestSecretWindowsFindWhatTheWholeTextDoes) for the patterns that look at
// the lines holding their hints: on texts made of their pieces, they find
// exactly what they find in the whole text.
func TestLineWindowsFindWhatTheWholeTextDoes(t *testing.T) {
	frags := []string{
		"mysql", "mariadb-dump", "sshpass", "docker", "login", "curl", "-p", "-u", "-P", "--password", "--db-pass", "--user",
		"pass:", "-passin", "PGPASSWORD", "MYSQL_PWD", "_PASS", "PWD", "SSHPASS", "=", ":", "@", "://", "https", "machine",
		"password", "pass", "token", "\"auth\"", "\"identitytoken\"", "\"access_token\"", "{", "}", "\"", "'", "$", "-",
		" ", " ", "\t", "\n", "\n", "x", "alice", "hunter2", "YWxpY2U6aHVudGVyMnB3", "nBkRPCj1Hf4gTyHydKcPYb8H0V3L8g",
		"AKIA", "ASIA", "IOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key", ",", ";", "|",
		// Whole pieces, so that many texts hold a match and its edges.
		"mysql -u r -px", "sshpass -p x", "docker login -p x", " --password=x", " --password x", "curl -u a:b",
		"MYSQL_PWD=x", "://a:b@", "login a password b", "\npassword x\n", `"auth": "YWxpY2U6aHVudGVyMnB3"`,
		"\npass = nBkRPCj1Hf4gTyHydKcPYb8H0V3L8g", "\ntoken = {\"access_token\"}", "AKIAIOSFODNN7EXAMPLE,",
		"aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "-pass pass:x",
	}
	found := 0
	rng := rand.New(rand.NewSource(2))
	for n := 0; n < 10000; n++ {
		var b strings.Builder
		for k := rng.Intn(16); k >= 0; k-- {
			b.WriteString(frags[rng.Intn(len(frags))])
		}
		s := b.String()
		lowered := asciiLower(s)
		for i := range secretPatterns {
			p := &secretPatterns[i]
			if p.window == nil || reflect.ValueOf(p.window).Pointer() != reflect.ValueOf(lineWindow).Pointer() {
				continue
			}
			got := p.matches(s, lowered)
			whole := *p
			whole.window = nil
			want := whole.matches(s, lowered)
			if len(want) > 0 {
				found++
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pattern %s (%s) on %q: windows found %v, the whole text %v", p.kind, p.re.String(), s, got, want)
			}
		}
	}
	if found < 2000 {
		t.Fatalf("only %d texts had a match; the test proves little", found)
	}
}

package prim

import "strings"

// What makes a variable secret is decided here, once: ScrubEnv (the
// commands' environment) and nodwyn's start-up (internal/cli, which hides
// these from /proc/<nodwyn>/environ) and doctor read the same tables. A
// variable is secret by its name or by the shape of its value: a name says
// nothing about DATABASE_URL=postgres://u:pw@host/db or an OPENAI_BASE_URL
// with a password in it, and a key pasted into an oddly named variable is
// still a key.

// secretNameParts are parts of a variable's name, anywhere in it and in any
// case, that make it secret.
var secretNameParts = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
	"CONNECTION_STRING", "CONN_STR", "CONNSTR"}

// secretNameWords are words of a name (between '_', '-' or '.', or at its
// ends) that make it secret. As parts they would take too much: AUTH is in
// GIT_AUTHOR_NAME, PASS in BYPASS and GIT_ASKPASS (a program), PWD in
// OLDPWD.
var secretNameWords = []string{"PASS", "PWD", "AUTH", "AUTHORIZATION", "COOKIE", "COOKIES", "DSN"}

// secretLastWords are words that make a name secret only as its last word:
// GPG_PRIVATE names a private thing, while PRIVATE_NETWORK or
// NODWYN_TEST_PRIVATE_BUS only qualify what follows.
var secretLastWords = []string{"PRIVATE"}

// notSecretNames are names that match the words above and are never
// secret: the shell's working directories, paths every program may know.
var notSecretNames = map[string]bool{"PWD": true, "OLDPWD": true}

// SecretName reports whether a variable's name looks like it holds a
// secret: it has one of secretNameParts in it (*KEY*, *SECRET*, *TOKEN*,
// *PASSWORD*, *PASSWD*, *PASSPHRASE*, *CREDENTIAL*, *CONNECTION_STRING*,
// *CONN_STR*), or one of secretNameWords as a word (DB_PASS, MYSQL_PWD,
// BASIC_AUTH, SENTRY_DSN …), or ends in a word of secretLastWords
// (GPG_PRIVATE); never PWD or OLDPWD.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	if notSecretNames[u] {
		return false
	}
	for _, w := range secretNameParts {
		if strings.Contains(u, w) {
			return true
		}
	}
	words := strings.FieldsFunc(u, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for _, word := range words {
		for _, w := range secretNameWords {
			if word == w {
				return true
			}
		}
	}
	if len(words) > 0 {
		for _, w := range secretLastWords {
			if words[len(words)-1] == w {
				return true
			}
		}
	}
	return false
}

// charset is what the rest of a key after its prefix may hold.
type charset uint8

const (
	alnum      charset = iota // A-Z a-z 0-9
	tokenChars                // alnum, '-', '_'
	dotted                    // tokenChars and '.'
	upperNum                  // A-Z 0-9
	lowerHex                  // 0-9 a-f
)

func (c charset) has(b byte) bool {
	switch {
	case b >= '0' && b <= '9':
		return true
	case b >= 'a' && b <= 'f':
		return c != upperNum
	case b >= 'a' && b <= 'z':
		return c != upperNum && c != lowerHex
	case b >= 'A' && b <= 'Z':
		return c != lowerHex
	case b == '-' || b == '_':
		return c == tokenChars || c == dotted
	case b == '.':
		return c == dotted
	}
	return false
}

// keyShape is the shape of a provider's key: a fixed prefix, then between
// min and max (0: any number) characters of chars. A variable's whole value
// must have the shape; a path or a word that begins the same way does not
// (a directory sk-learn-data in PATH is not a key: '/' and ':' are in no
// charset).
type keyShape struct {
	prefix   string
	chars    charset
	min, max int
}

// keyShapes are the keys of the common providers and forges, by prefix.
var keyShapes = []keyShape{
	{"sk-", tokenChars, 20, 0},         // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-v1-), DeepSeek
	{"sk_live_", alnum, 16, 0},         // Stripe secret key
	{"sk_test_", alnum, 16, 0},         // Stripe test key
	{"rk_live_", alnum, 16, 0},         // Stripe restricted key
	{"ghp_", alnum, 30, 0},             // GitHub personal access token
	{"gho_", alnum, 30, 0},             // GitHub OAuth
	{"ghu_", alnum, 30, 0},             // GitHub user-to-server
	{"ghs_", alnum, 30, 0},             // GitHub server-to-server (Actions' GITHUB_TOKEN)
	{"ghr_", alnum, 30, 0},             // GitHub refresh token
	{"github_pat_", tokenChars, 30, 0}, // GitHub fine-grained token
	{"glpat-", tokenChars, 20, 0},      // GitLab personal access token
	{"glptt-", tokenChars, 20, 0},      // GitLab pipeline trigger token
	{"glrt-", tokenChars, 20, 0},       // GitLab runner token
	{"gldt-", tokenChars, 20, 0},       // GitLab deploy token
	{"xoxb-", tokenChars, 10, 0},       // Slack bot
	{"xoxp-", tokenChars, 10, 0},       // Slack user
	{"xoxa-", tokenChars, 10, 0},       // Slack app
	{"xoxe-", tokenChars, 10, 0},       // Slack refresh
	{"xapp-", tokenChars, 10, 0},       // Slack app-level
	{"AKIA", upperNum, 16, 16},         // AWS access key id
	{"ASIA", upperNum, 16, 16},         // AWS temporary access key id
	{"AIza", tokenChars, 35, 35},       // Google API key
	{"ya29.", dotted, 20, 0},           // Google OAuth access token
	{"GOCSPX-", tokenChars, 20, 0},     // Google OAuth client secret
	{"hf_", alnum, 30, 0},              // Hugging Face
	{"npm_", alnum, 36, 0},             // npm
	{"pypi-", tokenChars, 50, 0},       // PyPI
	{"dop_v1_", lowerHex, 64, 64},      // DigitalOcean personal token
	{"doo_v1_", lowerHex, 64, 64},      // DigitalOcean OAuth
	{"dor_v1_", lowerHex, 64, 64},      // DigitalOcean refresh
	{"SG.", dotted, 40, 0},             // SendGrid
	{"gsk_", alnum, 20, 0},             // Groq
	{"r8_", alnum, 20, 0},              // Replicate
	{"pplx-", alnum, 20, 0},            // Perplexity
	{"xai-", alnum, 20, 0},             // xAI
	{"hvs.", tokenChars, 20, 0},        // HashiCorp Vault service token
	{"dp.pt.", alnum, 40, 0},           // Doppler personal token
	{"dp.st.", dotted, 40, 0},          // Doppler service token
	{"shpat_", alnum, 32, 32},          // Shopify access token
	{"AGE-SECRET-KEY-1", upperNum, 50, 0},
}

// secretParams are names of parameters (?password=… in a URL, password=… in
// a libpq DSN, Password=…; in a .NET connection string, sig=… in an Azure SAS
// URL) whose values are secrets.
var secretParams = []string{"password", "passwd", "pwd", "secret", "client_secret", "token", "access_token",
	"auth_token", "authtoken", "accesstoken", "refreshtoken", "clientsecret", "refresh_token", "api_key", "api-key", "apikey", "accountkey", "sharedaccesskey", "sig",
	"x-amz-signature", "x-amz-security-token"}

// SecretValue reports whether a variable's value has the shape of a
// secret: a whole value that is a key of keyShapes; a URL whose user info
// holds a password (scheme://user:pass@host, scheme://:pass@host), a
// secretParams parameter with a value, or a PEM private key anywhere in
// it. A URL with a user and no password (postgres://me@host/db), or none at
// all (postgres:///db?host=/var/run/postgresql) is not secret.
func SecretValue(value string) bool {
	v := strings.TrimSpace(value)
	if len(v) < 8 {
		return false
	}
	for _, k := range keyShapes {
		if rest, ok := strings.CutPrefix(v, k.prefix); ok && keyRest(rest, k) {
			return true
		}
	}
	if strings.Contains(v, "://") && urlPassword(v) {
		return true
	}
	if strings.IndexByte(v, '=') >= 0 && secretParam(v) {
		return true
	}
	return strings.Contains(v, "-----BEGIN") && strings.Contains(v, "PRIVATE KEY-----")
}

func keyRest(rest string, k keyShape) bool {
	if len(rest) < k.min || (k.max > 0 && len(rest) > k.max) {
		return false
	}
	for i := range len(rest) {
		if !k.chars.has(rest[i]) {
			return false
		}
	}
	return true
}

// urlPassword reports whether a URL in v (any of them: a list, a JDBC
// URL's inner one) has a password in its user info.
func urlPassword(v string) bool {
	for rest := v; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		authority := rest
		if end := strings.IndexAny(authority, "/?# \t\n,;"); end >= 0 {
			authority = authority[:end]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if _, pass, ok := strings.Cut(authority[:at], ":"); ok && pass != "" {
				return true
			}
		}
	}
}

// secretParam reports whether v has one of secretParams with a value, as
// a parameter: at its start, or after '?', '&', ';' or white space.
func secretParam(v string) bool {
	low := strings.ToLower(v)
	for _, p := range secretParams {
		for off := 0; ; {
			i := strings.Index(low[off:], p+"=")
			if i < 0 {
				break
			}
			i += off
			off = i + len(p) + 1
			// The whole parameter's name: p, or a name that ends in p
			// after a _, - or . (client_api_key, db_password,
			// private_token, _authToken), starting with a letter or _
			// (--token=x is a flag) after the start or a separator.
			j := i
			for j > 0 && paramNameChar(low[j-1]) {
				j--
			}
			if j > 0 && !strings.ContainsRune("?&#,;\"' \t\n", rune(low[j-1])) {
				continue
			}
			// After a _, - or ., or glued on when the name is long
			// enough not to end other words (dbPassword, accessToken).
			if j < i && ((low[j] < 'a' || low[j] > 'z') && low[j] != '_' || !strings.ContainsRune("_-.", rune(low[i-1])) && len(p) < 8) {
				continue
			}
			if off < len(low) && !strings.ContainsRune("&; \t\n", rune(low[off])) {
				return true
			}
		}
	}
	return false
}

// paramNameChar reports whether c may be in a parameter's name.
func paramNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// Secret reports whether the variable name=value holds a secret, by its
// name (SecretName) or its value (SecretValue).
func Secret(name, value string) bool {
	return SecretName(name) || SecretValue(value)
}

// allowed reports whether name is on the allow-list: an exact name, or a
// prefix ending in '*' ("LC_*").
func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == a {
			return true
		}
	}
	return false
}

// ScrubEnv returns the entries of environ ("KEY=VALUE") whose names are on
// the allow-list, minus any that hold a secret (Secret: by its name, such
// as *KEY* or *TOKEN*, or by its value, such as a URL with a password or a
// provider's key) even when allow-listed. PWD and OLDPWD never pass: the
// shell sets them. A name that appears twice keeps its last value.
func ScrubEnv(environ []string, allow []string) []string {
	out := make([]string, 0, len(allow))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || name == "PWD" || name == "OLDPWD" {
			continue
		}
		if !allowed(name, allow) || Secret(name, value) || toolchainURLs[name] && urlWithUserOrQuery(value) {
			continue
		}
		out = setEnv(out, name, value)
	}
	return out
}

// setEnv sets name to value in env, replacing an earlier entry.
func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n == name {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

// toolchainURLs are the ToolchainEnv variables whose value is a URL, or a
// list of them (GOPROXY's "https://a,https://b|direct").
var toolchainURLs = map[string]bool{"GOPROXY": true, "GOSUMDB": true, "PIP_INDEX_URL": true, "PIP_EXTRA_INDEX_URL": true,
	"UV_INDEX_URL": true, "npm_config_registry": true}

// urlWithUserOrQuery reports whether v holds a URL with a user name
// (https://TOKEN@host) or with a query or parameters (?_authToken=…,
// ;token=…): where a registry's token goes when it is not a password.
func urlWithUserOrQuery(v string) bool {
	for _, u := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		_, rest, ok := strings.Cut(u, "://")
		if !ok {
			rest = u // GOSUMDB's "name+key url" and the like
		}
		authority := rest
		if i := strings.IndexAny(authority, "/?#;"); i >= 0 {
			authority = authority[:i]
		}
		if strings.Contains(authority, "@") || strings.ContainsAny(rest, "?;") {
			return true
		}
	}
	return false
}

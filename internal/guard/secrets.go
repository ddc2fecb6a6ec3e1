package guard

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nodwyn/nodwyn/internal/guard/bashread"
	"github.com/nodwyn/nodwyn/internal/roles"
)

// ContentScan is L1: what a file tool writes and what a command sends is
// scanned for credentials (private-key blocks, cloud and API token shapes,
// generic high-entropy key assignments, and the exact values nodwyn itself
// knows with their base64 and hex forms); a match is a security confirm.
// Redact replaces the same patterns in tool results and project
// instructions before the model reads them (ingress redaction), and with
// them a person's passwords as config files and shell history hold them
// (docker's auth, .netrc, rclone, mysql -pX, curl -u user:pw, URLs with a
// password), which only redaction looks for.
type ContentScan struct {
	// KeyRemovals, set in sandbox mode with the kernel floor on, lets a
	// command line through whose only credential is in the pattern of a
	// sed s command that removes it, or in what Python code replaces
	// (withoutRemovedKeys, blankPyRemovals).
	KeyRemovals bool

	exact []exactSecret
}

type exactSecret struct {
	kind  string
	value string
}

type secretPattern struct {
	kind  string
	re    *bashread.LazyRegexp
	group int  // the submatch that is the secret (0: the whole match)
	check bool // the secret must look random (entropy)
	// valid, when set, must say yes to the secret as well (a docker auth
	// is base64 of user:password; a password is not a $VARIABLE).
	valid func(string) bool
	// ingress: the pattern redacts what the model reads and is not part of
	// the scan of what is written or sent. It finds a person's own
	// passwords (on command lines, in .netrc, in URLs, docker's auth,
	// rclone's pass), often short words chosen by hand: the model cannot
	// learn them from what it reads once they are redacted, and typing or
	// writing one a task gives it (mysql -pexample for the task's test
	// database) is the work, not a leak. Token shapes are scanned both ways.
	ingress bool
	lower   bool     // matched against the text with ASCII letters lowered
	hints   []string // one of these must be in the text (lowered if lower)
	// window, when set, gives for a hint found at h the stretch of the
	// text every match through that hint lies in (ok false: none can).
	// The regexp then runs on those stretches only, not on the whole
	// text: the same matches, found many times faster in a long result
	// where the hint is a common word (key, token).
	window func(t string, h int, hint string) (lo, hi int, ok bool)
	// starts, when set, says a match begins within the window's first
	// bytes, up to the hint (no \b before it): the pattern is then tried
	// anchored at each of those places only.
	starts bool
	first  string // the bytes a match can begin with (with starts)
	anch   *bashread.LazyRegexp
}

func init() {
	for i := range secretPatterns {
		if p := &secretPatterns[i]; p.starts {
			p.anch = lazyRE(`^(?:` + p.re.String() + `)`)
		}
	}
}

var secretPatterns = []secretPattern{
	{kind: "private-key", re: lazyRE(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)`), hints: []string{"PRIVATE KEY"}},
	// The secret access key written beside its key id (an IAM CSV line,
	// "AKIA…", "…"): before aws-access-key, which replaces the id.
	{kind: "aws-secret-key", re: lazyRE(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b[^A-Za-z0-9/+=\n]{1,8}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), group: 1, check: true, hints: []string{"AKIA", "ASIA"}, window: lineWindow},
	{kind: "aws-access-key", re: lazyRE(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`), hints: []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"}, window: prefixWindow("")},
	{kind: "aws-secret-key", re: lazyRE(`aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([a-z0-9/+=]{40})\b`), group: 1, lower: true, hints: []string{"secret"}, window: assignmentWindow(4), starts: true, first: "a"},
	{kind: "github-token", re: lazyRE(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b`), hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, window: prefixWindow("")},
	{kind: "github-token", re: lazyRE(`\bgithub_pat_[A-Za-z0-9_]{22,}`), hints: []string{"github_pat_"}, window: prefixWindow("_")},
	{kind: "gitlab-token", re: lazyRE(`\bglpat-[A-Za-z0-9_\-]{20,}`), hints: []string{"glpat-"}, window: prefixWindow("_-")},
	{kind: "slack-token", re: lazyRE(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), hints: []string{"xox"}, window: prefixWindow("-")},
	{kind: "anthropic-key", re: lazyRE(`\bsk-ant-[A-Za-z0-9_\-]{20,}`), hints: []string{"sk-ant-"}, window: prefixWindow("_-")},
	{kind: "openai-key", re: lazyRE(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), hints: []string{"sk-"}, window: prefixWindow("_-")},
	{kind: "google-api-key", re: lazyRE(`\bAIza[0-9A-Za-z_\-]{35}`), hints: []string{"AIza"}, window: prefixWindow("_-")},
	{kind: "huggingface-token", re: lazyRE(`\bhf_[A-Za-z0-9]{30,}`), hints: []string{"hf_"}, window: prefixWindow("")},
	{kind: "npm-token", re: lazyRE(`\bnpm_[A-Za-z0-9]{36}`), hints: []string{"npm_"}, window: prefixWindow("")},
	// aws configure set aws_secret_access_key <key> (a shell history line).
	{kind: "aws-secret-key", re: lazyRE(`aws_?secret_?(?:access_?)?key["']?[ \t]+["']?([a-z0-9/+]{40})(?:[^a-z0-9/+=]|$)`), group: 1, check: true, lower: true, hints: []string{"secret"}, window: lineWindow},
	// ~/.docker/config.json (and podman's auth.json): "auth" is base64 of
	// user:password; identitytoken and registrytoken are tokens.
	{kind: "docker-auth", re: lazyRE(`"auth"[ \t]*:[ \t]*"([a-z0-9+/]+={0,2})"`), group: 1, lower: true, valid: basicAuth, ingress: true, hints: []string{`"auth"`}, window: lineWindow},
	{kind: "docker-token", re: lazyRE(`"(?:identitytoken|registrytoken)"[ \t]*:[ \t]*"([^"\s]{8,})"`), group: 1, lower: true, valid: plainValue, hints: []string{`"identitytoken"`, `"registrytoken"`}, window: lineWindow},
	// rclone.conf: pass = <obscured>, token = {"access_token": …}.
	{kind: "config-password", re: lazyRE(`(?m)^[ \t]*(?:pass|key_file_pass|password2?)[ \t]*=[ \t]*([^\s'"]+)[ \t]*$`), group: 1, check: true, lower: true, ingress: true, hints: []string{"pass"}, window: lineWindow},
	{kind: "oauth-token", re: lazyRE(`(?m)^[ \t]*token[ \t]*=[ \t]*(\{[^\n]*"(?:access|refresh)_token"[^\n]*\})[ \t]*$`), group: 1, hints: []string{`"access_token"`, `"refresh_token"`}, window: lineWindow},
	// Passwords on command lines (shell history), only where the option
	// means a password: mysql's -pPASS (joined; "-p db" asks for one and
	// names the database), sshpass -p, docker login -p, --password=X or
	// --password X (and --db-password, --passwd), curl -u user:pw,
	// openssl's pass:X, and NAME_PASSWORD=x, PGPASSWORD=x, MYSQL_PWD=x
	// assignments. -p elsewhere is a port or a flag (ssh -p 22, docker run
	// -p 8080:80, mkdir -p) and is left alone.
	{kind: "password", re: lazyRE(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlslap|mariadb|mariadb-dump|mariadb-admin|mariadb-import|mariadb-show|mariadb-check)[ \t][^\n;&|]*?[ \t]-p(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"mysql", "mariadb"}, window: lineWindow},
	{kind: "password", re: lazyRE(`\bsshpass(?:[ \t]+-[vP][^ \t\n]*)*[ \t]+-p[ \t]*(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"sshpass"}, window: lineWindow},
	{kind: "password", re: lazyRE(`\b(?:docker|podman|nerdctl|buildah|skopeo)[ \t]+login\b[^\n;&|]*?[ \t](?:-p[ \t]*|--password(?:[ \t]+|=))(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"login"}, window: lineWindow},
	{kind: "password", re: lazyRE(`(?m)(?:^|[ \t])--(?:[a-z0-9]+-)*pass(?:word|wd)?(?:=|[ \t]+)(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"pass"}, window: lineWindow},
	{kind: "password", re: lazyRE(`\bcurl\b[^\n;&|]*?[ \t](?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)?['"]?[^\s:'"]*:([^\s'"]+)`), group: 1, valid: plainValue, ingress: true, hints: []string{"curl"}, window: lineWindow},
	{kind: "password", re: lazyRE(`-pass(?:in|out)?[ \t]+pass:(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"pass:"}, window: lineWindow},
	{kind: "password", re: lazyRE(`\b(?:[A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE)|[A-Z0-9_]*_(?:PASS|PWD)|SSHPASS)=(` + cmdValue + `)`), group: 1, valid: plainValue, ingress: true, hints: []string{"PASS", "PWD"}, window: lineWindow},
	// scheme://user:password@host: a URL, a .git-credentials line.
	{kind: "url-password", re: lazyRE(`\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:'"]*:([^\s/?#@'"]+)@`), group: 1, valid: plainValue, ingress: true, hints: []string{"://"}, window: lineWindow},
	// .netrc: "password X" alone on its line, or after "login user".
	{kind: "netrc-password", re: lazyRE(`(?m)^[ \t]*password[ \t]+(\S+)[ \t]*$`), group: 1, valid: plainValue, ingress: true, hints: []string{"password"}, window: lineWindow},
	{kind: "netrc-password", re: lazyRE(`\blogin[ \t]+\S+[ \t]+password[ \t]+(\S+)`), group: 1, valid: plainValue, ingress: true, hints: []string{"password"}, window: lineWindow},
	{kind: "secret-assignment", re: lazyRE(`(?:api[_\-]?key|apikey|secret|token|passw(?:or)?d|access[_\-]?key|private[_\-]?key|auth[_\-]?key|credential)[a-z0-9_.\-]*["']?\s*[:=]\s*["']?([A-Za-z0-9+/_\-.=~]{16,})`), group: 1, check: true, lower: true,
		hints: []string{"key", "secret", "token", "passw", "credential"}, window: assignmentWindow(8), starts: true, first: "astpc"},
}

// cmdValue is an option's value on a command line: quoted, or a word up
// to the next blank or shell operator.
const cmdValue = `'[^'\n]*'|"[^"\n]*"|[^\s'"\x60;&|()<>]+`

// lineWindow is the window of a pattern whose matches lie on one line and
// hold their hint: the hint's line, with its newline (a pattern may end on
// the character after the secret).
func lineWindow(t string, h int, hint string) (int, int, bool) {
	lo := strings.LastIndexByte(t[:h], '\n') + 1
	hi := len(t)
	if j := strings.IndexByte(t[h+len(hint):], '\n'); j >= 0 {
		hi = h + len(hint) + j + 1
	}
	return lo, hi, true
}

// plainValue reports whether a password found on a command line or in a
// config file is one, not what stands for one: a $VARIABLE or $(command),
// a <placeholder>, {{template}}, %s, a mask (****), an option (-x), an
// upper-case metavariable (--password PASSWORD) or a value already
// redacted.
func plainValue(v string) bool {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if v == "" || strings.Trim(v, "*xX.") == "" {
		return false
	}
	switch {
	case strings.IndexByte("$`-<{%", v[0]) >= 0, strings.HasPrefix(v, "[REDACTED:"):
		return false
	}
	metavar := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			metavar = false
			break
		}
	}
	return !metavar
}

// basicAuth reports whether v is base64 of user:password, as a docker
// config's "auth" is: printable text with a colon after a user name. An
// "auth" key holding a word ("basic", "none") is not.
func basicAuth(v string) bool {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return false
		}
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(b) && bytes.IndexByte(b, ':') >= 1
}

// secret reports whether the matched v is a secret by the pattern's checks.
func (p *secretPattern) secret(v string) bool {
	return (!p.check || randomLooking(v)) && (p.valid == nil || p.valid(v))
}

// assignmentWindow is the secret-assignment pattern's window: the keyword
// starts at most 8 bytes before its hint (private_key), then come
// [a-z0-9_.-]*, a quote, spaces, ":" or "=", spaces, a quote and the
// value. Without the ":" or "=" no match goes through this hint.
func assignmentWindow(back int) func(t string, h int, hint string) (int, int, bool) {
	return func(t string, h int, hint string) (int, int, bool) {
		lo, hi, ok := assignmentSpan(t, h, hint)
		return max(0, lo-back), min(len(t), hi+1), ok
	}
}

func assignmentSpan(t string, h int, hint string) (int, int, bool) {
	i := h + len(hint)
	for i < len(t) && (isLowerAlnum(t[i]) || t[i] == '_' || t[i] == '.' || t[i] == '-') {
		i++
	}
	if i < len(t) && (t[i] == '"' || t[i] == '\'') {
		i++
	}
	for i < len(t) && isRESpace(t[i]) {
		i++
	}
	if i >= len(t) || (t[i] != ':' && t[i] != '=') {
		return 0, 0, false
	}
	i++
	for i < len(t) && isRESpace(t[i]) {
		i++
	}
	if i < len(t) && (t[i] == '"' || t[i] == '\'') {
		i++
	}
	for i < len(t) && (isLowerAlnum(t[i]) || strings.IndexByte("+/_-.=~", t[i]) >= 0) {
		i++
	}
	return h, i, true
}

// prefixWindow is the window of a token that starts with its hint and
// goes on in the given characters: one byte either side, for \b.
func prefixWindow(class string) func(t string, h int, hint string) (int, int, bool) {
	return func(t string, h int, hint string) (int, int, bool) {
		i := h + len(hint)
		for i < len(t) && (isAlnum(t[i]) || strings.IndexByte(class, t[i]) >= 0) {
			i++
		}
		return max(0, h-1), min(len(t), i+1), true
	}
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// isRESpace is RE2's \s: tab, newline, form feed, carriage return, space.
func isRESpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// asciiLower lowers ASCII letters only, so byte offsets stay the same.
func asciiLower(s string) string {
	b := []byte(s)
	changed := false
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
			changed = true
		}
	}
	if !changed {
		return s
	}
	return string(b)
}

// matches returns the submatch indexes of p in s (lowered is s lowered).
func (p *secretPattern) matches(s, lowered string) [][]int {
	return p.matchesIn(s, lowered, nil)
}

// impliedAbsent reports whether hint h (in the text lowered when key is
// "\x00") is known to be absent: a hint it holds is, in the same text or,
// for a hint in the text as it is, in the lowered text.
func impliedAbsent(absent map[string]bool, key, h string) bool {
	if absent[key+h] {
		return true
	}
	lh := asciiLower(h)
	for a := range absent {
		switch {
		case strings.HasPrefix(a, "\x00"):
			if strings.Contains(lh, a[1:]) {
				return true
			}
		case key == "" && strings.Contains(h, a):
			return true
		}
	}
	return false
}

// matchesIn is matches remembering in absent (when not nil) the hints the
// text does not hold: several patterns share a hint ("pass", "AKIA"), and
// looking for an absent one reads the whole text.
func (p *secretPattern) matchesIn(s, lowered string, absent map[string]bool) [][]int {
	t := s
	key := ""
	if p.lower {
		t, key = lowered, "\x00"
	}
	found := false
	for _, h := range p.hints {
		if absent != nil && impliedAbsent(absent, key, h) {
			continue
		}
		if strings.Contains(t, h) {
			found = true
			break
		}
		if absent != nil {
			absent[key+h] = true
		}
	}
	if !found {
		return nil
	}
	if p.window == nil {
		return p.re.FindAllStringSubmatchIndex(t, -1)
	}
	// The stretches around each hint that can hold a match, merged where
	// they overlap; a match found in one is a match in the text, and
	// every match in the text lies in one.
	var spans [][2]int
	var starts [][2]int // a place a match may begin, and the end of its window
	for _, h := range p.hints {
		for from := 0; ; {
			j := strings.Index(t[from:], h)
			if j < 0 {
				break
			}
			j += from
			from = j + 1
			if lo, hi, ok := p.window(t, j, h); ok {
				spans = append(spans, [2]int{lo, hi})
				if p.starts {
					for k := lo; k <= j; k++ {
						if strings.IndexByte(p.first, t[k]) >= 0 {
							starts = append(starts, [2]int{k, hi})
						}
					}
				}
			}
		}
	}
	if p.starts {
		// Leftmost first, as FindAll: the first place, in order, where
		// the pattern matches anchored, then on from where that match ends.
		sort.Slice(starts, func(i, j int) bool {
			if starts[i][0] != starts[j][0] {
				return starts[i][0] < starts[j][0]
			}
			return starts[i][1] > starts[j][1]
		})
		var out [][]int
		end, last := 0, -1
		for _, st := range starts {
			k := st[0]
			if k < end || k == last {
				continue // inside the last match, or tried with a wider window
			}
			last = k
			m := p.anch.FindStringSubmatchIndex(t[k:st[1]])
			if m == nil {
				continue
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += k
				}
			}
			out = append(out, m)
			end = max(m[1], k+1)
		}
		return out
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp[0] <= last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	var out [][]int
	for _, sp := range merged {
		for _, m := range p.re.FindAllStringSubmatchIndex(t[sp[0]:sp[1]], -1) {
			for k := range m {
				if m[k] >= 0 {
					m[k] += sp[0]
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// NewContentScan returns a scanner that also knows the given exact secret
// values (values shorter than 8 bytes are ignored).
func NewContentScan(secrets []string) *ContentScan {
	c := &ContentScan{}
	seen := map[string]bool{}
	add := func(kind, v string) {
		if len(v) >= 8 && !seen[v] {
			seen[v] = true
			c.exact = append(c.exact, exactSecret{kind, v})
		}
	}
	for _, s := range secrets {
		if len(s) < 8 {
			continue
		}
		add("known-secret", s)
		b := []byte(s)
		add("known-secret-hex", hex.EncodeToString(b))
		add("known-secret-hex", strings.ToUpper(hex.EncodeToString(b)))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			// The secret's base64 form at each of the three alignments it
			// can have inside a longer encoded text: only the characters
			// that depend on the secret alone.
			for k := 0; k < 3; k++ {
				e := enc.EncodeToString(append(make([]byte, k), b...))
				from := (8*k + 5) / 6
				to := 8 * (k + len(b)) / 6
				if to > from {
					add("known-secret-base64", e[from:to])
				}
			}
		}
	}
	// Longest first, so a form is replaced before a shorter one inside it.
	sort.SliceStable(c.exact, func(i, j int) bool { return len(c.exact[i].value) > len(c.exact[j].value) })
	return c
}

// Name is the checker's name.
func (c *ContentScan) Name() string { return "ContentScan" }

// Check scans what a tool writes (a parameter with roles.Content: fs-write's
// content, fs-edit's new) and what a command line sends.
func (c *ContentScan) Check(_ context.Context, req Request) Decision {
	for _, p := range rolesOf(req)[req.Tool] {
		if p.Role != roles.Content && p.Role != roles.Command {
			continue
		}
		text := argString(req, p.Param)
		what := map[string]string{"content": "the content to write", "new": "the replacement text"}[p.Param]
		switch {
		case p.Role == roles.Command:
			what = "the command line"
		case what == "":
			what = "the " + p.Param + " to write"
		}
		if kind := c.Find(text); kind != "" {
			if c.KeyRemovals && p.Role == roles.Command && c.Find(bashread.WithoutRemovedKeys(text)) == "" {
				continue // a sanitizing sed: the key is what it removes
			}
			return Decision{Verdict: SecurityConfirm, Checker: c.Name(), Reason: fmt.Sprintf(
				"%s contains what looks like a credential (%s); never write or send a secret: read it from an environment variable or a file the person names, or use a placeholder", what, kind)}
		}
	}
	return Decision{}
}

// Find returns the kind of the first credential found in s, or "". The
// ingress-only patterns (a person's passwords) are not looked for.
func (c *ContentScan) Find(s string) string {
	for _, e := range c.exact {
		if strings.Contains(s, e.value) {
			return e.kind
		}
	}
	lowered := asciiLower(s)
	absent := map[string]bool{}
	for i := range secretPatterns {
		p := &secretPatterns[i]
		if p.ingress {
			continue
		}
		for _, m := range p.matchesIn(s, lowered, absent) {
			lo, hi := m[2*p.group], m[2*p.group+1]
			if lo < 0 {
				continue
			}
			if p.secret(s[lo:hi]) {
				return p.kind
			}
		}
	}
	return ""
}

// Redact replaces every credential found in s with [REDACTED:kind], the
// ingress-only patterns' included. Only what the model and the log read
// changes; the file or output it came from stays as it was.
func (c *ContentScan) Redact(s string) string {
	for _, e := range c.exact {
		if strings.Contains(s, e.value) {
			s = strings.ReplaceAll(s, e.value, "[REDACTED:"+e.kind+"]")
		}
	}
	lowered := asciiLower(s)
	absent := map[string]bool{}
	for i := range secretPatterns {
		p := &secretPatterns[i]
		ms := p.matchesIn(s, lowered, absent)
		if len(ms) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, m := range ms {
			lo, hi := m[2*p.group], m[2*p.group+1]
			if lo < 0 || !p.secret(s[lo:hi]) {
				continue
			}
			b.WriteString(s[last:lo])
			b.WriteString("[REDACTED:" + p.kind + "]")
			last = hi
		}
		if last == 0 {
			continue // every match looked like a word, not a secret
		}
		b.WriteString(s[last:])
		s = b.String()
		lowered = asciiLower(s)
		clear(absent) // the markers put in may hold a hint
	}
	return s
}

// randomLooking reports whether a value looks like a generated secret
// rather than a word, a placeholder or a path: mixed character classes and
// enough entropy.
func randomLooking(v string) bool {
	if len(v) < 16 {
		return false
	}
	var lower, upper, digit int
	counts := map[rune]int{}
	for _, r := range v {
		counts[r]++
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		}
	}
	classes := 0
	for _, n := range []int{lower, upper, digit} {
		if n > 0 {
			classes++
		}
	}
	if classes < 2 || digit == 0 && classes < 3 {
		return false
	}
	var h float64
	n := float64(len([]rune(v)))
	for _, k := range counts {
		p := float64(k) / n
		h -= p * math.Log2(p)
	}
	return h >= 3.5
}

package bashread

// The interpreters (python, perl, ruby, node, …) and the code they are
// given: scanned for paths, denied names, decode-and-run and home paths put
// together from pieces, not interpreted.

import (
	"encoding/base64"
	"strings"
)

// code judges an interpreter's code string.
func (an *Reading) code(s string) {
	an.scanText(s, true)
	// Encoded literals are judged as the code they decode to.
	an.decodedLiterals(s)
	// String literals put together ('.s' + 'sh', "~/.s" "sh",
	// ''.join(['.','s','s','h'])) are judged joined: all of the code's
	// literals, one after another.
	an.j.Code(an, literalConcat(s), true)
	// Each pattern runs only where one of its literal parts is in the
	// code: a long script written by a here-doc stays within the bound.
	home := homeAccess.MatchString(s)
	switch {
	case home && containsAny(s, "walk(", "glob(", "scandir(", "listdir(", "readdir", "Dir.", "opendir(", "Find.find", "%", "{", "$") &&
		fileRead.MatchString(s) && (homePlaceholder.MatchString(s) || treeWalk.MatchString(s)):
		an.act(ActCodeFillsHome, an.prog, "")
	case containsAny(s, "decode", "hex", "zlib", "marshal", "pack(", "Buffer.from", "atob(") &&
		decodeExec.MatchString(s) && (execCall.MatchString(s) || openDecoded.MatchString(s)):
		an.act(ActCodeRunsDecoded, an.prog, "")
	case home && containsAny(s, "chr(", "ord(", "\\", "decode", "hex", "rot13", "[::-1]", "reverse", "fromCharCode", "pack(") && obfuscated.MatchString(s):
		an.act(ActCodeBuildsHome, an.prog, "")
	}
}

// decodedLiterals judges what base64 literals in text decode to.
func (an *Reading) decodedLiterals(text string) {
	for _, lit := range b64Literal.FindAllString(text, 64) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			if b, err := enc.DecodeString(lit); err == nil && printable(b) {
				an.scanText(string(b), true)
				break
			}
		}
	}
}

var (
	homePlaceholder = Lazy(`["']~/[^"'\n]*(?:%[sr]|\{)|\$\w+/\$\w+`)
	treeWalk        = Lazy(`\bwalk\(|\brglob\(|\bglob\(|\bscandir\(|\blistdir\(|readdirSync\(|\breaddir\(|Dir\.(?:glob|children|entries|each_child)|\bopendir\(|\bFind\.find`)
	fileRead        = Lazy(`\bopen\(|read_text|read_bytes|readFile|File\.read|file_get_contents|\bsystem\(|popen|subprocess|\bexec|` + "`" + `|copy|shutil|\bsend|urlopen|requests\.`)
	openDecoded     = Lazy(`(?:\bopen|readFile\w*|File\.read|file_get_contents)\s*\([^)]*(?:b64decode|b32decode|fromhex|unhexlify|atob|decode_base64|Buffer\.from)`)
	b64Literal      = Lazy(`[A-Za-z0-9+/]{6,}={0,2}`)
	decodeExec      = Lazy(`b64decode|b32decode|a85decode|fromhex|unhexlify|codecs\.decode|zlib\.decompress|marshal\.loads|pack\(["']H|decode_base64|Buffer\.from\([^)]*base64|atob\(`)
	execCall        = Lazy(`\bexec\(|\beval\b|\bcompile\(|Function\(|\bsystem\(|\bpopen|\bspawn|\bsubprocess\b|` + "`")
	homeAccess      = Lazy(`expanduser|homedir|Dir\.home|Path\.home|\$ENV\{\s*["']?HOME|ENV\[["']HOME|environ(?:\.get\(|\[)\s*["']HOME|getenv\(\s*["']HOME|process\.env\.HOME|\$HOME|(?:^|[\s(=,` + "`" + `])~(?:/|["'])|["']~/|` + tildeAsPath)
	// tildeAsPath is a string that is only "~" used where it makes a
	// path: a call's or a list's first item (expanduser('~'),
	// join('~', …), ['~', '.ssh']), concatenated with more ('~' + '/…',
	// "~" . "/…"), a format's argument (% '~', {'~'}), or a name's whole
	// value (h = '~'). A "~" that is a character of text, as a decoder's
	// stand-in for an unprintable byte ('~' if b > 126 else chr(b),
	// .replace('\x00', '~'), '~' * 40), is none of these.
	tildeAsPath = `[\[(]\s*[rRbBuUfF]?["']~["']\s*[,)\]]|["']~["']\s*(?:\+|\.\s*["'$@]|\.\s*(?:join|format)\b)|%\s*\(?\s*["']~["']|\{\s*["']~["']\s*\}|\w\s*=\s*[rRbBuUfF]?["']~["']\s*(?:[;\n]|$)`
	obfuscated  = Lazy(`\bchr\(|\bord\(|\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\u[0-9a-fA-F]{4}|b64decode|fromhex|unhexlify|rot13|\[::-1\]|\.reverse\(\)|reversed\(|String\.fromCharCode|\bpack\(`)
)

// printable reports whether decoded bytes look like text.
func printable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < 9 || (c > 13 && c < 32) || c > 126 {
			return false
		}
	}
	return true
}

// interp judges an interpreter: -c/-e code, a script file, code on its
// standard input.
func (an *Reading) interp(base string, args []string, stdin string) string {
	codeOpts := map[string]bool{"-c": true, "-e": true, "-E": true, "-r": true, "--eval": true, "-p": true, "--print": true}
	sawCode := false
	ro := UseOperand
	var rest []string
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case sawCode:
			rest = append(rest, a)
		case codeOpts[a] && j+1 < len(args):
			an.code(args[j+1])
			sawCode = true
			j++
		case strings.HasPrefix(a, "--eval="):
			an.code(strings.TrimPrefix(a, "--eval="))
			sawCode = true
		case (strings.HasPrefix(base, "perl") || base == "ruby") && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "eE") && j+1 < len(args):
			an.code(args[j+1])
			sawCode = true
			j++
		case a == "-m" && j+1 < len(args):
			if args[j+1] == "http.server" || args[j+1] == "SimpleHTTPServer" {
				ro = UseRecursive // it serves a whole tree
			}
			j++
			sawCode = true
		case (a == "-S" || a == "-t") && base == "php":
			ro = UseRecursive
		case a == "-" || a == "--":
		case strings.HasPrefix(a, "-"):
		default:
			an.judge(a, UseOperand)
			an.scriptFile(a, nil, false)
			sawCode = true
		}
	}
	// A script's or a module's arguments may be paths it reads or serves.
	an.operands(rest, ro)
	if ro == UseRecursive && len(an.operands(rest, UseMention)) == 0 && !hasAny(rest, "--directory", "-d") {
		an.judge(".", UseRecursive)
	}
	if !sawCode || hasAny(args, "-") {
		an.code(stdin)
	}
	return markBuilt
}

// literalConcat returns the contents of the string literals in code, one
// after another ('.s' + 'sh' gives .ssh).
func literalConcat(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for ; j < len(code) && code[j] != q && code[j] != '\n'; j++ {
			if code[j] == '\\' {
				j++
			}
		}
		if j >= len(code) || code[j] != q {
			continue // no closing quote on the line: not a literal
		}
		b.WriteString(code[i+1 : j])
		i = j
	}
	return b.String()
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

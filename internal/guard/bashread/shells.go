package bashread

// The shells and what runs a script: bash -c, eval, source, a script file, a
// here-doc fed to a shell, and the variables whose value is a command or a
// file the shell or the loader reads.

import (
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Variables whose value is a command the shell or a program runs.
var commandVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true,
	"GIT_EDITOR": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "PROMPT_COMMAND": true, "EDITOR": true,
	"VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true, "GIT_SEQUENCE_EDITOR": true, "RSYNC_RSH": true,
	"BROWSER": true, "PS0": true, "PS1": true, "PS4": true,
}

// Variables whose value names a file the shell or the loader reads.
var pathVars = map[string]bool{
	"BASH_ENV": true, "ENV": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"PYTHONSTARTUP": true, "PERL5LIB": true, "PERL5OPT": true, "RUBYOPT": true, "NODE_OPTIONS": true,
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true,
	"GNUPGHOME": true, "AWS_SHARED_CREDENTIALS_FILE": true, "AWS_CONFIG_FILE": true,
	"KUBECONFIG": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_AUTH_SOCK": true,
	"CURL_HOME": true, "WGETRC": true, "NETRC": true, "INPUTRC": true, "ZDOTDIR": true,
}

var pathListSep = Lazy(`[:\s]+`)

// varCarries judges a variable whose value carries a command or a path.
func (an *Reading) varCarries(name, v string) {
	switch {
	case commandVars[name] || strings.HasPrefix(name, "GIT_CONFIG_VALUE"):
		an.script(v, nil)
	case name == "GIT_CONFIG_PARAMETERS": // what git -c passes its children
		items, ok := gitConfigParameters(v)
		if !ok {
			an.uncertain = true
		}
		for _, it := range items {
			an.gitConfigKV(it[0], it[1])
		}
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"): // its value is GIT_CONFIG_VALUE_n's, judged as a command
		an.gitConfigKV(v, "")
	case name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG":
		// A configuration file git reads: what it sets (an alias, a pager,
		// a hook path) runs as -c would, unread.
		an.judge(v, UseOperand)
		if v != os.DevNull { // =/dev/null, to leave a person's configuration out, sets nothing
			an.act(ActGitHooks, "git", v)
		}
	case pathVars[name]:
		for _, p := range pathListSep.Split(v, -1) {
			p = strings.TrimPrefix(p, "--require=")
			if p != "" && !strings.HasPrefix(p, "-") {
				an.judge(p, UseOperand)
			}
		}
	}
}

// script judges text that a shell will run (bash -c, eval, a here-doc fed
// to a shell, a command-carrying option) with the given positional
// arguments; its output is returned.
func (an *Reading) script(text string, pos []string) string {
	return an.runScript(text, pos, false)
}

// scriptHere judges text the current shell runs (eval, source): its cd,
// assignments and functions stay in effect for the rest of the line.
func (an *Reading) scriptHere(text string, pos []string) string {
	return an.runScript(text, pos, true)
}

func (an *Reading) runScript(text string, pos []string, here bool) string {
	if strings.Contains(text, markBuilt) && encoderWords.MatchString(an.line) {
		an.act(ActDecodedScript, "", "")
	}
	if dotglobLine.MatchString(text) {
		an.dotglobSet = 2
	}
	if strings.Contains(text, markUnknown) || strings.Contains(text, markBuilt) {
		an.uncertain = true
		if strings.Contains(text, markBuilt) {
			an.built = true
		}
	}
	if an.depth >= maxDepth {
		an.uncertain = true
		return markUnknown
	}
	an.scanText(text, false)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		an.uncertain = true
		return markUnknown
	}
	an.promptExpansions(f)
	an.depth++
	defer func() { an.depth-- }()
	run := func() string {
		if pos != nil {
			an.pos = pos
		}
		out := an.stmts(f.Stmts, "")
		syntax.Walk(f, func(n syntax.Node) bool {
			if st, ok := n.(*syntax.Stmt); ok && !an.visited[st] {
				an.sub(func() string { return an.stmt(st, "") })
				return false
			}
			return true
		})
		return out
	}
	if here {
		saved := an.pos
		out := run()
		an.pos = saved
		return out
	}
	return an.sub(run)
}

// shell judges sh/bash: -c script, a script file, or the script on its
// standard input.
func (an *Reading) shell(base string, args []string, stdin string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")):
			if i+1 < len(args) {
				var pos []string
				if i+3 <= len(args) {
					pos = args[i+3:]
				}
				if pos == nil {
					pos = []string{}
				}
				return an.script(args[i+1], pos)
			}
			return ""
		case a == "-o" || a == "-O" || a == "--rcfile" || a == "--init-file":
			if i+1 < len(args) {
				an.judge(args[i+1], UseOperand)
			}
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if a == "-s" {
				return an.script(stdin, args[i+1:])
			}
		default:
			an.judge(a, UseOperand)
			an.scriptFile(a, args[i+1:], true)
			return markUnknown
		}
	}
	return an.script(stdin, []string{})
}

// maxScript is how much of a script file the analysis reads.
const maxScript = 64 << 10

// scriptFile judges what a script file that already exists will run: a
// shell script is walked as a line, other code is scanned like a
// one-liner's. Reading a file runs nothing.
func (an *Reading) scriptFile(name string, pos []string, shellScript bool) {
	an.scriptFileIn(name, pos, shellScript, false)
}

// scriptFileIn is scriptFile; with here the script runs in the current
// shell (source, .).
func (an *Reading) scriptFileIn(name string, pos []string, shellScript, here bool) {
	if name == "" || name == "-" || strings.Contains(name, markUnknown) || strings.Contains(name, markBuilt) {
		return
	}
	p := name
	if !filepath.IsAbs(p) {
		p = JoinRaw(an.cwd, p)
	}
	text := an.readFile(p)
	if strings.Contains(text, markUnknown) {
		return // missing, too large, a binary or denied
	}
	first, _, _ := strings.Cut(text, "\n")
	if strings.HasPrefix(first, "#!") {
		shellScript = shebangShell.MatchString(first)
	}
	// What a script does is read as Indirect: its paths are the
	// program's business, as any program's are (the guard judges only
	// what is off limits).
	an.j.Script(an, name, func() {
		an.indirect++
		unc, built := an.uncertain, an.built
		_, written := an.vfiles[an.abs(p)]
		switch {
		case shellScript && here:
			an.scriptHere(text, pos)
		case shellScript:
			an.script(text, pos)
		case written:
			// Code the line itself wrote is read as a one-liner's is.
			an.code(text)
		default:
			an.scanText(text, true)
		}
		an.uncertain, an.built = unc, built
		an.indirect--
	})
}

// encoderWords are the programs that turn an encoded text back into a
// script (a script from awk or sed is ordinary work: awk '{print "mv "$1}' | sh).
var encoderWords = Lazy(`\b(?:base64|base32|basenc|openssl|xxd|uudecode|gunzip|zcat|bzcat|xzcat|unxz|unzstd|zstdcat|uncompress)\b|\b(?:gzip|bzip2|xz|zstd)\s+(?:-\w*d|--decompress)`)

var shebangShell = Lazy(`^#!\s*\S*/(?:env\s+)?(?:ba|da|z|k|a|mk)?sh\b`)

// gitConfigParameters splits GIT_CONFIG_PARAMETERS as git reads it
// (config.c, git_config_from_parameters): items separated by white space
// (\r, \v and \f too), each 'key=value' (the key trimmed; it ends at the
// first =) or 'key'='value' (the key whole, = and all), single-quoted with
// \' for a quote. ok is false when the text does not parse (an
// unterminated quote), with the items read until then.
func gitConfigParameters(s string) (items [][2]string, ok bool) {
	const space = " \t\n\r\v\f"
	i := 0
	word := func() (string, bool) { // one quoted word: 'a'\''b'
		var b strings.Builder
		for i < len(s) && s[i] == '\'' {
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
				return b.String(), false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
			if strings.HasPrefix(s[i:], `\'`) {
				b.WriteByte('\'')
				i += 2
			}
		}
		return b.String(), true
	}
	old := func(item string) [2]string {
		k, v, _ := strings.Cut(item, "=")
		return [2]string{strings.TrimSpace(k), v}
	}
	for {
		for i < len(s) && strings.IndexByte(space, s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return items, true
		}
		if s[i] != '\'' { // not git's format: judged as an old-style item
			end := strings.IndexAny(s[i:], space)
			if end < 0 {
				end = len(s) - i
			}
			items = append(items, old(s[i:i+end]))
			i += end
			continue
		}
		first, done := word()
		if !done {
			return append(items, old(first)), false
		}
		if strings.HasPrefix(s[i:], "='") { // 'key'='value'
			i++
			v, done := word()
			items = append(items, [2]string{first, v})
			if !done {
				return items, false
			}
			continue
		}
		items = append(items, old(first))
	}
}

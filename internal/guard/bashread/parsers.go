package bashread

// The parsers of the programs whose arguments need code of their own
// (programs names them): git, tar, sed, grep, awk, find, the interpreters
// and the code they are given, the network tools, and the programs that
// print a credential without naming it.

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
)

// findCmd judges find: its roots, the files its actions write, and
// -exec's command with {} standing for anything under the roots. Its output
// is its roots, marked as trees.
func (an *Reading) findCmd(base string, args []string, stdin string) string {
	var roots []string
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!" {
		roots = append(roots, args[i])
		i++
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	for _, r := range roots {
		an.judge(r, UseOperand)
	}
	var out strings.Builder
	for _, r := range roots {
		out.WriteString(findTree(r) + "\n")
	}
	tree := strings.Fields(out.String())
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			cmd := args[i+1 : j]
			i = j
			for _, t := range tree {
				argv := make([]string, len(cmd))
				for k, c := range cmd {
					argv[k] = strings.ReplaceAll(c, "{}", t)
				}
				an.exec(argv, "")
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				an.judge(args[i+1], UseWrite)
				an.write(args[i+1])
				i++
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			if i+1 < len(args) {
				an.judge(args[i+1], UseOperand)
				i++
			}
		case "-delete":
			for _, r := range roots {
				an.write(r)
			}
		}
	}
	return out.String()
}

// findTree is what find prints of a root: the root, "/" and anything under
// it. A root that is wholly a value the analysis cannot know (find "$DIR",
// find $(cat dir.txt)) prints that unknown path and anything under it,
// not "/" and anything under it: an unset variable is the empty name,
// which find refuses, and a set one names what it names. A root the line
// writes with its own slash ("$DIR"/) keeps it, as rm -rf "$DIR"/ does.
func findTree(r string) string {
	if r != "" && strings.Trim(r, markUnknown+markBuilt) == "" {
		return r + markTree
	}
	return strings.TrimSuffix(r, "/") + "/" + markTree
}

// The options of git's subcommands: those that run a command or set a
// configuration value, and what a local clone's source is not.
var (
	gitRoles      = optRoles("run: --upload-pack --receive-pack --exec", "value: -c --config")
	gitFetchRoles = optRoles("run: --upload-pack --receive-pack --exec -u", "value: -c --config",
		"text: -b --branch -o --origin --depth --reference -j --jobs --template --separate-git-dir --filter")
)

// gitCommandKeys are git configuration keys whose value is a command (or a
// path whose content runs).
var gitCommandKeys = Lazy(`(?i)^(core\.(fsmonitor|pager|sshcommand|editor|askpass|hookspath|gitproxy|worktree)|diff\..*\.(command|textconv)|diff\.external|merge\..*\.driver|filter\..*\.(clean|smudge|process)|sequence\.editor|credential\..*helper|credential\.helper|uploadpack\.packobjectshook|pager\..*|alias\..*|gpg\.program|gpg\..*\.program|protocol\..*|remote\..*\.(uploadpack|receivepack|proxy)|url\..*|http\..*\.(sslcert|sslkey|cookiefile)|http\.(sslcert|sslkey|cookiefile)|include\.path|includeif\..*)$`)

// git judges git: -C, -c with command-carrying keys, --upload-pack and its
// kin, ext:: transports, and git push as a hard trigger.
func (an *Reading) git(base string, args []string, stdin string) string {
	saved, savedOK := an.cwd, an.cwdOK
	defer func() { an.cwd, an.cwdOK = saved, savedOK }()
	rest := an.opts(args, roleRest, lookup(base).roles, func(opt string, r Use, v string) {
		switch {
		case r == roleCwd:
			an.judge(v, UseOperand)
			an.setCwd(v)
		case opt == "-c":
			an.gitConfig(v)
		case r == roleValue: // --config-env: a value from the environment
			an.uncertain = true
		}
	})
	if len(rest) == 0 {
		return ""
	}
	sub, rest := rest[0], rest[1:]
	if len(an.progs) < 256 {
		an.progs = append(an.progs, "git "+sub)
	}
	roles := gitRoles
	switch sub {
	case "fetch", "clone", "pull", "ls-remote":
		roles = gitFetchRoles
	}
	plain := an.opts(rest, roleNone, roles, func(_ string, r Use, v string) {
		if r == roleValue {
			an.gitConfig(v)
		}
	})
	for _, a := range plain {
		if c, ok := strings.CutPrefix(a, "ext::"); ok {
			an.script(strings.ReplaceAll(c, "% ", " "), nil)
		} else if strings.HasPrefix(a, "fd::") {
			an.uncertain = true
		}
	}
	if why := gitDestructive(sub, rest); why != "" {
		an.act(ActGitLoses, sub, why)
	}
	switch sub {
	case "push":
		an.act(ActGitPush, sub, "")
	case "config":
		var kv []string
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				kv = append(kv, a)
			}
		}
		if len(kv) >= 2 {
			an.gitConfig(kv[0] + "=" + strings.Join(kv[1:], " "))
		}
		for j, a := range rest {
			if (a == "-f" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], UseWrite)
			}
		}
		return markUnknown
	case "clone", "fetch", "pull", "ls-remote", "submodule", "remote":
		an.act(ActGitRemote, sub, "")
		if sub == "clone" {
			// A local clone copies the whole repository it names.
			if len(plain) > 0 && !strings.Contains(plain[0], "://") && !strings.Contains(plain[0], "@") {
				an.judge(plain[0], UseRecursive)
			}
		}
	case "commit", "tag":
		// -m and -F: the message is text; -F's file is read.
		for j, a := range rest {
			if (a == "-F" || a == "--file") && j+1 < len(rest) {
				an.judge(rest[j+1], UseOperand)
			}
		}
		return markUnknown
	case "show", "archive", "cat-file", "bundle", "format-patch", "blame", "grep", "log", "diff", "stash", "ls-tree", "ls-files":
		// What the repository holds is read: a repository whose work
		// tree holds a protected directory (a home directory kept in
		// git) may hold its files.
		an.act(ActGitReadsRepo, sub, "")
		if sub == "grep" {
			// git grep -O CMD (--open-files-in-pager) runs CMD on what matched.
			an.opts(rest, roleNone, gitGrepRoles, func(_ string, _ Use, v string) {})
			return an.grep("grep", rest, stdin)
		}
	case "status", "add", "rm", "mv", "checkout", "restore", "switch", "reset", "branch", "rev-parse", "merge", "rebase", "cherry-pick", "init", "apply", "bisect", "worktree", "describe", "shortlog", "am", "clean", "notes":
	}
	an.operands(rest, UseOperand)
	return markUnknown
}

func (an *Reading) gitConfig(kv string) {
	k, v, _ := strings.Cut(kv, "=")
	an.judge(v, UseMention)
	if !gitCommandKeys.MatchString(k) {
		if an.looksLikePath(v) {
			an.judge(v, UseOperand)
		}
		return
	}
	lk := strings.ToLower(k)
	switch {
	case strings.HasPrefix(lk, "alias."):
		if s, ok := strings.CutPrefix(v, "!"); ok {
			an.script(s, nil)
		}
	case strings.HasSuffix(lk, "hookspath") || strings.HasSuffix(lk, "worktree") || strings.HasPrefix(lk, "include") || strings.Contains(lk, "ssl") || strings.Contains(lk, "cookiefile"):
		an.judge(v, UseRecursive)
		if lk == "core.hookspath" {
			an.act(ActGitHooks, "git", v)
		}
	case strings.HasPrefix(lk, "protocol.") || strings.HasPrefix(lk, "url."):
		an.act(ActGitRemoteConfig, "git", k)
	default:
		an.script(v, nil)
	}
}

// gitGrepRoles are git grep's options beyond grep's.
var gitGrepRoles = optRoles("run: -O --open-files-in-pager")

// The roles of tar's options: extracting or listing, the archive is read
// and -C is where the members are written (the other words are member
// names); creating, the archive is written and what it takes is read
// whole, -C's directory too (the members named after it are in it:
// tar -czf x.tgz -C.. .ssh).
var (
	tarRun          = "run: --to-command --use-compress-program -I --info-script --new-volume-script -F --rsh-command --rmt-command"
	tarExtractRoles = optRoles(tarRun, "value: --checkpoint-action", "write: -C --directory", "read: -f --file", "text: --exclude")
	tarCreateRoles  = optRoles(tarRun, "value: --checkpoint-action", "tree: -T --files-from -C --directory", "write: -f --file")
)

// tar judges tar by its options' roles, in old-style bundles (czf) and
// clusters (-xzf) too.
func (an *Reading) tar(base string, args []string, stdin string) string {
	roles, ro := tarCreateRoles, UseRecursive
	if tarExtracts(args) {
		roles, ro = tarExtractRoles, UseMention
	}
	var words []string
	for j, a := range args {
		if j == 0 && tarBundle.MatchString(a) {
			a = "-" + a
		}
		words = append(words, splitCluster(a, roles)...)
	}
	an.opts(words, ro, roles, func(opt string, _ Use, v string) {
		switch opt {
		case "--checkpoint-action":
			if c, ok := strings.CutPrefix(v, "exec="); ok {
				an.script(c, nil)
			}
		case "-T", "--files-from":
			an.listFile(v, stdin)
		}
	})
	return markUnknown
}

var sedExec = Lazy(`(?:^|[;\n{}])\s*(?:[0-9$]+|/[^/]*/)?(?:,\s*(?:[0-9$]+|/[^/]*/))?\s*e(?:\s+([^;\n}]*))?`)
var sedFile = Lazy(`(?:^|[;\n{}]|/[gpIiMm0-9]*)\s*[rRwW]\s+([^;\n}]+)`)

// sed judges sed: its script (e executes, r/w name files), its files.
func (an *Reading) sed(base string, args []string, stdin string) string {
	var scripts []string
	explicit := false
	files := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, v string) {
		explicit = true
		if r == roleScript {
			scripts = append(scripts, v)
		} else {
			an.uncertain = true // -f: a script file, not read here
		}
	})
	if !explicit && len(files) > 0 {
		scripts, files = files[:1], files[1:]
	}
	inPlace := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") })
	for _, s := range scripts {
		an.judge(s, UseMention)
		for _, m := range sedExec.FindAllStringSubmatch(s, -1) {
			if strings.TrimSpace(m[1]) != "" {
				an.script(m[1], nil)
			} else {
				an.built = true
			}
		}
		if sedSubst(s) {
			an.built = true
		}
		for _, m := range sedFile.FindAllStringSubmatch(s, -1) {
			f := strings.TrimSpace(m[1])
			an.judge(f, UseOperand)
			if strings.ContainsAny(strings.TrimSpace(m[0])[:1], "wW") {
				an.write(f)
			}
		}
	}
	for _, f := range files {
		an.judge(f, UseOperand)
		if inPlace {
			an.write(f)
		}
	}
	return markBuilt
}

// sedSubst reports whether a sed script has an s command with the e flag.
func sedSubst(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != 's' || i+1 >= len(s) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		d := s[i+1]
		if isAlnum(d) || d == ' ' || d == '\n' || d == '\\' {
			continue
		}
		n, j := 0, i+2
		for ; j < len(s) && n < 2; j++ {
			if s[j] == '\\' {
				j++
				continue
			}
			if s[j] == d {
				n++
			}
		}
		if n < 2 {
			continue
		}
		for ; j < len(s) && strings.IndexByte("gpIiMm0123456789ew", s[j]) >= 0; j++ {
			if s[j] == 'e' {
				return true
			}
			if s[j] == 'w' {
				break
			}
		}
	}
	return false
}

// grep judges grep and its kin: the pattern is text, the rest are paths;
// rg --pre runs a command on every file.
func (an *Reading) grep(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, v string) {
		if r == roleValue { // rg --pre
			an.exec(append(strings.Fields(v), an.cwd+"/"+markTree), "")
		}
		explicit = explicit || r == roleScript || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		rest = rest[1:]
	}
	rec := lookup(base).rec == recAlways || slices.ContainsFunc(args, func(a string) bool { return recursiveFlag.MatchString(a) && strings.ContainsAny(a, "rR") })
	ro := UseOperand
	if rec {
		ro = UseRecursive
	}
	if plain := an.operands(rest, ro); rec && len(plain) == 0 {
		an.judge(".", UseRecursive)
	}
	return markUnknown
}

// awk judges an awk program as code and its files as operands.
func (an *Reading) awk(base string, args []string, stdin string) string {
	explicit := false
	rest := an.opts(args, roleNone, lookup(base).roles, func(_ string, r Use, _ string) {
		explicit = explicit || r == roleScriptFile
	})
	if !explicit && len(rest) > 0 {
		an.code(awkRegexps(rest[0]))
		rest = rest[1:]
	}
	an.operands(rest, UseOperand)
	return markBuilt
}

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

// network judges a network tool: the local files it reads, writes or
// runs (its options' roles); scp's and rsync's local operands are copied
// whole.
func (an *Reading) network(base string, args []string, stdin string) string {
	if base == "socat" {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				continue
			}
			typ, rest, _ := strings.Cut(a, ":")
			switch strings.ToUpper(typ) {
			case "EXEC", "SYSTEM":
				cmd, _, _ := strings.Cut(rest, ",")
				an.script(cmd, nil)
			case "FILE", "OPEN", "CREATE", "GOPEN", "PIPE", "UNIX-CONNECT", "UNIX-LISTEN":
				p, _, _ := strings.Cut(rest, ",")
				an.judge(p, UseOperand)
			}
		}
		return markUnknown
	}
	ro := UseOperand
	switch base {
	case "ssh", "sftp", "mosh", "scp", "rsync":
		ro = roleNone
		// Clusters of short options (ssh -vo ProxyCommand=…, -vi key):
		// each option its own word, a value option's attached value after it.
		var words []string
		for i, a := range args {
			if a == "--" {
				words = append(words, args[i:]...)
				break
			}
			words = append(words, splitCluster(a, lookup(base).roles)...)
		}
		args = words
	}
	plain := an.opts(args, ro, lookup(base).roles, func(opt string, r Use, v string) {
		switch {
		case opt == "--files-from":
			an.listFile(v, "")
		case r != roleValue:
		case opt == "-o": // ssh -o Key=value
			k, v, _ := strings.Cut(v, "=")
			switch strings.ToLower(k) {
			case "proxycommand", "localcommand", "knownhostscommand":
				an.script(v, nil)
			case "identityfile", "userknownhostsfile", "certificatefile", "controlpath":
				an.judge(v, UseOperand)
			}
		default: // curl's data and forms: @file, <file
			if i := strings.Index(v, "@"); i >= 0 {
				f, _, _ := strings.Cut(v[i+1:], ";")
				an.judge(f, UseOperand)
			} else if i := strings.Index(v, "<"); i >= 0 && (opt == "-F" || opt == "--form") {
				an.judge(v[i+1:], UseOperand)
			}
			an.operands([]string{v}, UseOperand)
		}
	})
	if base == "scp" || base == "rsync" {
		for _, a := range plain {
			if !remote(a) {
				an.judge(a, UseRecursive)
			}
		}
	}
	return markUnknown
}

// secretPrinters are programs that print what a protected directory or a
// running credential daemon holds without naming it: when their words (not
// options) hold one of seqs in a row (none: always) and, with opts, one of
// these options (a trailing * a prefix). The floor's file rules do not
// cover a running agent, which hands out what it holds to whoever asks on
// its socket.
var secretPrinters = map[string]struct{ seqs, opts, what string }{
	"gpg":               {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"gpg2":              {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"ssh-add":           {what: "the keys the running ssh-agent holds"},
	"gpg-connect-agent": {what: "the secret keys the running gpg-agent holds"},
	"git":               {seqs: "credential fill", what: "the passwords and tokens git's credential helper keeps"},
	"secret-tool":       {seqs: "lookup, search", what: "the secrets the desktop keyring holds"},
	"security":          {seqs: "find-generic-password, find-internet-password", opts: "-w -g", what: "the passwords the keychain holds"},
	"keyctl":            {seqs: "print, read, pipe", what: "the secrets the kernel keyring holds"},
	"aws":               {seqs: "configure get, configure export-credentials", what: "the keys in ~/.aws"},
	"kubectl":           {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"oc":                {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"gcloud":            {seqs: "print-access-token, print-identity-token, config config-helper", what: "an access token made from the credentials in ~/.config/gcloud"},
	"az":                {seqs: "get-access-token", what: "an access token made from the credentials in ~/.azure"},
}

// credentialPrinter reports what a command prints from a protected
// directory without naming it (secretPrinters), or from another process's
// environment or memory.
func credentialPrinter(base string, args []string) string {
	switch base {
	case "ps":
		// BSD-style e (ps e, ps auxe, ps eww) prints every process's
		// environment: /proc/*/environ by another name.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && strings.Contains(a, "e") && strings.Trim(a, "auxwefhjlmrsvTtSnXZcL") == "" {
				return "other processes' environments (/proc/*/environ)"
			}
		}
	case "gdb", "lldb", "gcore", "pstack", "strace", "ltrace", "eu-stack", "pyrasite", "py-spy":
		// Attaching to a running process reads its memory and environment.
		for i, a := range args {
			if a == "-p" || a == "--pid" || strings.HasPrefix(a, "--pid=") || a == "--attach-pid" || a == "attach" ||
				(base == "gcore" || base == "pstack") && i == len(args)-1 && a != "" && strings.Trim(a, "0123456789$") == "" {
				return "another process's memory and environment (/proc/*/mem, /proc/*/environ)"
			}
		}
	}
	sp, ok := secretPrinters[base]
	if !ok {
		return ""
	}
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	seq := sp.seqs == ""
	for _, want := range strings.Split(sp.seqs, ", ") {
		w := strings.Fields(want)
		for i := 0; !seq && w != nil && i+len(w) <= len(words); i++ {
			seq = slices.Equal(words[i:i+len(w)], w)
		}
	}
	opt := sp.opts == ""
	for _, o := range strings.Fields(sp.opts) {
		p, prefix := strings.CutSuffix(o, "*")
		opt = opt || slices.ContainsFunc(args, func(a string) bool { return a == o || prefix && strings.HasPrefix(a, p) })
	}
	if seq && opt {
		return sp.what
	}
	return ""
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

// awkRegexps blanks an awk program's regular expression literals (/func/,
// $1 ~ /^x/), which are patterns, not paths; quoted strings stay.
func awkRegexps(code string) string {
	b := []byte(code)
	prev := byte('\n')
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			prev = '"'
			continue
		case c == '/' && strings.IndexByte("\n({,;~!&|}", prev) >= 0:
			j := i + 1
			for ; j < len(b) && b[j] != '/' && b[j] != '\n'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j < len(b) && b[j] == '/' {
				for k := i; k <= j; k++ {
					b[k] = ' '
				}
				i = j
				prev = ')'
				continue
			}
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return string(b)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// gitTop reports whether dir is, or is inside, a git work tree (a .git
// found going up from dir).
func (an *Reading) gitTop(dir string) bool { return an.gitTopDir(dir) != "" }

// gitTopDir is the directory of the first .git found going up from dir, or
// "".
func (an *Reading) gitTopDir(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if h, kind := an.hostPath(filepath.Join(d, ".git")); kind != viewHidden {
			if _, err := an.fs.Lstat(h); err == nil {
				return d
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// tarBundle is tar's old-style first word (xzf, cvf, tf).
var tarBundle = Lazy(`^[A-Za-z]+$`)

// tarExtracts reports whether a tar command extracts or lists (x, t,
// --extract, --get, --list) rather than creates or appends.
func tarExtracts(args []string) bool {
	for j, a := range args {
		switch {
		case a == "--extract" || a == "--get" || a == "--list" || a == "-x" || a == "-t":
			return true
		case a == "--create" || a == "--append" || a == "--update" || a == "-c" || a == "-r" || a == "-u" || a == "-A" || a == "--concatenate":
			return false
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") || j == 0 && tarBundle.MatchString(a):
			c := strings.TrimPrefix(a, "-")
			if strings.HasPrefix(a, "-") {
				// What follows a letter that takes a value is the value
				// (-Hposix, -fx.tar), not more letters.
				if i := strings.IndexAny(c, "fCTXHbFIKNVgL"); i >= 0 {
					c = c[:i+1]
				}
			}
			if strings.ContainsAny(c, "cruA") {
				return false
			}
			if strings.ContainsAny(c, "xt") {
				return true
			}
		}
	}
	return false
}

// gitDestructive names what a git subcommand destroys that no undo can bring
// back, or "" when it is an ordinary, recoverable git operation.
func gitDestructive(sub string, rest []string) string {
	has := func(pred func(string) bool) bool {
		for _, a := range rest {
			if a == "--" {
				break
			}
			if pred(a) {
				return true
			}
		}
		return false
	}
	short := func(c byte) func(string) bool {
		return func(a string) bool {
			return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0
		}
	}
	eq := func(s string) func(string) bool { return func(a string) bool { return a == s } }
	switch sub {
	case "reset":
		if has(eq("--hard")) || has(eq("--merge")) || has(eq("--keep")) {
			return "git reset --hard throws away uncommitted changes for good"
		}
	case "clean":
		dry := has(short('n')) || has(eq("--dry-run"))
		if !dry && (has(short('f')) || has(eq("--force"))) {
			return "git clean -f deletes untracked files for good"
		}
	case "checkout", "restore":
		for j, a := range rest {
			if a == "--" && j+1 < len(rest) || sub == "checkout" && (a == "-f" || a == "--force") {
				return "git " + sub + " overwrites uncommitted changes for good"
			}
		}
		if sub == "restore" && !has(eq("--staged")) {
			return "git restore overwrites uncommitted changes for good"
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			return "git stash " + rest[0] + " throws away stashed changes for good"
		}
	case "branch":
		if has(eq("-D")) || has(func(a string) bool { return a == "--delete" }) && has(func(a string) bool { return a == "--force" || a == "-f" }) {
			return "git branch -D deletes a branch whether or not it was merged"
		}
	}
	return ""
}

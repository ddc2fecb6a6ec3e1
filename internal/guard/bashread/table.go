package bashread

import (
	"slices"
	"strings"
	"sync"
)

// What the reading knows of a program is one cmdSpec in programs, read
// by one function (program); a program whose arguments need a parser of its
// own names it in parse, which reads what else its spec says (roles, rec)
// and makes its output. The parsers are in one file per family: shells.go,
// wrappers.go, files.go (find, rm, dd, ln, the names-only programs),
// text.go (sed, grep, awk), code.go (the interpreters), git.go,
// archives.go (tar), network.go, decoders.go; secrets.go lists the
// programs that print a credential they do not name. Programs that share what is known of them share
// one spec value (the awks, the plain wrappers). The shell's own builtins
// that change its state (cd, export, set, read, eval, source, …) are code
// (builtin), not entries.
type cmdSpec struct {
	// wrapper: the program runs the command that follows its options
	// and its first skip operands, which are judged as paths it reads
	// (timeout's DURATION, flock's FILE). opts: options that take a value
	// (text, unless roles says otherwise).
	wrapper bool
	skip    int
	opts    string
	// envArgs: NAME=value words before the command are its environment
	// (sudo, doas).
	envArgs bool
	// roles: options whose value is used in a role of its own (a
	// directory the command runs in: roleCwd).
	roles map[string]Use
	rec   recursion
	// writes: which operands the program writes.
	writes writes
	// out: what the program prints, as far as the analysis knows it.
	out output
	// stdinList: the option that makes it read the names of the files it
	// archives from its standard input ("-" always, "" never).
	stdinList string
	// network: it reaches the network (ActNetwork); destroys: it
	// destroys what is on its target, a disk (ActDestroys).
	network  bool
	destroys bool
	parse    func(an *Reading, base string, args []string, stdin string) string
}

type recursion uint8

const (
	recNever  recursion = iota
	recAlways           // copies, archives or searches what it names, recursively
	recFlag             // with -r, -R, -a, --recursive or --archive
)

type writes uint8

const (
	writesNone     writes = iota
	writesOperands        // every operand
	writesLast            // the last operand, or -t/--target-directory (a copy)
)

type output uint8

const (
	outUnknown  output = iota // nothing the analysis can know
	outBuilt                  // text it makes up (a decoder, a filter)
	outContents               // the files it names, or its standard input
	outStdin                  // its standard input (tee)
)

// Roles of an option's value beyond those of a path (see opts).
const (
	roleNone       Use = -1 - iota // not judged here: the caller does
	roleCwd                        // the directory the command runs in
	roleRun                        // a command line it runs
	roleScript                     // the program's own script or pattern (sed -e, grep -e)
	roleScriptFile                 // a file that holds it (sed -f), read
	roleValue                      // a value the program's parser reads
	roleRest                       // (opts) the operands from the first on: a command
)

var roleNames = map[string]Use{
	"text": UseMention, "read": UseOperand, "tree": UseRecursive, "write": UseWrite, "cwd": roleCwd,
	"run": roleRun, "script": roleScript, "script-file": roleScriptFile, "value": roleValue,
}

var plainWrapper = &cmdSpec{wrapper: true}

// programs is what the analysis knows of each program by its base name
// (lookup adds the python3.12, perl5.36, lua5.4 and mkfs.ext4 kin); it is
// made by a function, not an initialiser, since the parsers it names reach
// it in turn, and at its first use rather than when the package loads (it
// was 0.7 ms of every process's start): progTable.
var (
	programs     map[string]*cmdSpec
	programsOnce sync.Once
)

// progTable is programs, made if it is not yet.
func progTable() map[string]*cmdSpec {
	programsOnce.Do(makePrograms)
	return programs
}

func makePrograms() {
	var (
		netTool   = &cmdSpec{network: true, parse: (*Reading).network}
		copyRoles = optRoles("read: -i -F --files-from", "run: -e -S --rsh --rsync-path")
		ssh       = &cmdSpec{network: true, roles: optRoles("read: -i -F -S -E", "value: -o"), parse: (*Reading).network}
		netcat    = &cmdSpec{network: true, roles: optRoles("run: -e -c --exec --sh-exec"), parse: (*Reading).network}
		decoder   = &cmdSpec{out: outBuilt}
		archiver  = &cmdSpec{rec: recAlways}
		contents  = &cmdSpec{out: outContents}
		names     = &cmdSpec{parse: (*Reading).namesOnly}
		touches   = &cmdSpec{writes: writesOperands}
		copier    = &cmdSpec{rec: recFlag, writes: writesLast}
		destroyer = &cmdSpec{writes: writesOperands, destroys: true}
		grepRoles = optRoles("script: -e --regexp", "script-file: -f --file", "value: --pre",
			"text: -g --glob -t --type -m -A -B -C --max-count --include --exclude")
		grepper   = &cmdSpec{rec: recFlag, roles: grepRoles, parse: (*Reading).grep}
		rg        = &cmdSpec{rec: recAlways, roles: grepRoles, parse: (*Reading).grep}
		awk       = &cmdSpec{roles: optRoles("script-file: -f --file", "text: -v -F"), parse: (*Reading).awk}
		sed       = &cmdSpec{roles: optRoles("script: -e --expression", "script-file: -f --file"), parse: (*Reading).sed}
		tar       = &cmdSpec{parse: (*Reading).tar}
		interp    = &cmdSpec{parse: (*Reading).interp}
		shellSpec = &cmdSpec{parse: (*Reading).shell}
		linker    = &cmdSpec{parse: (*Reading).link}
		onCPU     = &cmdSpec{wrapper: true, skip: 1} // taskset MASK, chrt PRIORITY
		proxy     = &cmdSpec{wrapper: true, opts: "-f"}
		mover     = &cmdSpec{writes: writesLast}
		sevenZ    = &cmdSpec{rec: recAlways, stdinList: "@"}
		busybox   = &cmdSpec{parse: (*Reading).busybox}
		su        = &cmdSpec{parse: (*Reading).su}
	)

	programs = map[string]*cmdSpec{
		// wrappers
		"timeout": {wrapper: true, skip: 1, opts: "-s --signal -k --kill-after"},
		"nice":    {wrapper: true, opts: "-n --adjustment"},
		"stdbuf":  {wrapper: true, opts: "-i -o -e --input --output --error"},
		"sudo": {wrapper: true, envArgs: true, opts: "-u -g -h -p -C -U -r -t --user --group --host --prompt",
			roles: optRoles("cwd: -D --chdir")},
		"doas":    {wrapper: true, envArgs: true, opts: "-u -C"},
		"ionice":  {wrapper: true, opts: "-c -n -p -t --class --classdata"},
		"taskset": onCPU, "chrt": onCPU,
		"time":        {wrapper: true, opts: "-f -o --format --output"},
		"exec":        {wrapper: true, opts: "-a"},
		"flock":       {wrapper: true, skip: 1, opts: "-w -E --timeout --conflict-exit-code"},
		"strace":      {wrapper: true, opts: "-e -o -p -s -u -E -P -I -b -O -S -X"},
		"ltrace":      {wrapper: true, opts: "-e -o -p -s -u -n -a"},
		"xvfb-run":    {wrapper: true, opts: "-n -s -f -e -p --server-num --server-args --auth-file --error-file"},
		"proxychains": proxy, "proxychains4": proxy,
		"systemd-run": {wrapper: true, envArgs: true, opts: "-p -E -u --unit --property --setenv",
			roles: optRoles("cwd: --working-directory")},
		"runuser": {wrapper: true, envArgs: true, opts: "-u -g -G"},
		"nsenter": {wrapper: true, opts: "-t --target"},
		"setsid":  plainWrapper, "nohup": plainWrapper, "builtin": plainWrapper, "unbuffer": plainWrapper,
		"catchsegv": plainWrapper, "torsocks": plainWrapper, "caffeinate": plainWrapper, "sg": plainWrapper,
		"unshare": plainWrapper, "firejail": plainWrapper, "bwrap": plainWrapper, "fakeroot": plainWrapper,
		"eatmydata": plainWrapper, "tsp": plainWrapper, "ts": plainWrapper,
		"command":  {parse: (*Reading).commandCmd},
		"parallel": {parse: (*Reading).parallel},
		"env":      {parse: (*Reading).envCmd, roles: optRoles("value: -S --split-string", "cwd: -C --chdir", "text: -u --unset")},
		"busybox":  busybox, "toybox": busybox,
		"xargs": {parse: (*Reading).xargs, roles: optRoles("value: -I --replace", "read: -a --arg-file",
			"text: -n -L -P -s -d -E -e --max-args --delimiter --max-procs")},
		"watch":  {opts: "-n --interval", parse: (*Reading).watch}, // -d takes no value (--differences[=permanent])
		"chroot": {parse: (*Reading).chroot},
		"su":     su, "script": su,
		// shells and interpreters
		"sh": shellSpec, "bash": shellSpec, "dash": shellSpec, "zsh": shellSpec, "ksh": shellSpec,
		"ash": shellSpec, "mksh": shellSpec, "fish": shellSpec, "rbash": shellSpec,
		"perl": interp, "ruby": interp, "node": interp, "nodejs": interp, "php": interp, "lua": interp,
		"deno": interp, "bun": interp, "Rscript": interp, "osascript": interp, "pwsh": interp, "irb": interp,
		"tclsh": interp, "julia": interp, "python": interp,
		"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
		"sed": sed, "gsed": sed,
		// what prints contents, names or made-up text
		"cat": contents, "tac": contents, "sort": contents, "uniq": contents, "head": contents, "tail": contents,
		"tee":    {writes: writesOperands, out: outStdin},
		"base64": {parse: (*Reading).base64},
		"xxd":    {parse: (*Reading).unhex}, "rev": {parse: (*Reading).unhex},
		"find": {parse: (*Reading).findCmd},
		"ls":   names, "fd": names, "fdfind": names, "locate": names, "tree": names, "realpath": names,
		"readlink": names, "dirname": names, "basename": names,
		"base32": decoder, "openssl": decoder, "gpg": decoder, "tr": decoder, "uudecode": decoder,
		"gunzip": decoder, "zcat": decoder, "gzip": decoder, "xz": decoder, "bzip2": decoder, "iconv": decoder,
		"od": decoder, "cut": decoder, "jq": decoder, "envsubst": decoder, "m4": decoder, "cpp": decoder,
		// searches, archives and copies
		"grep": grepper, "egrep": grepper, "fgrep": grepper, "rg": rg, "ag": rg, "ack": grepper, "zgrep": grepper,
		"tar": tar, "bsdtar": tar, "gtar": tar,
		"zip": {rec: recAlways, stdinList: "-@"},
		"7z":  sevenZ, "7za": sevenZ,
		"cpio":   {rec: recAlways, stdinList: "-"},
		"rsync":  {rec: recAlways, writes: writesLast, roles: copyRoles, parse: (*Reading).rsync},
		"restic": archiver, "borg": archiver, "duplicity": archiver, "mksquashfs": archiver,
		"cp": copier, "mv": mover, "install": mover, "ditto": mover, "patch": mover,
		"diff":  {rec: recFlag},
		"rm":    {rec: recFlag, writes: writesOperands, parse: (*Reading).rm},
		"touch": touches, "mkdir": touches, "rmdir": touches, "truncate": touches, "chmod": touches,
		"chown": touches, "unlink": touches,
		"ln": linker, "mount": linker, "bindfs": linker,
		"dd": {parse: (*Reading).dd},
		"git": {parse: (*Reading).git, roles: optRoles("cwd: -C", "value: -c --config-env",
			"tree: --git-dir --work-tree --exec-path --namespace")},
		// what destroys a disk
		"mke2fs": destroyer, "wipefs": destroyer, "fdisk": destroyer, "sfdisk": destroyer, "parted": destroyer,
		"shred": destroyer,
		// the network
		"curl": {network: true, parse: (*Reading).network, roles: optRoles(
			"value: -F --form -d --data --data-binary --data-raw --data-urlencode --json",
			"read: -T --upload-file -K --config -E --cert --key --cacert -b --cookie --netrc-file",
			"write: -o --output -c --cookie-jar -D --dump-header")},
		"ssh": ssh, "sftp": ssh, "mosh": ssh,
		"scp":  {network: true, roles: optRoles("read: -i -F --files-from", "run: -e -S --rsh --rsync-path", "value: -o"), parse: (*Reading).network},
		"wget": netTool, "nc": netcat, "ncat": netcat, "netcat": netcat, "socat": netTool, "telnet": netTool, "ftp": netTool, "lftp": netTool,
		"tftp": netTool, "aria2c": netTool, "http": netTool, "https": netTool, "xh": netTool,
		"sshpass":     {network: true, wrapper: true, opts: "-p -f -d -P", roles: optRoles("read: -f")}, // -f FILE: the password sent
		"ssh-copy-id": netTool, "axel": netTool, "ssh-keyscan": netTool,
		// rclone copies and syncs whole trees to a remote.
		"rclone": {network: true, rec: recAlways},
	}
	// A spec's opts take a value, which is text.
	for _, sp := range programs {
		for _, o := range strings.Fields(sp.opts) {
			if sp.roles == nil {
				sp.roles = map[string]Use{}
			}
			if _, ok := sp.roles[o]; !ok {
				sp.roles[o] = UseMention
			}
		}
	}
}

var genericSpec = &cmdSpec{}

// lookup is the spec of the program base (a spec that says nothing for
// one the table does not know).
func lookup(base string) *cmdSpec {
	programs := progTable()
	if sp, ok := programs[base]; ok {
		return sp
	}
	for _, p := range []string{"python", "pypy", "perl5", "lua5"} {
		if strings.HasPrefix(base, p) {
			return programs["python"]
		}
	}
	if strings.HasPrefix(base, "mkfs") {
		return programs["mke2fs"]
	}
	return genericSpec
}

// program judges a program by its spec.
func (an *Reading) program(sp *cmdSpec, base string, args []string, stdin string) string {
	if sp.network {
		an.reaches(base)
	}
	if sp.destroys {
		an.act(ActDestroys, base, "")
	}
	switch {
	case sp.parse != nil:
		return sp.parse(an, base, args, stdin)
	case sp.wrapper:
		return an.wrapped(sp, args, stdin)
	}
	return an.generic(base, args, stdin)
}

// reaches tells that the program base reaches the network.
func (an *Reading) reaches(base string) {
	an.act(ActNetwork, base, "")
}

// wrapped looks through a wrapper to the command it runs: in the
// directory its roleCwd option names (sudo -D, systemd-run
// --working-directory), with the NAME=value words before it (sudo).
func (an *Reading) wrapped(sp *cmdSpec, args []string, stdin string) string {
	dir := ""
	args = splitLeading(args, sp.roles)
	rest := an.opts(args, roleRest, sp.roles, func(_ string, r Use, v string) {
		if r == roleCwd {
			dir = v
		}
	})
	for i := 0; i < sp.skip && len(rest) > 0; i++ {
		an.judge(rest[0], UseOperand)
		rest = rest[1:]
	}
	if sp.skip > 0 && len(rest) > 1 && (rest[0] == "-c" || rest[0] == "--command") {
		return an.script(rest[1], nil) // flock FILE -c COMMAND
	}
	for sp.envArgs && len(rest) > 0 && strings.Contains(rest[0], "=") && !strings.HasPrefix(rest[0], "-") {
		k, v, _ := strings.Cut(rest[0], "=")
		an.varCarries(k, v)
		rest = rest[1:]
	}
	if dir != "" {
		an.judge(dir, UseOperand)
	}
	if len(rest) == 0 {
		return ""
	}
	if dir != "" {
		return an.sub(func() string {
			an.setCwd(dir)
			return an.exec(rest, stdin)
		})
	}
	return an.exec(rest, stdin)
}

// splitLeading splits the clusters of short options before a wrapper's
// command (sudo -nu root CMD: -n -u root CMD); an option's value, and
// everything from the command on, is left as it is.
func splitLeading(args []string, roles map[string]Use) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		var parts []string
		if strings.HasPrefix(a, "--") {
			parts = []string{a}
		} else {
			parts = splitCluster(a, roles)
		}
		out = append(out, parts...)
		n := len(parts)
		_, lastTakes := roles[parts[n-1]]
		attached := n >= 2 && func() bool { _, ok := roles[parts[n-2]]; return ok }()
		if lastTakes && !attached && !strings.Contains(a, "=") && i+1 < len(args) {
			i++
			out = append(out, args[i]) // its value, unsplit
		}
	}
	return out
}

// generic judges a program by its spec alone: every operand is a path it
// may read (recursively, by rec), those of writes paths it writes.
func (an *Reading) generic(base string, args []string, stdin string) string {
	sp := lookup(base)
	rec := sp.rec == recAlways || sp.rec == recFlag && slices.ContainsFunc(args, recursiveFlag.MatchString)
	ro := UseOperand
	if rec {
		ro = UseRecursive
	}
	target := hasAny(args, "-t", "--target-directory") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--target-directory=") })
	var plain []string
	if sp.writes == writesLast && !target && rec {
		// The sources are copied recursively; the last operand is where
		// they go, which is written, not read (cp -r build/* /).
		plain = an.operands(args, UseMention)
		for i, p := range plain {
			if i < len(plain)-1 || len(plain) == 1 {
				an.judge(p, UseRecursive)
			}
		}
	} else {
		plain = an.operands(args, ro)
	}
	if sp.stdinList == "-" || sp.stdinList == "-@" && hasAny(args, "-@") {
		an.listFile("-", stdin)
	}
	for j, a := range args {
		if v, ok := strings.CutPrefix(a, "--files-from="); ok {
			an.listFile(v, stdin)
		} else if a == "--files-from" && j+1 < len(args) {
			an.listFile(args[j+1], stdin)
		} else if sp.stdinList == "@" && strings.HasPrefix(a, "@") {
			an.listFile(a[1:], stdin)
		}
	}
	switch sp.writes {
	case writesOperands:
		for _, p := range plain {
			an.write(p)
		}
	case writesLast:
		if n := len(plain); n > 0 {
			an.judge(plain[n-1], UseWrite)
			an.write(plain[n-1])
		}
		for i, a := range args {
			if (a == "-t" || a == "--target-directory") && i+1 < len(args) {
				an.write(args[i+1])
			}
		}
	}
	switch sp.out {
	case outBuilt:
		return markBuilt
	case outStdin:
		return stdin
	case outContents:
		if len(plain) == 0 || (len(plain) == 1 && plain[0] == "-") {
			return stdin
		}
		var out strings.Builder
		for _, f := range plain {
			if f == "-" {
				out.WriteString(stdin)
				continue
			}
			out.WriteString(an.readFile(f))
		}
		return out.String()
	}
	return markUnknown
}

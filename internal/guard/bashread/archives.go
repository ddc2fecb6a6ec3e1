package bashread

// tar, by its options' roles in old-style bundles and clusters. (zip, 7z,
// cpio and the backup tools are table entries.)

import (
	"strings"
)

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

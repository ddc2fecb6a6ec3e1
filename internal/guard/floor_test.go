package guard

import (
	"strings"
	"testing"
)

// floorCase is a line and what it is without the kernel floor and with it.
type floorCase struct {
	line             string
	without, withFlr Verdict
}

func checkFloorCases(t *testing.T, e *testEnv, sandbox bool, cases []floorCase) {
	t.Helper()
	plain, floor := e.guard(sandbox), e.floorGuard(sandbox)
	for _, c := range cases {
		line := e.expand(c.line)
		if d := plain.Check(bg, shell(line)); d.Verdict != c.without {
			t.Errorf("sandbox=%v without the floor %q: %v (%s: %s), want %v", sandbox, c.line, d.Verdict, d.Checker, d.Reason, c.without)
		}
		d := floor.Check(bg, shell(line))
		if d.Verdict != c.withFlr {
			t.Errorf("sandbox=%v with the floor %q: %v (%s: %s), want %v", sandbox, c.line, d.Verdict, d.Checker, d.Reason, c.withFlr)
		}
		if strings.Contains(d.Reason, canary) {
			t.Errorf("%q: the reason leaks the canary", c.line)
		}
	}
}

// TestFloorAllowsWhatTheAnalysisCannotFollowInSandboxMode: lines refused
// only because they build a path or a command the analysis cannot follow,
// or because code mentions /proc and environ, are allowed in sandbox mode
// with the floor on, and refused as before in default mode.
func TestFloorAllowsWhatTheAnalysisCannotFollowInSandboxMode(t *testing.T) {
	e := newTestEnv(t)
	relaxed := []string{
		// a value read from /proc/self/status used as a path
		`while read l; do test -e "$l" && echo "$l"; done < /proc/self/status`,
		`grep VmRSS /proc/self/status | awk '{print $2}' > "$(mktemp)"`,
		// a heredoc script with os.environ and an argument nodwyn cannot know
		"python3 - \"$f\" <<'EOF'↵import os, sys↵print(os.environ[\"PATH\"], sys.argv[1])↵EOF",
		// code that mentions /proc and environ, naming no /proc/*/environ
		"python3 - <<'EOF'↵import os↵print(os.environ[\"PATH\"])↵print(open(\"/proc/cpuinfo\").read())↵EOF",
		// a path in the home directory completed by an unknown value
		`cat ~/$(cat name.txt)/notes`,
	}
	var sb, def []floorCase
	for _, l := range relaxed {
		sb = append(sb, floorCase{l, Refuse, Allow})
		def = append(def, floorCase{l, Refuse, Refuse})
	}
	// The real cases named in issue 10 go through with the floor.
	for _, l := range []string{
		`while read l; do echo "$l"; done < /proc/self/status`,
		"python3 - <<'EOF'↵import os↵print(os.environ[\"PATH\"])↵EOF",
	} {
		sb = append(sb, floorCase{l, Allow, Allow})
	}
	checkFloorCases(t, e, true, sb)
	checkFloorCases(t, e, false, def)
}

// TestFloorKeepsRefusingWhatALineNames: what a line names as a path a
// command opens, copies or searches stays refused with the floor on, in
// both modes.
func TestFloorKeepsRefusingWhatALineNames(t *testing.T) {
	e := newTestEnv(t)
	var cases []floorCase
	for _, l := range []string{
		`cat ~/.ssh/id_rsa`,
		`cat "$HOME/.ssh/id_rsa"`,
		`cat '~/.ssh/id_rsa'`,
		`cp -r ~/.ssh x`,
		`tar czf x.tgz ~`,
		`cat /proc/1/environ`,
		`cat /proc/*/environ`,
		`x=$(pgrep nodwyn); cat /proc/$x/environ`,
		`cat /proc/$(pgrep nodwyn)/environ`,
		`tr '\0' '\n' < /proc/$(pgrep -o nodwyn)/environ`,
		`python3 -c 'print(open("/proc/self/environ").read())'`,
		`python3 -c 'import os; print(open(os.path.expanduser("~/.ssh/id_rsa")).read())'`,
		`while read l; do cat ~/.ssh/"$l"; done < list.txt`,
		`cat {{CONFIG}}/config.toml`,
		`ls {{DATA}}/sessions`,
		`gpg --export-secret-keys --armor`,
		`echo 'Keys live in ~/.ssh' | xargs cat`,
	} {
		cases = append(cases, floorCase{l, Refuse, Refuse})
	}
	checkFloorCases(t, e, true, cases)
	checkFloorCases(t, e, false, cases)
}

// TestFloorLetsProseNameADeniedDirectory: with the floor on, in both
// modes, a quoted sentence echoed or printf'd into a file and a commit
// message may name a denied directory; nothing opens it.
func TestFloorLetsProseNameADeniedDirectory(t *testing.T) {
	e := newTestEnv(t)
	var cases []floorCase
	for _, l := range []string{
		`echo 'Keys live in ~/.ssh; never commit them.' >> SECURITY.md`,
		`echo -e "Never commit ~/.kube/config\nor {{CONFIG}}/config.toml." > NOTES.md`,
		`printf '%s\n' 'Keys live in ~/.ssh; never commit them.' >> SECURITY.md`,
		`git commit -m "docs: never store ~/.aws/credentials"`,
		`git commit -am 'docs: never store ~/.aws/credentials'`,
		`git add SECURITY.md && git commit -q --message 'say where keys live (~/.ssh)'`,
		`git tag -a v1 -m 'keys stay in ~/.ssh, see docs'`,
		`echo 'Keys live in ~/.ssh' > notes.txt && git add notes.txt && git commit -m 'note on ~/.ssh'`,
	} {
		cases = append(cases, floorCase{l, Refuse, Allow})
	}
	checkFloorCases(t, e, true, cases)
	checkFloorCases(t, e, false, cases)
}

// TestFloorProseNearMisses: what is not prose, or what a command on the
// line opens, stays refused with the floor on, in both modes.
func TestFloorProseNearMisses(t *testing.T) {
	e := newTestEnv(t)
	var cases []floorCase
	for _, l := range []string{
		`cat '~/.ssh/id_rsa'`,
		`echo 'Keys live in ~/.ssh; never commit them.'`,
		`echo 'Keys live in ~/.ssh' | xargs cat`,
		`echo "Keys live in $HOME/.ssh; never commit them." >> SECURITY.md`,
		`echo '~/.ssh/id_rsa' > list.txt`,
		`echo '{{HOME}}/.ssh/id_rsa and more' > list.txt; xargs cat < list.txt`,
		`echo 'cat {{HOME}}/.ssh/id_rsa now' > s.sh; bash s.sh`,
		`echo 'note: ~/.ssh holds keys' >> ~/.ssh/config`,
		`echo '{{HOME}}/.ssh/id_rsa and more' > >(xargs cat)`,
		`echo 'Keys live in ~/.ssh' > f >&2`,
		`echo 'Keys live in ~/.ssh' > /dev/stderr`,
		"alias echo=cat↵echo '{{HOME}}/.ssh/id_rsa and more' > f",
		`printf 'Keys live in %s\n' '~/.ssh' >> SECURITY.md`,
		`printf -v p '%s' 'Keys in ~/.ssh here' > f`,
		`git commit -F ~/.ssh/id_rsa`,
		`git commit -m "$(cat ~/.ssh/id_rsa)"`,
		`git commit -m 'see ~/.ssh' ~/.ssh/id_rsa`,
		`cp -r ~/.ssh x; echo 'backed up ~/.ssh' > log.txt`,
	} {
		cases = append(cases, floorCase{l, Refuse, Refuse})
	}
	checkFloorCases(t, e, true, cases)
	checkFloorCases(t, e, false, cases)
}

// TestFloorLetsASedRemoveAKeyInSandboxMode: the secret scan's security
// confirm on a line that removes a key-shaped string with sed is no reason
// to block it in sandbox mode with the floor on; a line that writes or
// sends a key is asked about as before, and default mode is unchanged.
func TestFloorLetsASedRemoveAKeyInSandboxMode(t *testing.T) {
	e := newTestEnv(t)
	removes := []string{
		`sed -i 's/AKIAIOSFODNN7EXAMPLE/<placeholder>/g' config.py`,
		`sed -i "s|AKIAIOSFODNN7EXAMPLE|<your-aws-access-key-id>|g; s/ghp_abcdefghijklmnopqrstuvwxyz0123456789/<your-github-token>/g" config.py`,
		`sed -i -e 's/AKIAIOSFODNN7EXAMPLE/x/' -e 's/hf_abcdefghijklmnopqrstuvwxyz1234/y/' a.py`,
		`find . -type f -name '*.py' -exec sed -i 's/AKIAIOSFODNN7EXAMPLE/<placeholder>/g' {} +`,
		`git ls-files '*.py' | xargs -r sed -i 's/AKIAIOSFODNN7EXAMPLE/<placeholder>/g'`,
		`sed -i '/^aws/ s/[/=]AKIAIOSFODNN7EXAMPLE/=<placeholder>/' config.py`,
	}
	var sb, def []floorCase
	for _, l := range removes {
		sb = append(sb, floorCase{l, SecurityConfirm, Allow})
		def = append(def, floorCase{l, SecurityConfirm, SecurityConfirm})
	}
	// The pattern as a regular expression names no key: allowed as before.
	sb = append(sb, floorCase{`sed -i 's/AKIA[0-9A-Z]\{16\}/<placeholder>/g' config.py`, Allow, Allow})
	// What writes, keeps or sends a key stays a security confirm.
	for _, l := range []string{
		`sed -i 's/<placeholder>/AKIAIOSFODNN7EXAMPLE/g' config.py`,
		`sed -i 's/AKIAIOSFODNN7EXAMPLE/&/g' config.py`,
		`sed -i 's/AKIAIOSFODNN7EXAMPLE/\0 /g' config.py`,
		`sed -i 's/\(AKIAIOSFODNN7EXAMPLE\)/\1x/g' config.py`,
		`sed -i '1i AKIAIOSFODNN7EXAMPLE' config.py`,
		`sed -i '1a\↵AKIAIOSFODNN7EXAMPLE' config.py`,
		`sed -i 's/AKIAIOSFODNN7EXAMPLE/x/w out.txt' config.py`,
		`sed -i 's/x/AKIAIOSFODNN7EXAMPLE/;s/AKIAIOSFODNN7EXAMPLE/y/' config.py`,
		`echo AKIAIOSFODNN7EXAMPLE >> config.py`,
		`sed -i 's/AKIAIOSFODNN7EXAMPLE/x/' config.py; echo AKIAIOSFODNN7EXAMPLE > k`,
		`echo sed 's/AKIAIOSFODNN7EXAMPLE/x/' > f`,
		`perl -pi -e 's/AKIAIOSFODNN7EXAMPLE/x/' config.py`,
		`sed -i "s/AKIAIOSFODNN7EXAMPLE/$(cat k)/" config.py`,
	} {
		sb = append(sb, floorCase{l, SecurityConfirm, SecurityConfirm})
	}
	curl := `curl -d 's/AKIAIOSFODNN7EXAMPLE/x/' https://example.com`
	if d := e.floorGuard(true).Check(bg, shell(curl)); d.Verdict != SecurityConfirm || d.Checker != "ContentScan" {
		t.Errorf("floor sandbox %q: %v (%s: %s)", curl, d.Verdict, d.Checker, d.Reason)
	}
	checkFloorCases(t, e, true, sb)
	checkFloorCases(t, e, false, def)
}

// TestCredentialDaemonsAreRefusedWithTheFloor: the floor's file rules do
// not cover a running agent that hands out what it holds on its socket,
// so a line that asks one stays refused in every mode, floor or not.
func TestCredentialDaemonsAreRefusedWithTheFloor(t *testing.T) {
	e := newTestEnv(t)
	var cases []floorCase
	for _, l := range []string{
		`gpg --export-secret-keys --armor`,
		`gpg --export-secret-subkeys KEYID > k.asc`,
		`gpg --export-ssh-key KEYID`,
		`ssh-add -L`,
		`ssh-add -l`,
		`SSH_AUTH_SOCK=$(ls /tmp/ssh-*/agent.* | head -1) ssh-add -L`,
		`gpg-connect-agent 'keyinfo --list' /bye`,
		`printf 'protocol=https\nhost=github.com\n\n' | git credential fill`,
		`secret-tool lookup service github`,
		`security find-generic-password -s github -w`,
		`keyctl print %user:token`,
	} {
		cases = append(cases, floorCase{l, Refuse, Refuse})
	}
	checkFloorCases(t, e, true, cases)
	checkFloorCases(t, e, false, cases)
	// What only asks about the helper, not for its secrets, goes on.
	for _, l := range []string{`git config credential.helper`, `gpg --list-keys`, `ssh-keygen -t ed25519 -f ./deploy_key -N ''`} {
		if d := e.floorGuard(true).Check(bg, shell(l)); d.Verdict == Refuse {
			t.Errorf("floor sandbox %q: %v (%s)", l, d.Verdict, d.Reason)
		}
	}
}

// Another process's /proc entries are not the floor's to refuse (Landlock's
// file rules do not cover /proc/<pid>/environ of an unrestricted process):
// a line that cannot be followed and is about them stays refused with the
// floor in sandbox mode.
func TestFloorDoesNotStandInForProc(t *testing.T) {
	e := newTestEnv(t)
	var cases []floorCase
	for _, l := range []string{
		`python3 -c "import os; print(open('/proc/%d/environ' % os.getppid()).read())"`,
		`python3 -c "import os; print(open(os.path.join('/proc', str(os.getppid()), 'environ')).read())"`,
		`p=environ; cat /proc/1/$p`,
		`n=$(pgrep -o bash); python3 -c "print(open('/proc/$n/mem', 'rb').read(10))"`,
	} {
		cases = append(cases, floorCase{l, Refuse, Refuse})
	}
	checkFloorCases(t, e, true, cases)
}

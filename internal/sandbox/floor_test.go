package sandbox

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// canaryHome is a temporary home with a canary in each denied directory,
// and nodwyn's configuration and data directories under it.
type canaryHome struct {
	home, folder, scratch string
	deny                  []string
	token                 string // what the canaries hold; "" is canary
}

func (h *canaryHome) canary() string {
	if h.token != "" {
		return h.token
	}
	return canary
}

const canary = "CANARY-7f3a91"

func newCanaryHome(t *testing.T) *canaryHome {
	t.Helper()
	return newCanaryHomeAt(t, t.TempDir())
}

// newCanaryHomeAt is newCanaryHome with the home at home.
func newCanaryHomeAt(t *testing.T, home string) *canaryHome {
	t.Helper()
	h := &canaryHome{home: home}
	for _, rel := range []string{".ssh/id_rsa", ".ssh/authorized_keys", ".aws/credentials", ".gnupg/private-keys-v1.d/k.key",
		".config/gcloud/credentials.db", ".azure/accessTokens.json", ".kube/config",
		".config/nodwyn/credentials", ".local/share/nodwyn/journal/key"} {
		p := filepath.Join(h.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(canary+" "+rel+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".config/nodwyn", ".local/share/nodwyn"} {
		h.deny = append(h.deny, filepath.Join(h.home, rel))
	}
	h.scratch = filepath.Join(h.home, ".local/share/nodwyn/scratch/s1")
	h.folder = filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{h.scratch, h.folder} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(h.home, ".bashrc"), []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func needFloor(t *testing.T) {
	t.Helper()
	if _, err := LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
}

func (h *canaryHome) host(t *testing.T, floor bool) *NoSandbox {
	t.Helper()
	opts := HostOptions{StopGrace: 200 * time.Millisecond, Settle: 100 * time.Millisecond}
	if floor {
		f, err := NewFloor(h.deny, []string{h.scratch})
		if err != nil {
			t.Fatal(err)
		}
		opts.Floor = f
	}
	s := NewHost(opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func (h *canaryHome) run(t *testing.T, s *NoSandbox, line string) Output {
	t.Helper()
	o, err := s.Run(context.Background(), Command{Shell: "/bin/bash", Line: line, Dir: h.folder,
		Env: []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + h.scratch}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return o
}

// leaked reports whether a canary reached the output or a file in the
// folder.
func (h *canaryHome) leaked(t *testing.T, o Output) bool {
	t.Helper()
	if strings.Contains(o.Out, h.canary()) {
		return true
	}
	found := false
	filepath.WalkDir(h.folder, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), h.canary()) {
				found = true
			}
			if strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar") {
				out, _ := exec.Command("tar", "xOf", p).Output()
				if strings.Contains(string(out), h.canary()) {
					found = true
				}
			}
		}
		return nil
	})
	return found
}

// Each attack reads a canary with the floor off and none with it on.
func TestFloorDeniesWhatTheLineNeverNames(t *testing.T) {
	slowTest(t)
	needFloor(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	attacks := []struct{ name, line string }{
		{"python walks home", `python3 -c 'import os
for r, ds, fs in os.walk(os.path.expanduser("~")):
    for f in fs:
        try: print(open(os.path.join(r, f)).read())
        except Exception as e: pass'`},
		{"copytree home", `python3 -c 'import shutil, os; shutil.copytree(os.path.expanduser("~"), "stolen", symlinks=False, ignore_dangling_symlinks=True, dirs_exist_ok=True)' 2>/dev/null; true`},
		{"path built in code", `python3 -c 'from pathlib import Path; print((Path.home()/".ss"/"id_rsa").read_text())' 2>&1; python3 -c 'from pathlib import Path; print((Path.home()/(".s"+"sh")/"id_rsa").read_text())'`},
		{"tar home", `tar czf x.tgz -C ~ . 2>/dev/null; true`},
		{"cp -r home", `cp -r ~ dst 2>/dev/null; true`},
		{"proc self root", `cat /proc/self/root$HOME/.ssh/id_rsa`},
		{"name from tr", `cat $(echo '~/.ffu/vq_efn' | tr 'a-z' 'n-za-m' | sed "s|~|$HOME|")`},
		{"nodwyn's data", `cat ~/.local/share/nodwyn/journal/key`},
		{"nodwyn's config", `cat ~/.config/nodwyn/credentials`},
		{"find and cat", `find ~ -type f -exec cat {} + 2>/dev/null; true`},
	}
	h := newCanaryHome(t)
	off, on := h.host(t, false), h.host(t, true)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			os.RemoveAll(h.folder)
			os.MkdirAll(h.folder, 0o755)
			if o := h.run(t, off, a.line); !h.leaked(t, o) {
				t.Errorf("without the floor the attack should reach a canary (else the test shows nothing):\n%s", o.Text())
			}
			os.RemoveAll(h.folder)
			os.MkdirAll(h.folder, 0o755)
			if o := h.run(t, on, a.line); h.leaked(t, o) {
				t.Errorf("with the floor a canary leaked:\n%s", o.Text())
			}
		})
	}
}

// Attacks over two calls: a link or a program made in one, used in the next.
func TestFloorHoldsAcrossCalls(t *testing.T) {
	needFloor(t)
	steps := []struct {
		name  string
		lines []string
	}{
		{"symlink then cat", []string{`ln -s ~/.ssh k`, `cat k/id_rsa`}},
		{"hard link", []string{`ln ~/.ssh/id_rsa hl 2>&1; true`, `cat hl`}},
		{"move .ssh away", []string{`mv ~/.ssh ~/moved 2>&1; true`, `cat ~/moved/id_rsa`}},
		{"rename in its own directory", []string{`mv ~/.aws ~/.aws2 2>&1; true`, `cat ~/.aws2/credentials`}},
		{"script written then run", []string{`printf '#!/bin/sh\ncat "$HOME/.ssh/id_rsa"\n' > s.sh; chmod +x s.sh`, `./s.sh`}},
	}
	if _, err := exec.LookPath("cc"); err == nil {
		steps = append(steps, struct {
			name  string
			lines []string
		}{"C program", []string{
			`printf '#include <stdio.h>\n#include <stdlib.h>\nint main(){char p[4096];snprintf(p,sizeof p,"%%s/.%%s/id_rsa",getenv("HOME"),"ssh");FILE*f=fopen(p,"r");if(!f)return 1;int c;while((c=fgetc(f))!=EOF)putchar(c);return 0;}\n' > r.c && cc -o r r.c`,
			`./r`}})
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			for _, floor := range []bool{false, true} {
				h := newCanaryHome(t)
				sb := h.host(t, floor)
				var last Output
				for _, l := range s.lines {
					last = h.run(t, sb, l)
				}
				if got := h.leaked(t, last); got == floor {
					t.Errorf("floor=%v: leaked=%v:\n%s", floor, got, last.Text())
				}
			}
		})
	}
}

// Writes that would tamper with a denied directory are refused too.
func TestFloorRefusesWritesThatMatter(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	sb := h.host(t, true)
	for _, line := range []string{
		`echo evil > ~/.ssh/authorized_keys`,
		`echo evil >> ~/.ssh/authorized_keys`,
		`: > ~/.ssh/id_rsa`,
		`truncate -s 0 ~/.aws/credentials`,
		`mv ~/.ssh ~/x`,
		`rm -rf ~/.kube`,
		`rm ~/.ssh/id_rsa`,
		`printf 'Host *\n  ProxyCommand sh -c "cat ~/.ssh/id_rsa > /tmp/k"\n' > ~/.ssh/config`,
		`ln -s /tmp/evil-config ~/.ssh/config`,
		`printf '[default]\ncredential_process = sh -c id\n' >> ~/.aws/config`,
		`echo 'base_url = "http://127.0.0.1:9/v1"' > ~/.config/nodwyn/config.toml`,
		`echo '(display 1)' > ~/.config/nodwyn/init.scm`,
		`rm ~/.config/nodwyn/credentials && echo x > ~/.config/nodwyn/credentials`,
		`echo x > ~/.local/share/nodwyn/journal/key2`,
	} {
		o := h.run(t, sb, line)
		if o.ExitCode == 0 {
			t.Errorf("%s: went through under the floor:\n%s", line, o.Text())
		}
	}
	for _, rel := range []string{".ssh/config", ".aws/config", ".config/nodwyn/config.toml", ".config/nodwyn/init.scm", ".local/share/nodwyn/journal/key2"} {
		if _, err := os.Lstat(filepath.Join(h.home, rel)); err == nil {
			t.Errorf("%s was made under the floor", rel)
		}
	}
	for _, rel := range []string{".ssh/authorized_keys", ".ssh/id_rsa", ".aws/credentials", ".config/nodwyn/credentials"} {
		if b, _ := os.ReadFile(filepath.Join(h.home, rel)); !strings.HasPrefix(string(b), canary) {
			t.Errorf("%s changed: %q", rel, b)
		}
	}
}

// Ordinary work goes on under the floor, in the home directory too.
func TestFloorLetsOrdinaryWorkThrough(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	sb := h.host(t, true)
	lines := []string{
		`mkdir ~/.newdir`, // a new directory directly in the home
		`echo hi > ~/.newdir/rc && cat ~/.newdir/rc`, // written and read from the next call
		`mkdir -p ~/.config/newtool && ls ~/.config`, // in ~/.config, which holds ~/.config/nodwyn
		`echo x > ~/.config/newtool/f && rm -rf ~/.config/newtool/*`,
		`echo more >> ~/.bashrc && cp ~/.bashrc ~/.newdir/bak`,                                 // an existing dotfile
		`echo 's' > f && sed -i 's/s/S/' f && rm f`,                                            // sed -i in the folder
		`ls -a ~ | grep -q .bashrc && ls ~/.config`,                                            // listing the home
		`echo t > $TMPDIR/f && cat $TMPDIR/f`,                                                  // the scratch directory, under the data directory
		`echo w > out.txt && cat out.txt && rm out.txt`,                                        // the folder
		`d=$(mktemp -d /var/tmp/nodwyn-floor.XXXXXX) && echo x > $d/f && cat $d/f && rm -r $d`, // elsewhere on the machine
		`rm -rf ~/.newdir/*`,
		// The home archived and copied: made, without what is denied.
		`tar czf h.tgz -C ~ . 2>/dev/null; tar tzf h.tgz | grep -qx './.bashrc' && ! tar tzf h.tgz | grep -q id_rsa`,
		`cp -r ~ dst 2>/dev/null; test -f dst/.bashrc && ! test -e dst/.ssh/id_rsa`,
	}
	if _, err := exec.LookPath("git"); err == nil {
		lines = append(lines,
			`git init -q . && git config user.email a@b.c && git config user.name A`,
			`echo x > f && git add f && git commit -qm one && git log --oneline | grep -q one`)
	}
	for _, l := range lines {
		if o := h.run(t, sb, l); o.ExitCode != 0 {
			t.Errorf("%s: refused under the floor:\n%s", l, o.Text())
		}
	}
}

// A command that creates an entry beside a denied directory and then fails
// to read it is told why, and the next command can.
func TestFloorSaysWhatANewEntryBesideADeniedOneCannotDoYet(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	sb := h.host(t, true)
	o := h.run(t, sb, `mkdir ~/work && echo x > ~/work/solution.sh`)
	if o.ExitCode == 0 || !strings.Contains(o.Trailer, "kernel floor") || !strings.Contains(o.Trailer, filepath.Join(h.home, "work")) {
		t.Fatalf("no note on the new directory:\n%s", o.Text())
	}
	if o := h.run(t, sb, `echo x > ~/work/solution.sh && cat ~/work/solution.sh`); o.ExitCode != 0 || strings.Contains(o.Trailer, "kernel floor") {
		t.Fatalf("the next call should write and read in it:\n%s", o.Text())
	}
	// A file directly in the home cannot be made: the note says why, and
	// nothing is left behind.
	o = h.run(t, sb, `echo x > ~/solution.sh`)
	if o.ExitCode == 0 || !strings.Contains(o.Trailer, "kernel floor: ") || !strings.Contains(o.Trailer, h.home+",") {
		t.Fatalf("no note on the refused file:\n%s", o.Text())
	}
	if _, err := os.Lstat(filepath.Join(h.home, "solution.sh")); err == nil {
		t.Errorf("the refused file was left behind")
	}
	// A failure that is not the floor's gets no note, even when a
	// directory appeared beside a denied one meanwhile (any process may
	// make one there: a parallel test in /tmp, here the command itself).
	if o := h.run(t, sb, `exit 3`); strings.Contains(o.Trailer, "kernel floor") {
		t.Errorf("a note on a plain failure:\n%s", o.Text())
	}
	if o := h.run(t, sb, `mkdir ~/cache-dir && echo FAIL && exit 1`); o.ExitCode == 0 || strings.Contains(o.Trailer, "kernel floor") {
		t.Errorf("a note on a failure that is not the floor's:\n%s", o.Text())
	}
}

// nodwyn itself is never restricted: after a command under the floor it
// still reads its own files.
func TestFloorLeavesNodwynUnrestricted(t *testing.T) {
	needFloor(t)
	h := newCanaryHome(t)
	sb := h.host(t, true)
	for range 20 {
		if o := h.run(t, sb, `true`); o.ExitCode != 0 {
			t.Fatal(o.Text())
		}
	}
	for _, rel := range []string{".ssh/id_rsa", ".local/share/nodwyn/journal/key"} {
		if _, err := os.ReadFile(filepath.Join(h.home, rel)); err != nil {
			t.Errorf("nodwyn cannot read %s after commands under the floor: %v", rel, err)
		}
	}
}

// What the floor cannot allow, by Landlock's design: a grant on a directory
// holds beneath it, so the home directory (an ancestor of ~/.ssh) cannot be
// given the right to read what is made in it during a command without
// giving ~/.ssh the same. A file opened read-write as it is made there (a
// lock file, mkstemp) fails, a directory directly in it cannot be removed,
// and the command is told so. These tests pin the limits docs/sandbox.md
// states; lifting one is a change to the docs.
func TestFloorLimitsAreSaid(t *testing.T) {
	needFloor(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	h := newCanaryHome(t)
	os.MkdirAll(filepath.Join(h.home, ".cache"), 0o755)
	sb := h.host(t, true)
	o := h.run(t, sb, `git config --global user.email a@b.c`)
	if o.ExitCode == 0 {
		t.Fatalf("git config --global went through: the floor's limits in docs/sandbox.md are out of date:\n%s", o.Text())
	}
	if !strings.Contains(o.Trailer, "kernel floor: ") {
		t.Errorf("no note on why:\n%s", o.Text())
	}
	if o := h.run(t, sb, `git config --file ~/.cache/gitconfig user.name A`); o.ExitCode != 0 {
		t.Errorf("git config in a directory of the home: %s", o.Text())
	}
	h.run(t, sb, `mkdir ~/build`)
	if o := h.run(t, sb, `rm -rf ~/build`); o.ExitCode == 0 {
		t.Errorf("a directory directly in the home was removed: the limits are out of date")
	}
	if o := h.run(t, sb, `touch ~/new`); o.ExitCode == 0 {
		t.Errorf("a file was made directly in the home: the limits are out of date")
	}
}

// BenchmarkFloorPerCommand is the floor's cost per command: the same
// `true` run without and with it, in one run (the difference is the
// ruleset's build and the restricted thread). Target: ≤ 3 ms median.
func BenchmarkFloorPerCommand(b *testing.B) {
	if _, err := LandlockABI(); err != nil {
		b.Skipf("no kernel floor here: %v", err)
	}
	home, _ := os.UserHomeDir()
	deny := []string{}
	for _, rel := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".config/nodwyn", ".local/share/nodwyn"} {
		deny = append(deny, filepath.Join(home, rel))
	}
	deny = append(deny, b.TempDir()) // one that exists, so / is walked
	for _, floor := range []bool{false, true} {
		name := "off"
		opts := HostOptions{Settle: 50 * time.Millisecond}
		if floor {
			name = "on"
			f, err := NewFloor(deny, nil)
			if err != nil {
				b.Fatal(err)
			}
			opts.Floor = f
		}
		b.Run(name, func(b *testing.B) {
			s := NewHost(opts)
			defer s.Close()
			for b.Loop() {
				o, err := s.Run(context.Background(), Command{Argv: []string{"/bin/true"}, Dir: "/", Env: os.Environ()})
				if err != nil || o.ExitCode != 0 {
					b.Fatal(err, o.Text())
				}
			}
		})
	}
}

// BenchmarkFloorBuild is building one command's ruleset alone.
func BenchmarkFloorBuild(b *testing.B) {
	if _, err := LandlockABI(); err != nil {
		b.Skipf("no kernel floor here: %v", err)
	}
	f, err := NewFloor([]string{b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for b.Loop() {
		rs, err := f.build()
		if err != nil {
			b.Fatal(err)
		}
		rs.close()
	}
}

// Package managers and compilers that keep their files in the home work
// under the floor: pip install --user, npm i -g, go build with its caches
// in the home, apt-get (simulated: no download). The home is one that has
// been used (~/.cache and ~/.local exist); on a fresh one, the first
// command that makes ~/.cache itself meets the limit TestFloorLimitsAreSaid
// pins, and the next one goes through.
func TestFloorLetsToolchainsWork(t *testing.T) {
	slowTest(t)
	needFloor(t)
	h := newCanaryHome(t)
	for _, d := range []string{".cache", ".local/lib", ".local/bin", "go"} {
		if err := os.MkdirAll(filepath.Join(h.home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb := h.host(t, true)
	pkg := filepath.Join(h.folder, "pkg")
	os.MkdirAll(filepath.Join(pkg, "floorpkg"), 0o755)
	writeWheel(t, filepath.Join(pkg, "floorpkg-1.0-py3-none-any.whl"))
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "floor-npm-test", "version": "1.0.0", "bin": {"floor-npm-test": "cli.js"}}`), 0o644)
	os.WriteFile(filepath.Join(pkg, "cli.js"), []byte("#!/usr/bin/env node\nconsole.log('npm ok')\n"), 0o755)
	gomod := filepath.Join(h.folder, "gomod")
	os.MkdirAll(gomod, 0o755)
	os.WriteFile(filepath.Join(gomod, "go.mod"), []byte("module floortest\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(gomod, "main.go"), []byte("package main\n\nfunc main() { println(\"go ok\") }\n"), 0o644)
	cases := []struct{ name, tool, line string }{
		{"pip install --user", "pip3", `pip3 install -q --user --no-index ./pkg/floorpkg-1.0-py3-none-any.whl && python3 -c 'import floorpkg; print(floorpkg.X)' && pip3 uninstall -q -y floorpkg`},
		{"npm i -g", "npm", `npm i -g --offline --no-audit --no-fund ./pkg >/dev/null && floor-npm-test && npm rm -g floor-npm-test >/dev/null`},
		{"go build, caches in the home", "go", `cd gomod && GOCACHE=$HOME/.cache/go-build GOPATH=$HOME/go GOFLAGS=-mod=mod go build -o app . && ./app`},
		{"apt-get (simulated)", "apt-get", `apt-get install -s -y hostname >/dev/null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("%s is not installed", c.tool)
			}

			if o := h.run(t, sb, c.line); o.ExitCode != 0 {
				t.Errorf("refused under the floor:\n%s", o.Text())
			}
		})
	}
}

// writeWheel writes a minimal wheel of a package floorpkg (X = 42): pip
// installs it without building anything or reaching an index.
func writeWheel(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	files := []struct{ name, body string }{
		{"floorpkg/__init__.py", "X = 42\n"},
		{"floorpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: floorpkg\nVersion: 1.0\n"},
		{"floorpkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: nodwyn-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, fl := range files {
		w, err := z.Create(fl.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(fl.body))
		sum := sha256.Sum256([]byte(fl.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(fl.body))
	}
	record.WriteString("floorpkg-1.0.dist-info/RECORD,,\n")
	w, _ := z.Create("floorpkg-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// untilTrusted waits until the floor trusts the stamps of dirs: their last
// change older than its window (stampWindow), 20 ms on most file systems,
// two seconds on those of whole-second times.
func untilTrusted(dirs ...string) {
	var until time.Time
	for _, d := range dirs {
		st, ok := stampOf(d)
		if !ok {
			continue
		}
		for _, ts := range []unix.Timespec{st.mtime, st.ctime} {
			if u := time.Unix(ts.Unix()).Add(stampWindow(st) + 10*time.Millisecond); u.After(until) {
				until = u
			}
		}
	}
	time.Sleep(time.Until(until))
}

// quietCanaryHome is a canary home in a quiet place, and that place: under
// /tmp, which other tests change all the time, /tmp is an ancestor and
// every command would build again.
func quietCanaryHome(t *testing.T) (*canaryHome, string) {
	t.Helper()
	quiet, err := os.MkdirTemp("/var/tmp", "nodwyn-floor-test-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(quiet) })
	return newCanaryHomeAt(t, quiet), quiet
}

// The last ruleset is used again while nothing it was built from changed,
// and built again when something did: an entry made in an ancestor (the
// next command may read it), a denied path that appears where nothing of
// the floor's was (made by someone else: the user's own aws configure).
func TestFloorBuildsAgainWhenWhatItDeniesChanges(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	elsewhere := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(elsewhere, 0o755)
	h.deny = append(h.deny, filepath.Join(elsewhere, ".kube"))
	sb := h.host(t, true)
	f := sb.Floor()
	builds := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.builds }
	untilTrusted(filepath.Dir(quiet), quiet, h.home) // the ancestors' last change is old enough to trust
	h.run(t, sb, `true`)
	n := builds()
	for range 3 {
		h.run(t, sb, `true`)
	}
	if builds() != n {
		t.Errorf("%d builds for commands that changed nothing; want the last one used again", builds()-n)
	}
	h.run(t, sb, `mkdir ~/.late`)
	if o := h.run(t, sb, `echo late > ~/.late/f && cat ~/.late/f`); o.ExitCode != 0 {
		t.Errorf("a directory made in the home by the last command is not granted:\n%s", o.Text())
	}
	if builds() == n {
		t.Errorf("no new build after the home changed")
	}
	untilTrusted(h.home)
	h.run(t, sb, `true`)
	p := filepath.Join(elsewhere, ".kube", "config")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(canary+"\n"), 0o600)
	if o := h.run(t, sb, `cat `+p); o.ExitCode == 0 || h.leaked(t, o) {
		t.Errorf("a denied directory that appeared since the last build is readable:\n%s", o.Text())
	}
}

// A denied path in a stamped directory is not looked at itself while that
// directory is unchanged (Floor.fresh), so every way of making, replacing
// or moving one there must change the directory's stamp: each is denied to
// the next command, and the ruleset was used again until then.
func TestFloorSeesADeniedPathChangedInAStampedDirectory(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	late := filepath.Join(h.home, ".docker") // denied, not there yet
	h.deny = append(h.deny, late)
	// and one whose directory is not there either, in a directory the
	// ruleset grants whole
	other, deep := secondHome(t, h, quiet, false)
	sb := h.host(t, true)
	f := sb.Floor()
	builds := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.builds }
	plant := func(dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(canary+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	aws := filepath.Join(h.home, ".aws")
	spare := filepath.Join(h.home, "spare")
	plant(spare) // a directory the ruleset grants
	for _, c := range []struct {
		what   string
		change func()
		read   string
	}{
		{"a denied directory made where there was none", func() { plant(late) }, filepath.Join(late, "secret")},
		{"a denied directory replaced by a granted one moved there", func() {
			os.Rename(aws, filepath.Join(h.home, ".aws-old"))
			os.Rename(spare, aws)
		}, filepath.Join(aws, "secret")},
		{"a denied directory removed and made again", func() {
			os.RemoveAll(late)
			plant(late)
		}, filepath.Join(late, "secret")},
		{"a denied directory made with its directory, where neither was", func() { plant(deep) }, filepath.Join(deep, "secret")},
	} {
		untilTrusted(filepath.Dir(quiet), quiet, h.home, other)
		h.run(t, sb, `true`)
		n := builds()
		h.run(t, sb, `true`)
		if builds() != n {
			t.Fatalf("%s: the ruleset was built again before the change", c.what)
		}
		c.change()
		if o := h.run(t, sb, `cat `+c.read); o.ExitCode == 0 || h.leaked(t, o) {
			t.Errorf("%s: readable by the next command:\n%s", c.what, o.Text())
		}
		if builds() == n {
			t.Errorf("%s: no new build", c.what)
		}
	}
}

// A change to the home is trusted as soon as it is older than the
// timestamps' granularity, not a second later: after a command that makes
// a directory there, the next builds the ruleset again and, once the change
// is a fifth of a second old (well past any tick, well short of a second),
// every command after it uses that build. With a second's window every
// command of that second built anew (a harness's run in a fresh HOME).
//
// The change's age is read from its own stamp, so a slow machine only makes
// it older. Only what others do to the stamped directories outside the home
// (/var/tmp above it) can add builds: that is seen, and the round is tried
// again.
func TestFloorTrustsAChangeOnceItIsOlderThanTheTimestampsTick(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	sb := h.host(t, true)
	f := sb.Floor()
	builds := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.builds }
	stamped := func() map[string]stamp { // what the last build stamped, as it is now
		f.mu.Lock()
		dirs := slices.Collect(maps.Keys(f.last.stamps))
		f.mu.Unlock()
		now := map[string]stamp{}
		for _, d := range dirs {
			now[d], _ = stampOf(d)
		}
		return now
	}
	const age = 200 * time.Millisecond
	for round := 1; ; round++ {
		// The other stamped directories' last changes trusted first (the
		// home's own, its canaries made, with them: it is one of them).
		h.run(t, sb, `true`)
		untilTrusted(slices.Collect(maps.Keys(stamped()))...)
		late := fmt.Sprintf("~/.late%d", round)
		h.run(t, sb, `mkdir `+late)
		home, _ := stampOf(h.home)
		if w := stampWindow(home); w > time.Second {
			t.Skipf("the file system under %s keeps whole seconds: a change is trusted after %v", quiet, w)
		}
		// Until the home's change is age old, read from its stamp.
		time.Sleep(time.Until(time.Unix(home.mtime.Unix()).Add(age)))
		before, from := stamped(), time.Now()
		n := builds()
		for range 5 {
			h.run(t, sb, `true`)
		}
		got := builds() - n
		after := stamped()
		if noise := othersChanged(h.home, before, after, from); noise != "" && round < 5 {
			t.Logf("round %d: %s changed meanwhile; again", round, noise)
			continue
		}
		if got != 1 {
			t.Errorf("%d builds for five commands after the home changed %v before; want one (the first after the change)", got, age)
		}
		if o := h.run(t, sb, `echo late > `+late+`/f && cat `+late+`/f`); o.ExitCode != 0 {
			t.Errorf("the directory made in the home is not granted:\n%s", o.Text())
		}
		return
	}
}

// othersChanged names a stamped directory other than home whose stamp
// changed between before and after, or was not yet trusted at from (its
// window not passed), or says "".
func othersChanged(home string, before, after map[string]stamp, from time.Time) string {
	for d, b := range before {
		if d == home {
			continue
		}
		if after[d] != b {
			return d
		}
		since := from.Add(-stampWindow(b))
		if !time.Unix(b.mtime.Unix()).Before(since) || !time.Unix(b.ctime.Unix()).Before(since) {
			return d
		}
	}
	return ""
}

// A command under the floor cannot ptrace nodwyn (Landlock refuses a
// tracee outside the command's domain); without the floor, as root, it can.
// That the floor never restricts the main thread, which would put nodwyn in
// a command's domain, TestMain shows (it fails without the check; this test
// does not, since the scheduler rarely places the start there).
func TestFloorKeepsACommandFromTracingNodwyn(t *testing.T) {
	slowTest(t)
	needFloor(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	h := newCanaryHome(t)
	line := `python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = ` + strconv.Itoa(os.Getpid()) + `
if libc.ptrace(0x4206, pid, 0, 0) != 0: sys.exit("attach refused: %d" % ctypes.get_errno())
print("attached")'` // PTRACE_SEIZE: the tracee is not stopped, and is let go as the tracer exits
	if os.Geteuid() == 0 {
		if o := h.run(t, h.host(t, false), line); !strings.Contains(o.Out, "attached") {
			t.Logf("without the floor the attach did not succeed here (no CAP_SYS_PTRACE?): %s", o.Text())
		}
	}
	sb := h.host(t, true)
	for i := range 15 {
		if o := h.run(t, sb, line); strings.Contains(o.Out, "attached") {
			t.Fatalf("command %d under the floor attached to nodwyn:\n%s", i, o.Text())
		}
	}
}

// Nothing the floor restricts runs on the process's main thread: called
// there (TestMain runs on it), the floor does the work on another thread and
// the main thread can still read what the floor denies.
func testFloorLeavesTheMainThread(m *testing.M) string {
	if _, err := LandlockABI(); err != nil {
		return ""
	}
	dir, err := os.MkdirTemp("", "floor-main-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("x"), 0o600)
	f, err := NewFloor([]string{dir}, nil)
	if err != nil {
		return err.Error()
	}
	rs, err := f.current()
	if err != nil {
		return err.Error()
	}
	defer rs.close()
	errc := make(chan error, 1)
	var tid int
	f.onLockedThread(rs, nil, func() error { tid = unix.Gettid(); _, err := os.ReadFile(secret); return err }, errc)
	if err := <-errc; err == nil {
		return "the floor's work read a denied file"
	}
	if tid == unix.Getpid() {
		return "the floor's work ran on the main thread"
	}
	if _, err := os.ReadFile(secret); err != nil {
		return "after the floor's work the main thread is restricted: " + err.Error()
	}
	return ""
}

func TestMain(m *testing.M) {
	runtime.LockOSThread() // the main goroutine on the main thread
	if msg := testFloorLeavesTheMainThread(m); msg != "" {
		fmt.Fprintln(os.Stderr, "TestMain: "+msg)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The git that lists a working copy's files runs under the floor: the
// checkout's .git/config is the model's to write, and a core.excludesFile in
// a denied directory must not be read (whether a name is copied would tell
// what the denied file holds, a line at a time).
func TestTheWorkingCopysGitRunsUnderTheFloor(t *testing.T) {
	needFloor(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	h := newCanaryHome(t)
	if err := os.WriteFile(filepath.Join(h.home, ".aws", "patterns"), []byte("guess-1234.txt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(t.TempDir(), "ck")
	os.MkdirAll(ck, 0o755)
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.excludesFile", filepath.Join(h.home, ".aws", "patterns")}} {
		if out, err := exec.Command("git", append([]string{"-C", ck}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(ck, "guess-1234.txt"), []byte("x"), 0o644)
	for _, floor := range []bool{false, true} {
		sb := h.host(t, floor)
		w, err := copyCheckout(context.Background(), ck, t.TempDir(), []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH")}, nil, sb.Floor())
		if floor {
			// git cannot read the patterns: it refuses to list (the copy
			// fails, saying so), or lists without them.
			if err != nil {
				if !strings.Contains(err.Error(), "Permission denied") {
					t.Errorf("with the floor: %v", err)
				}
				continue
			}
		} else if err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(filepath.Join(w.Path, "guess-1234.txt"))
		copied := err == nil
		w.Remove()
		if copied != floor {
			t.Errorf("floor=%v: the guessed name copied=%v (without the floor git reads the denied patterns and leaves it out; with it, it cannot)", floor, copied)
		}
	}
}

// BenchmarkFloorDo is the floor's cost for one of the file tools' opens
// (Do): a file opened and closed without it and through it.
func BenchmarkFloorDo(b *testing.B) {
	if _, err := LandlockABI(); err != nil {
		b.Skipf("no kernel floor here: %v", err)
	}
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	deny := filepath.Join(dir, "secret")
	if err := os.Mkdir(deny, 0o700); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// ancestors unchanged of late, as a person's home is: the ruleset is
	// reused, not built again for each call (their times were set a
	// moment ago, which changed their ctime: the floor's window must pass)
	os.Chtimes(dir, old, old)
	os.Chtimes(filepath.Dir(dir), old, old)
	untilTrusted(dir, filepath.Dir(dir))
	f, err := NewFloor([]string{deny}, nil)
	if err != nil {
		b.Fatal(err)
	}
	open := func() error {
		fh, err := os.Open(file)
		if err != nil {
			return err
		}
		return fh.Close()
	}
	b.Run("off", func(b *testing.B) {
		for b.Loop() {
			if err := open(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("on", func(b *testing.B) {
		for b.Loop() {
			if err := f.Do(open); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package session

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

const catalogueCanary = "CANARY-catalogue-5e2b"

// catalogueHome is a temporary home holding a canary at every ~/ entry of
// the credential catalogue (in a file of a directory entry, as the file of
// a file entry), and the ordinary neighbours beside them.
func catalogueHome(t *testing.T) (home, folder, scratch string, entries []string) {
	t.Helper()
	home = t.TempDir()
	folder = filepath.Join(t.TempDir(), "proj")
	scratch = filepath.Join(home, ".local/share/nodwyn/scratch/s1")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range guard.Catalogue() {
		rel, ok := strings.CutPrefix(e.Path, "~/")
		if !ok {
			continue
		}
		p := filepath.Join(home, rel)
		if e.Dir {
			p = filepath.Join(p, "secret")
		}
		write(p, catalogueCanary+" "+e.Path+"\n")
		entries = append(entries, p)
	}
	// The neighbours: the same names in the folder, other files beside a
	// denied file, a directory's sibling.
	write(filepath.Join(folder, ".npmrc"), "registry=http://127.0.0.1:4873/\n")
	write(filepath.Join(folder, ".netrc"), "machine localhost login test\n")
	write(filepath.Join(home, ".docker/contexts/meta.json"), "{}\n")
	write(filepath.Join(home, ".config/rclone/notes.txt"), "ordinary\n")
	write(filepath.Join(home, ".cargo/config.toml"), "[build]\n")
	write(filepath.Join(home, ".claude/settings.json"), "{}\n")
	write(filepath.Join(home, ".bashrc"), "# rc\n")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	return home, folder, scratch, entries
}

func catalogueRun(t *testing.T, h *sandbox.NoSandbox, home, folder, line string) string {
	t.Helper()
	o, err := h.Run(context.Background(), sandbox.Command{Shell: "/bin/bash", Line: line, Dir: folder,
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return o.Text()
}

// TestTheFloorDeniesEveryCatalogueEntry: with the floor the session makes
// from the catalogue, no command reads a canary at any entry — a file
// entry is denied as a directory is — while the ordinary neighbours are
// read; without the floor the same commands read every canary (the test
// can fail).
func TestTheFloorDeniesEveryCatalogueEntry(t *testing.T) {
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
	home, folder, scratch, entries := catalogueHome(t)
	g := guard.Options{Folder: folder, Scratch: scratch, Home: home,
		ConfigDir: filepath.Join(home, ".config/nodwyn"), DataDir: filepath.Join(home, ".local/share/nodwyn")}
	f, line, _ := makeFloor(g, false, nil)
	if f == nil {
		t.Fatalf("floor: %s", line)
	}
	defer f.Close()
	floored := sandbox.NewHost(sandbox.HostOptions{Floor: f, StopGrace: 200 * time.Millisecond, Settle: 50 * time.Millisecond})
	plain := sandbox.NewHost(sandbox.HostOptions{StopGrace: 200 * time.Millisecond, Settle: 50 * time.Millisecond})
	defer floored.Close()
	defer plain.Close()

	// cat names each path; a program builds each name from code points,
	// nothing a guard reads on the line.
	var cat strings.Builder
	var lists []string
	for _, p := range entries {
		cat.WriteString(`cat "` + p + `" 2>&1; `)
		codes := make([]string, 0, len(p))
		for _, r := range p {
			codes = append(codes, strconv.Itoa(int(r)))
		}
		lists = append(lists, "["+strings.Join(codes, ",")+"]")
	}
	py := `python3 - <<'EOF' 2>&1
for cs in [` + strings.Join(lists, ",") + `]:
    try:
        print(open("".join(map(chr, cs))).read())
    except OSError as e:
        print(e)
EOF`
	lines := []string{cat.String()}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		lines = append(lines, py)
	}
	for _, l := range lines {
		if out := catalogueRun(t, plain, home, folder, l); strings.Count(out, catalogueCanary) != len(entries) {
			t.Fatalf("without the floor not every canary was read (the test is broken): %s", out)
		}
		out := catalogueRun(t, floored, home, folder, l)
		if strings.Contains(out, catalogueCanary) {
			t.Errorf("under the floor a catalogue entry leaked:\n%s", out)
		}
		if n := strings.Count(out, "ermission denied"); n != len(entries) {
			t.Errorf("under the floor %d of %d entries were refused:\n%s", n, len(entries), out)
		}
	}
	for _, p := range []string{
		filepath.Join(folder, ".npmrc"), filepath.Join(folder, ".netrc"),
		filepath.Join(home, ".docker/contexts/meta.json"), filepath.Join(home, ".config/rclone/notes.txt"),
		filepath.Join(home, ".cargo/config.toml"), filepath.Join(home, ".claude/settings.json"), filepath.Join(home, ".bashrc"),
	} {
		if out := catalogueRun(t, floored, home, folder, `cat "`+p+`" >/dev/null && echo READ-OK`); !strings.Contains(out, "READ-OK") {
			t.Errorf("under the floor the ordinary %s was not read: %s", p, out)
		}
	}
}

package sandbox

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The guard's adversarial corpus (internal/guard/testdata/exfil.txt), run
// for real under the floor, with no guard in front: in a throw-away home
// with a canary in each denied directory, nodwyn's directories and the
// credentials directory outside it as the corpus places them, no line gets
// a canary into its output or into a file in the folder. Without the floor
// the same run must leak through some lines, or the test would show
// nothing.
func TestFloorHoldsTheExfiltrationCorpusForReal(t *testing.T) {
	slowTest(t)
	needFloor(t)
	if testing.Short() {
		t.Skip("runs every line of the corpus (-short)")
	}
	lines := readCorpus(t, "../guard/testdata/exfil.txt")
	root := t.TempDir()
	// A token of this run's own: a canary some other test left on the
	// machine (in /tmp, outside this home) is not this run's to find.
	h := &canaryHome{home: filepath.Join(root, "home"), token: canary + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	config, data, cred := filepath.Join(root, "xdg-config", "nodwyn"), filepath.Join(root, "xdg-data", "nodwyn"), filepath.Join(root, "cred")
	canaries := map[string]string{
		".ssh/id_rsa": "", ".ssh/config": "", ".ssh/authorized_keys": "", ".aws/credentials": "", ".aws/config": "",
		".gnupg/private-keys-v1.d/k.key": "", ".kube/config": "", ".config/gcloud/credentials.db": "",
		".azure/accessTokens.json": "", ".config/nodwyn/credentials.toml": "", ".local/share/nodwyn/journal/key": "",
	}
	var files []string
	for rel := range canaries {
		files = append(files, filepath.Join(h.home, rel))
	}
	files = append(files, filepath.Join(config, "config.toml"), filepath.Join(config, "credentials.toml"),
		filepath.Join(data, "sessions", "s1.json"), filepath.Join(data, "journal", "key"), filepath.Join(cred, "api-key"))
	for _, p := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(h.token+" "+p+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.deny = []string{config, data, cred}
	for _, rel := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".config/nodwyn", ".local/share/nodwyn"} {
		h.deny = append(h.deny, filepath.Join(h.home, rel))
	}
	h.scratch = filepath.Join(data, "scratch", "s1")
	os.MkdirAll(h.scratch, 0o700)
	expand := strings.NewReplacer("{{HOME}}", h.home, "{{CONFIG}}", config, "{{DATA}}", data, "{{CRED}}", cred, "↵", "\n")

	// run runs the corpus; with firstLeak it stops feeding lines once one
	// has leaked (the run without the floor only has to show that the
	// corpus can fail).
	run := func(floor, firstLeak bool) []string {
		sb := h.host(t, floor)
		leaked := make([]bool, len(lines))
		var any atomic.Bool
		var wg sync.WaitGroup
		next := make(chan int)
		for range 6 { // most lines end at once; a few wait for a network that is not there
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					lh := *h
					lh.folder = filepath.Join(root, "folder", strconv.Itoa(i))
					os.RemoveAll(lh.folder)
					os.MkdirAll(lh.folder, 0o755)
					o, err := sb.Run(context.Background(), Command{Shell: "/bin/bash", Line: expand.Replace(lines[i]), Dir: lh.folder,
						Env: []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + h.scratch,
							"XDG_CONFIG_HOME=" + filepath.Dir(config), "XDG_DATA_HOME=" + filepath.Dir(data), "CREDENTIALS_DIRECTORY=" + cred},
						Timeout: 5 * time.Second})
					if err != nil {
						t.Errorf("%s: %v", lines[i], err)
						continue
					}
					leaked[i] = lh.leaked(t, o)
					if leaked[i] {
						any.Store(true)
					}
				}
			}()
		}
		for i := range lines {
			if firstLeak && any.Load() {
				break
			}
			next <- i
		}
		close(next)
		wg.Wait()
		var leaks []string
		for i, l := range lines {
			if leaked[i] {
				leaks = append(leaks, l)
			}
		}
		return leaks
	}
	if leaks := run(true, false); len(leaks) > 0 {
		t.Errorf("with the floor, %d of %d lines got a canary into the output or the folder:\n%s", len(leaks), len(lines), strings.Join(leaks, "\n"))
	}
	off := run(false, true)
	if len(off) == 0 {
		t.Errorf("without the floor no line leaked: the corpus run shows nothing")
	}
	t.Logf("%d lines; with the floor none leaks; without it they do (%s, and others: the guard is what refuses them)", len(lines), off[0])
}

// readCorpus is the corpus's lines with their tags taken off.
func readCorpus(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		for _, tag := range []string{"sc: ", "floor: "} {
			l = strings.TrimPrefix(l, tag)
		}
		out = append(out, l)
	}
	if len(out) < 100 {
		t.Fatalf("%s: only %d lines", path, len(out))
	}
	return out
}

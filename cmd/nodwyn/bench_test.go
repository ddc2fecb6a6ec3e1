package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkProcess measures the whole process, as a harness sees it: the
// built binary runs a 20-turn session with the scripted model (20 numbered
// `shell-exec true` calls, then a reply). It reports the time from launch to
// the first model request (startup-ms) and the peak resident set of the run
// (peak-rss-MB, which counts the pages of the binary's file it touched)
// and, sampled at every event, its anonymous resident memory (anon-rss-MB:
// heap and stacks).
func BenchmarkProcess(b *testing.B) {
	dir := quietDir(b)
	bin := buildNodwyn(b, dir)
	var sb strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&sb, "> reply\ncall shell-exec {\"command\": \"true #%d\"}\n", i)
	}
	sb.WriteString("> reply\ndone\n")
	scriptPath := filepath.Join(dir, "bench.script")
	if err := os.WriteFile(scriptPath, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	folder := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	// The scratch directories go in a TMPDIR of their own, not in a
	// directory above HOME: one made there changes what the kernel floor's
	// ruleset was built from, and each command would build it anew (a
	// person's TMPDIR is not above their home either).
	for _, d := range []string{folder, home, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_DATA_HOME="+home+"/.local/share", "TMPDIR="+filepath.Join(dir, "tmp"))

	var startup time.Duration
	var rss, anon int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "run", "--unattended", "--json", "-q", "--script", scriptPath, "-C", folder, "bench")
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		first := time.Duration(0)
		for sc.Scan() {
			if first == 0 && strings.Contains(sc.Text(), `"type":"model.request"`) {
				first = time.Since(t0)
			}
			if a := rssAnonKB(cmd.Process.Pid); a > anon {
				anon = a
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("nodwyn run: %v", err)
		}
		if first == 0 {
			b.Fatal("no model request seen")
		}
		startup += first
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss {
			rss = ru.Maxrss
		}
	}
	b.ReportMetric(float64(startup.Microseconds())/1000/float64(b.N), "startup-ms")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
	b.ReportMetric(float64(anon)/1024, "anon-rss-MB")
}

// buildNodwyn builds the binary into dir as make build does (static,
// -trimpath, stripped), so the whole-process figures are those of what
// users run.
// quietDir is a directory for a benchmark's home, folder and TMPDIR, in a
// place other programs do not write in all the time: under /tmp, every
// file another program makes there changes a directory above the denied
// ones, and the kernel floor builds its ruleset again for the next command
// (a person's home is not under a busy /tmp either). b.TempDir when
// /var/tmp cannot be used.
func quietDir(b *testing.B) string {
	d, err := os.MkdirTemp("/var/tmp", "nodwyn-bench-")
	if err != nil {
		return b.TempDir()
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func buildNodwyn(b *testing.B, dir string) string {
	bin := filepath.Join(dir, "nodwyn")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// rssAnonKB reads a process's anonymous resident memory (heap, stacks: what
// is not pages of the binary's file) from /proc/PID/status, sampled while it
// runs; 0 when unknown.
func rssAnonKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return 0
}

// sseAnswer writes a Chat Completions stream chunk that answers "Done."
// and ends the turn; sseEnd the usage chunk and [DONE] after it (the
// benchmarks' local OpenAI-compatible servers).
func sseAnswer(w io.Writer) {
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`+"\n\n")
}

func sseEnd(w io.Writer) {
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
}

package store

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestLogWriteAssignsSeqAndTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s", "events.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev := Event{Type: "run.start", Data: map[string]any{"folder": "/x"}}
	if err := l.Write(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 1 || ev.Time.IsZero() {
		t.Errorf("after Write: Seq %d Time %v, want 1 and a time", ev.Seq, ev.Time)
	}
	at := time.Date(2026, 12, 2, 13, 55, 1, 0, time.UTC)
	ev2 := Event{Type: "note", Time: at}
	if err := l.Write(&ev2); err != nil {
		t.Fatal(err)
	}
	if ev2.Seq != 2 || !ev2.Time.Equal(at) {
		t.Errorf("second event: Seq %d Time %v", ev2.Seq, ev2.Time)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestLogIsReadableWhileBeingWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 1; i <= 3; i++ {
		if err := l.Write(&Event{Type: "note", Data: map[string]any{"text": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
		// A second reader, with the log still open, sees every event so far.
		evs, err := ReadLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != i || evs[i-1].Data["text"] != fmt.Sprint(i) {
			t.Fatalf("after %d writes a reader sees %d events: %+v", i, len(evs), evs)
		}
	}
}

// TestHelperWriteLog is the child of TestKilledWriterLeavesAReadableLog: it
// writes events, says so, and waits to be killed.
func TestHelperWriteLog(t *testing.T) {
	path := os.Getenv("NODWYN_STORE_HELPER_LOG")
	if path == "" {
		t.Skip("helper process for TestKilledWriterLeavesAReadableLog")
	}
	l, err := OpenLog(path)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	for i := range 50 {
		if err := l.Write(&Event{Type: "tool.call", Data: map[string]any{"i": i, "args": strings.Repeat("x", i*100)}}); err != nil {
			fmt.Println("error", err)
			return
		}
	}
	fmt.Println("written")
	io.ReadAll(os.Stdin) // until killed; the log is never closed
}

func TestKilledWriterLeavesAReadableLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriteLog$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NODWYN_STORE_HELPER_LOG="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "written\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	evs, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 50 || evs[49].Seq != 50 {
		t.Fatalf("after SIGKILL the log reads %d events, want 50", len(evs))
	}
	// And a resumed session continues the numbering.
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev := Event{Type: "run.start"}
	if err := l.Write(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 51 {
		t.Errorf("resumed log gave Seq %d, want 51", ev.Seq)
	}
}

func TestReadLogToleratesATruncatedLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.Write(&Event{Type: "note"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":4,"time":"2026-12-02T13:55:01Z","type":"tool.res`)
	f.Close()

	evs, err := ReadLog(path)
	if err != nil {
		t.Fatalf("ReadLog of a truncated log: %v", err)
	}
	if len(evs) != 3 {
		t.Fatalf("read %d events, want 3", len(evs))
	}

	// Reopening cuts the partial line, so the next event is whole and numbered
	// after the last whole one.
	l, err = OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	ev := Event{Type: "run.start"}
	if err := l.Write(&ev); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if ev.Seq != 4 {
		t.Errorf("Seq after reopening = %d, want 4", ev.Seq)
	}
	evs, err = ReadLog(path)
	if err != nil || len(evs) != 4 || evs[3].Type != "run.start" {
		t.Fatalf("after reopen: %v, %+v", err, evs)
	}
}

func TestReadLogRefusesAMalformedMiddleLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(path, []byte("{\"seq\":1,\"type\":\"note\"}\nnot json\n{\"seq\":3,\"type\":\"note\"}\n"), 0o600)
	_, err := ReadLog(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("ReadLog = %v, want an error naming %s line 2", err, path)
	}
	// Opening it for appending still works: the numbering goes on from the
	// last event.
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev := Event{Type: "note"}
	l.Write(&ev)
	if ev.Seq != 4 {
		t.Errorf("Seq = %d, want 4", ev.Seq)
	}
}

func TestReadLogMissingFile(t *testing.T) {
	_, err := ReadLog(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil {
		t.Fatal("ReadLog of a missing file succeeded")
	}
}

func TestLogConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := Event{Type: "tool.result", Data: map[string]any{"w": w, "i": i, "output": strings.Repeat("y", 1000+i)}}
				if err := l.Write(&ev); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	evs, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("read %d events, want %d", len(evs), writers*each)
	}
	for i, ev := range evs {
		if ev.Seq != i+1 {
			t.Fatalf("event %d has Seq %d: numbers out of order in the file", i, ev.Seq)
		}
	}
}

func TestLogWriteOfAnUnencodableEventIsAnError(t *testing.T) {
	l, err := OpenLog(filepath.Join(t.TempDir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(&Event{Type: "note", Data: map[string]any{"c": make(chan int)}}); err == nil {
		t.Fatal("Write of a channel succeeded")
	}
	ev := Event{Type: "note"}
	if err := l.Write(&ev); err != nil || ev.Seq != 1 {
		t.Errorf("next Write: %v, Seq %d; want Seq 1 (the failed event took no number)", err, ev.Seq)
	}
}

func TestLogWriteAfterCloseIsAnError(t *testing.T) {
	l, err := OpenLog(filepath.Join(t.TempDir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := l.Write(&Event{Type: "note"}); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

func BenchmarkLogWrite(b *testing.B) {
	l, err := OpenLog(filepath.Join(b.TempDir(), "events.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	for b.Loop() {
		ev := Event{Type: "tool.call", Data: map[string]any{"name": "shell-exec", "args": map[string]any{"command": "true"}}}
		if err := l.Write(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

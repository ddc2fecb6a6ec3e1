//go:build linux

package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/store"
)

// killedRoot, in a helper process's environment, is where the session it
// runs until it is killed keeps its folder and data.
const killedRoot = "NODWYN_TEST_KILLED_ROOT"

// Not a test by itself: the process TestACommandRunningWhenKilledIsToldOnResume
// starts and kills while its command runs.
func TestKilledHelperProcess(t *testing.T) {
	root := os.Getenv(killedRoot)
	if root == "" {
		t.Skip("a helper process of TestACommandRunningWhenKilledIsToldOnResume")
	}
	st, err := store.Open(filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Folder: filepath.Join(root, "proj"), Instruction: "wait for it", Store: st, Unattended: true,
		Dirs: config.Dirs{Config: filepath.Join(root, "config"), Data: filepath.Join(root, "data")}}
	opts.Model = script(t, `
> reply
call shell-exec {"command": "echo $$ > pid; echo early-output; touch started; exec sleep 120"}
> reply
not reached
`)
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background()) // killed in here
	t.Fatal("the run ended: it was to be killed while its command ran")
}

// A session killed while a command runs, then resumed: the model is told
// the command ran and the session ended while it did (not that it never
// ran), and the log has the call's tool.result (issue 29, item 5).
func TestACommandRunningWhenKilledIsToldOnResume(t *testing.T) {
	opts := baseOpts(t)
	root := filepath.Dir(opts.Folder)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), killedRoot+"="+root, "XDG_DATA_HOME="+filepath.Join(root, "data"))
	opts.Store, _ = store.Open(filepath.Join(root, "data"))
	opts.Dirs.Data = filepath.Join(root, "data")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(opts.Folder, "started"))
	cmd.Process.Kill()
	cmd.Wait()
	if b, err := os.ReadFile(filepath.Join(opts.Folder, "pid")); err == nil { // the command outlives its session
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	list, err := opts.Store.ListSessions()
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions after the kill: %+v, %v\n%s", list, err, out.String())
	}
	id := list[0].ID

	opts.ResumeID, opts.Instruction = id, ""
	r := runSession(t, opts, "> reply\nResumed.\n")
	if r.out.Status != "finished" {
		t.Fatalf("resumed: %+v", r.out)
	}
	read := contents(r.model.Requests()[0].Messages)
	if len(read) != 4 || !strings.Contains(read[2], "the session ended while it ran") || strings.Contains(read[2], "not run") {
		t.Errorf("the model read %q", read)
	}
	evs, err := store.ReadLog(opts.Store.LogPath(id))
	if err != nil {
		t.Fatal(err)
	}
	var calls, results int
	for _, ev := range evs {
		switch ev.Type {
		case "tool.call":
			calls++
		case "tool.result":
			results++
			if ev.Data["stopped"] != "session-ended" {
				t.Errorf("the call's tool.result: %+v", ev.Data)
			}
		}
	}
	if calls != 1 || results != 1 {
		t.Errorf("the log has %d tool.call and %d tool.result events", calls, results)
	}
}

// A resumed session whose state.json was lost says, at its run.start,
// that its state was rebuilt from the log (issue 29, item 9).
func TestAResumeFromARebuiltStateSaysSo(t *testing.T) {
	opts := baseOpts(t)
	r := runSession(t, opts, "> reply\nFirst.\n")
	if err := os.Remove(opts.Store.StatePath(r.s.ID)); err != nil {
		t.Fatal(err)
	}
	opts.ResumeID, opts.Instruction = r.s.ID, ""
	again := runSession(t, opts, "> reply\nAgain.\n")
	if notes := again.notes("state.json is missing; the state was rebuilt from"); len(notes) != 1 {
		t.Errorf("the notes: %q", again.notes(""))
	}
}

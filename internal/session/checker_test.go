package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A project checker only judges (issue 8 item 4): while it runs, call-tool,
// model-turn, add-message! and finish! raise an error, which refuses the
// call it was judging; the tool it tried to run never runs, and nothing it
// tried reaches the conversation.
func TestAProjectCheckerCannotAct(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"call-tool", `(call-tool "shell-exec" "{\"command\": \"touch from-checker\"}")`},
		{"model-turn", `(model-turn "system" '())`},
		{"add-message!", `(add-message! 'user "injected by the checker")`},
		{"finish!", `(finish! 'finished "the checker ended the run")`},
		{"self-check", `(self-check)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := baseOpts(t)
			writeInit(t, &opts, `
(add-checker!
 (lambda (tool args)
   `+tc.body+`
   #f)
 "acting")
`)
			r := runSession(t, opts, `
> reply
call shell-exec {"command": "touch from-model"}
> reply
done
`)
			if r.out.Status != "finished" || r.out.Text == "the checker ended the run" {
				t.Fatalf("outcome %+v", r.out)
			}
			reqs := r.model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests; want 2 (the checker may not ask the model)", len(reqs))
			}
			res := lastMessage(reqs[1])
			if !res.IsError || !strings.Contains(res.Content, "not allowed inside a guard checker") || !strings.Contains(res.Content, tc.name) {
				t.Errorf("the call the checker judged was not refused for its %s: %q", tc.name, res.Content)
			}
			for _, m := range reqs[1].Messages {
				if strings.Contains(m.Content, "injected by the checker") {
					t.Errorf("the checker's message reached the conversation")
				}
			}
			for _, f := range []string{"from-checker", "from-model"} {
				if _, err := os.Stat(filepath.Join(opts.Folder, f)); err == nil {
					t.Errorf("%s exists: a tool ran", f)
				}
			}
			var calls int
			for _, e := range r.events {
				if e.Type == "tool.call" {
					calls++
				}
			}
			if calls != 1 {
				t.Errorf("%d tool.call events; want the model's one", calls)
			}
		})
	}
}

// A checker that never returns is stopped by the run's deadline: the call
// it judged is refused, and the run ends at --timeout, not never.
func TestACheckerThatLoopsEndsWithTheRun(t *testing.T) {
	opts := baseOpts(t)
	opts.Timeout = 2 * time.Second
	writeInit(t, &opts, `
(add-checker! (lambda (tool args) (let loop () (loop))) "spin")
`)
	start := time.Now()
	r := runSession(t, opts, `
> reply
call shell-exec {"command": "touch from-model"}
> reply
done
`)
	if time.Since(start) > time.Minute {
		t.Fatalf("the run took %s", time.Since(start))
	}
	if r.out.Err == nil {
		t.Fatalf("the run did not stop at its deadline: %+v", r.out)
	}
	if _, err := os.Stat(filepath.Join(opts.Folder, "from-model")); err == nil {
		t.Error("the call the looping checker judged ran")
	}
}

// (changed-files) asks git through prim, with the scrubbed environment: a
// GIT_DIR in nodwyn's own environment does not point it elsewhere.
func TestChangedFilesAsksGitWithTheScrubbedEnvironment(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	opts := baseOpts(t)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GIT_DIR=") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(opts.Folder, "init", "-q")
	os.WriteFile(filepath.Join(opts.Folder, "a.txt"), []byte("a\n"), 0o644)
	git(opts.Folder, "add", ".")
	git(opts.Folder, "commit", "-q", "-m", "one")
	// A GIT_DIR that is no repository: git run with nodwyn's own
	// environment fails and sees nothing.
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "not-a-repository"))
	writeInit(t, &opts, `
(define-profile 'probe
  (list (cons 'turn-end (lambda (reply)
                          (log-note (format #f "changed: ~s" (changed-files)))
                          #f))))
`)
	opts.Profile = "probe"
	r := runSession(t, opts, `
> reply
call shell-exec {"command": "echo b > b.txt"}
> reply
done
`)
	var note string
	for _, e := range r.events {
		if e.Type == "note" {
			if s, _ := e.Data["text"].(string); strings.HasPrefix(s, "changed:") {
				note = s
			}
		}
	}
	if !strings.Contains(note, `"b.txt"`) {
		t.Errorf("changed-files did not see b.txt in the folder's repository: %q", note)
	}
}

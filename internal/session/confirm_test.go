package session

import (
	"context"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/guard"
)

// An attended run asks a person about confirms; "always" makes a standing
// approval for that command line (and the same line with more words), so it
// is not asked about again, while another rm -rf still is; a declined call
// did not run and the model is told why.
func TestAPersonAnswersConfirms(t *testing.T) {
	opts := baseOpts(t)
	opts.Unattended = false
	var asked []string
	opts.Confirm = func(ctx context.Context, req guard.Request, d guard.Decision) (bool, bool) {
		cmd, _ := req.Args["command"].(string)
		asked = append(asked, cmd)
		switch {
		case cmd == "rm -rf a":
			return true, true // yes, always for this session
		default:
			return false, false
		}
	}
	r := runSession(t, opts, `
> reply
call shell-exec {"command": "mkdir -p a b c && rm -rf a"}
> reply
call shell-exec {"command": "rm -rf a"}
> reply
call shell-exec {"command": "rm -rf a"}
> reply
call shell-exec {"command": "rm -rf b"}
> reply
call shell-exec {"command": "curl -s http://127.0.0.1:9/"}
> reply
done
`)
	if r.out.Status != "finished" {
		t.Fatalf("status %s: %s", r.out.Status, r.out.Text)
	}
	want := []string{"mkdir -p a b c && rm -rf a", "rm -rf a", "rm -rf b", "curl -s http://127.0.0.1:9/"}
	if strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Fatalf("asked about %q, want %q", asked, want)
	}
	reqs := r.model.Requests()
	again := lastMessage(reqs[3])
	if again.IsError {
		t.Fatalf("the approved line did not run again: %q", again.Content)
	}
	curl := lastMessage(reqs[5])
	if !curl.IsError || !strings.Contains(curl.Content, "declined by a person") {
		t.Fatalf("the declined call's result: %q", curl.Content)
	}
}

// Unattended: ordinary confirms are declined unless --yolo answers them;
// security confirms are declined even then.
func TestUnattendedConfirms(t *testing.T) {
	for _, yolo := range []bool{false, true} {
		opts := baseOpts(t)
		opts.Yolo = yolo
		r := runSession(t, opts, `
> reply
call shell-exec {"command": "rm -rf build"}
> reply
call shell-exec {"command": "cat /etc/hostname"}
> reply
done
`)
		reqs := r.model.Requests()
		rm := lastMessage(reqs[1])
		if ran := !rm.IsError; ran != yolo {
			t.Errorf("yolo=%v: rm -rf ran=%v (%q)", yolo, ran, rm.Content)
		}
		outside := lastMessage(reqs[2])
		if !outside.IsError {
			t.Errorf("yolo=%v: a line naming a path outside the folder ran unattended: %q", yolo, outside.Content)
		}
	}
}

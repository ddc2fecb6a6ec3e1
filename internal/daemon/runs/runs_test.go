package runs

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/daemon/wire"
	"github.com/nodwyn/nodwyn/internal/session"
)

// Open confirms are listed in the order they were asked: c2 before c10.
func TestOpenConfirmsAreInTheOrderAsked(t *testing.T) {
	r := &Run{confirms: map[string]*pendingConfirm{}}
	for _, n := range []int{10, 2, 1} {
		id := "c" + strconv.Itoa(n)
		r.confirms[id] = &pendingConfirm{seq: n, info: wire.ConfirmAsk{Confirm: id}}
	}
	var got []string
	for _, c := range r.openConfirms() {
		got = append(got, c.Confirm)
	}
	if strings.Join(got, " ") != "c1 c2 c10" {
		t.Errorf("open confirms %v, want c1 c2 c10", got)
	}
}

// A client that starts following a run as it ends is ended with it: its
// events channel is closed, never left open by a subscription that came in
// between the run closing its subscribers and saying it had ended (a
// run.events that hung for good under load).
//
// Before the fix it failed within 20,000 rounds; each is a few goroutine
// hand-offs, which a loaded machine makes slow (the package took 25 s in
// a cold make test, 2.6 s alone), so make test makes 2,000 and make test-slow
// (NODWYN_SLOW_TESTS=1) all 20,000.
func TestFollowingARunAsItEnds(t *testing.T) {
	rounds := 2000
	if os.Getenv("NODWYN_SLOW_TESTS") == "1" {
		rounds = 20000
	}
	for i := 0; i < rounds; i++ {
		r := &Run{subs: map[*Subscriber]struct{}{}, confirms: map[string]*pendingConfirm{}, done: make(chan struct{})}
		var sub *Subscriber
		started := make(chan struct{})
		got := make(chan struct{})
		go func() {
			close(started)
			sub, _ = r.Subscribe()
			close(got)
		}()
		<-started
		r.finish(session.Outcome{Status: "finished"}, nil)
		<-got
		select {
		case _, ok := <-sub.C:
			if ok {
				t.Fatal("an event on a run that had none")
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("iteration %d: a subscription made as the run ended was never closed", i)
		}
	}
}

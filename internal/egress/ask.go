package egress

import (
	"context"
	"net/netip"
	"sync"
)

// The rules a person's answer gives, as the log and the trajectory show
// them (Conn.Rule). A connection to a host allowed for the session after
// the answer shows the allowlist's rule for it: `"host" from person,
// session`.
const (
	RuleOnce    = "person, once"
	RuleSession = "person, session"
)

// Answer is the answer to a question about a host no rule allows.
type Answer struct {
	Allow bool
	// Session: the host joins the allowlist for the rest of the session
	// (with Allow).
	Session bool
	// Why a decline: who declined, or why nobody was asked ("declined by
	// a person", "declined: an unattended run declines a security
	// confirm"). The refusal tells it to the command.
	Why string
}

// Asking is a [Proxy.Decide] that decides by an allowlist and puts every
// other host to Ask: a person at the terminal may let it through once
// (this connection, and those to the same host that waited on the same
// question) or for the session (the host joins List). Connections to a
// host already being asked about wait for that answer instead of asking
// again; Ask itself is called from the connection's goroutine, possibly
// for several hosts at once (the caller serializes what it shows a
// person). Set List and Ask before the proxy starts.
type Asking struct {
	List *Allowlist
	// Ask asks about host:port, which the list refuses for why (its
	// rule). It may block until the person answers; it returns when ctx
	// ends (the proxy closed), declining. Nil declines every such host.
	Ask func(ctx context.Context, host string, port int, why string) Answer

	mu      sync.Mutex
	open    map[string]*question // host → the question being asked about it
	waiting int                  // connections waiting on another's question (tests)
}

type question struct {
	done chan struct{}
	ans  Answer
}

// Decide is the list's decision for a host it allows; for any other host,
// the answer to the question about it.
func (a *Asking) Decide(ctx context.Context, host string, port int) Decision {
	host = normalHost(host)
	d := a.List.Decide(ctx, host, port)
	if d.Allow || a.Ask == nil {
		return d
	}
	a.mu.Lock()
	q, waiting := a.open[host]
	if !waiting {
		// The list again, under a.mu: a host allowed for the session by
		// an answer given since the first look is not asked about again
		// (the answer's rule is added under a.mu before its question is
		// closed).
		if again := a.List.Decide(ctx, host, port); again.Allow {
			a.mu.Unlock()
			return again
		}
		if a.open == nil {
			a.open = map[string]*question{}
		}
		q = &question{done: make(chan struct{})}
		a.open[host] = q
	} else {
		a.waiting++
	}
	a.mu.Unlock()
	if waiting {
		defer func() {
			a.mu.Lock()
			a.waiting--
			a.mu.Unlock()
		}()
		select {
		case <-q.done:
		case <-ctx.Done():
			return Decision{Rule: d.Rule + "; declined: the proxy closed while the question waited"}
		}
	} else {
		q.ans = a.Ask(ctx, host, port, d.Rule)
		a.mu.Lock()
		if q.ans.Allow && q.ans.Session {
			// An exact rule; a person's (Local) only where the person
			// saw the address itself (localOK). A host Add refuses
			// (CheckPattern) is let through this once.
			if err := a.List.Add(Rule{Pattern: host, Source: RuleSession, Person: localOK(host)}); err != nil {
				q.ans.Session = false
			}
		}
		delete(a.open, host)
		a.mu.Unlock()
		close(q.done)
	}
	ans := q.ans
	switch {
	case !ans.Allow:
		why := ans.Why
		if why == "" {
			why = "declined"
		}
		return Decision{Rule: d.Rule + "; " + why}
	case ans.Session:
		return Decision{Allow: true, Rule: RuleSession, Local: localOK(host)}
	}
	return Decision{Allow: true, Rule: RuleOnce, Local: localOK(host)}
}

// localOK reports whether a person's yes about host may let it reach a
// loopback or link-local address ([Decision.Local]): only when the host is
// an address itself, or localhost, so the person saw where it goes. A yes
// to a name lets it reach public addresses only: a name the model made up
// that resolves to 127.0.0.1 would otherwise reach the person's own
// services under a question that did not say so (only [sandbox]
// allow_hosts names such a host).
func localOK(host string) bool {
	if host == "localhost" {
		return true
	}
	_, err := netip.ParseAddr(host)
	return err == nil
}

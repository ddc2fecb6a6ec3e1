package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// A command's connection to a host nothing allows is put to the person as
// a SECURITY confirm (issue 28): yes lets this connection through (and
// those to the same host waiting on the same question), always lets the
// host through for the rest of the session. An unattended run declines
// it, --yolo included, as it declines every security confirm; so does a
// run with --no-confirm or with nobody to ask. The connection waits for
// the answer while the turn runs, at most netConfirmWait: a person who has
// not answered by then declines. Questions go to the person one at a time
// (asking.go), and the proxy asks about a host once however many
// connections want it at the same moment (egress.Asking).

// NetTool and NetChecker are the tool and checker of the proxy's question
// as a confirm shows it: "SECURITY confirm (egress proxy): …", then
// "network example.com:443". Args has the one key "address" (host:port).
const (
	NetTool    = "network"
	NetChecker = "egress proxy"
)

// netConfirmWait is how long a connection waits for the person's answer.
const netConfirmWait = 2 * time.Minute

// NetConfirm reports whether a confirm is the egress proxy's question
// about a host.
func NetConfirm(req guard.Request, d guard.Decision) bool {
	return d.Verdict == guard.SecurityConfirm && req.Tool == NetTool && d.Checker == NetChecker
}

// OffersAlways reports whether a person may answer a confirm "always":
// an ordinary confirm (a standing approval for the command line or path),
// and the egress proxy's question (the host, for the rest of the
// session); no other security confirm. A console's prompt and the
// daemon's confirm.ask say what it offers from this.
func OffersAlways(req guard.Request, d guard.Decision) bool {
	return d.Verdict == guard.Confirm || NetConfirm(req, d)
}

// netDecision is the confirm a connection to host:port is.
func netDecision(host string, port int) guard.Decision {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	return guard.Decision{Verdict: guard.SecurityConfirm, Checker: NetChecker,
		Reason: "a command asks to connect to " + addr + ", a host nothing allows ([sandbox] allow_hosts in your config.toml allows one in every session)"}
}

func netRequest(host string, port int) guard.Request {
	return guard.Request{Tool: NetTool, Args: map[string]any{"address": net.JoinHostPort(host, strconv.Itoa(port))}}
}

func (s *Session) confirmMode() guard.Mode {
	return guard.Mode{Unattended: s.opts.Unattended, Yolo: s.opts.Yolo, NoConfirm: s.opts.NoConfirm}
}

// askNet is the proxy's question about host:port (egress.Asking.Ask): ctx
// ends when the proxy closes.
func (s *Session) askNet(ctx context.Context, host string, port int, _ string) egress.Answer {
	req, d := netRequest(host, port), netDecision(host, port)
	if _, decided := guard.AutoAllow(d, s.confirmMode()); decided {
		if s.opts.NoConfirm {
			return egress.Answer{Why: "declined: --no-confirm declines every confirm"}
		}
		return egress.Answer{Why: "declined: an unattended run declines a security confirm (--yolo answers only ordinary ones)"}
	}
	if s.opts.ConfirmNote == nil && s.opts.Confirm == nil {
		return egress.Answer{Why: "declined: nobody is here to ask (no terminal)"}
	}
	turn := s.asking.running()
	if turn == nil {
		return egress.Answer{Why: "declined: no turn of the session was running, so nobody was asked"}
	}
	wait := s.asking.wait
	if wait <= 0 {
		wait = netConfirmWait
	}
	errLate := fmt.Errorf("no answer within %v", wait)
	ctx, cancel := context.WithTimeoutCause(ctx, wait, errLate)
	defer cancel()
	stop := context.AfterFunc(turn, cancel)
	defer stop()
	a, _ := s.ask(ctx, req, d)
	switch {
	case a.yes:
		return egress.Answer{Allow: true, Session: a.always}
	case a.unanswered != "":
		return egress.Answer{Why: "declined: " + a.unanswered}
	case turn.Err() != nil:
		return egress.Answer{Why: "declined: no answer (" + stopCause(turn).why + " while the question waited)"}
	case errors.Is(context.Cause(ctx), errLate):
		return egress.Answer{Why: "declined: " + errLate.Error()}
	case ctx.Err() != nil:
		return egress.Answer{Why: "declined: the session ended while the question waited"}
	}
	if note := strings.TrimSpace(a.note); note != "" {
		return egress.Answer{Why: fmt.Sprintf("declined by a person, who said: %q", note)}
	}
	return egress.Answer{Why: "declined by a person"}
}

// landlockNetLine says how Landlock keeps commands to the proxy, and what
// it leaves open.
func landlockNetLine(ports []int, nsWhy string) string {
	ps := make([]string, len(ports))
	for i, p := range ports {
		ps[i] = strconv.Itoa(p)
	}
	word := "port "
	if len(ps) > 1 {
		word = "ports "
	}
	return "no network namespace (" + nsWhy + "), so Landlock lets commands connect over TCP only to " + word + strings.Join(ps, ", ") +
		" (the proxy's, and [sandbox] allow_ports); left open: a program that ignores the proxy settings reaches any host on those ports, and UDP (DNS included)"
}

// LandlockNetworkLine is what doctor says of the network where the session
// would have no network namespace (nsErr says why): kept to the proxy by
// Landlock's TCP rules, or open where the kernel's Landlock has none.
func LandlockNetworkLine(nsErr error, allowPorts []int) string {
	abi, err := sandbox.LandlockABI()
	switch {
	case err != nil:
		return fmt.Sprintf("open (no network namespace: %v; no kernel floor: %v)", nsErr, err)
	case abi < sandbox.NetABI:
		return fmt.Sprintf("open (no network namespace: %v; this kernel's Landlock (ABI %d) has no TCP rules, which came with ABI %d, Linux 6.7)", nsErr, abi, sandbox.NetABI)
	}
	line := "only through nodwyn's proxy (no network namespace: " + nsErr.Error() + "; Landlock lets commands connect over TCP only to the proxy's port"
	if len(allowPorts) > 0 {
		ps := make([]string, len(allowPorts))
		for i, p := range allowPorts {
			ps[i] = strconv.Itoa(p)
		}
		line += " and " + strings.Join(ps, ", ") + " ([sandbox] allow_ports)"
	}
	return line + "); left open: a program that ignores the proxy settings reaches any host on those ports, and UDP (DNS included); [sandbox] allow_hosts adds hosts"
}

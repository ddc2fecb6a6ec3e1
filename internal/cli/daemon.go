package cli

import (
	"context"
	"os/signal"
	"strings"

	"github.com/nodwyn/nodwyn/internal/daemon"
	"github.com/nodwyn/nodwyn/internal/daemon/methods"
)

// DaemonCmd is `nodwyn daemon`.
type DaemonCmd struct {
	Socket     string `help:"The socket to serve on (default: $XDG_RUNTIME_DIR/nodwyn/daemon.sock, else daemon.sock in nodwyn's data directory)."`
	NoKeychain bool   `name:"no-keychain" help:"The daemon's runs take provider keys only from its environment, credentials.toml and $CREDENTIALS_DIRECTORY, and never ask the system keychain (where 'nodwyn login' stores keys; 'nodwyn login --help' has the order). Without it a run asks the keychain, with a 2 s deadline, when those have no key."`

	NoKernelFloor bool `name:"no-kernel-floor" help:"Serve even where the kernel floor cannot be had, and let run.start ask for no_kernel_floor. Without the floor nothing but the guard's reading of command lines keeps the daemon's token from a run's commands: one that reads it can answer its own confirms, start runs and send the provider's key where it likes."`
}

// Help is shown after the flags of `nodwyn daemon --help`.
func (DaemonCmd) Help() string {
	return `Serves runs over JSON-RPC 2.0 on a unix socket, one JSON message per line
(docs/rpc.md): ` + strings.Join(methods.Names(), ", ") + `.

Only the daemon's own user (or root) is served, checked with SO_PEERCRED,
and only after daemon.hello with the token the daemon writes to its data
directory, which no command of a run can read (the guard's denylist and the
kernel floor cover it): a program a run started cannot drive the daemon.

Each run is a session of its own, with its own Scheme environment and guard,
taking the same path as 'nodwyn run' with the same options. Sandbox mode is a
run's: run.start's "sandbox": "container" is the only way to it.`
}

// Run serves until daemon.stop or a signal.
func (c *DaemonCmd) Run(e *env) error {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	return daemon.Serve(ctx, daemon.Config{Socket: c.Socket, NoKeychain: c.NoKeychain, NoKernelFloor: c.NoKernelFloor,
		Getenv: e.getenv, Stderr: e.stderr, Version: Version})
}

package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// needSessionNS skips where the session's namespaces cannot be had (not
// root, no Landlock), saying why.
func needSessionNS(t *testing.T) {
	t.Helper()
	if _, err := sandbox.LandlockABI(); err != nil {
		t.Skipf("no kernel floor here: %v", err)
	}
	ns, err := sandbox.NewSessionNS(true)
	if err != nil {
		t.Skipf("no session namespaces here: %v", err)
	}
	ns.Close()
}

// viaProxy is a bash line that asks the session's proxy ($http_proxy) for
// url by hand (no curl or python needed), printing the status line and
// body.
func viaProxy(url string) string {
	host := strings.TrimPrefix(url, "http://")
	host = host[:strings.Index(host, "/")]
	return fmt.Sprintf(`p=${http_proxy#http://}; p=${p%%/}; exec 3<>/dev/tcp/${p%%:*}/${p##*:} || exit 9; printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' >&3; cat <&3`, url, host)
}

// A whole run outside sandbox mode: commands reach the person's own
// 127.0.0.1 neither directly nor through the proxy until the person's
// config allows it, and each connection through the proxy is a net.conn
// event.
func TestRunsNetworkGoesThroughTheProxy(t *testing.T) {
	needSessionNS(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello-from-the-host")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	direct := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%s && echo DIRECT-CONNECTED || echo direct-refused`, port)
	lines := []string{direct, viaProxy(srv.URL + "/x")}
	script := "> reply\n"
	for _, l := range lines {
		b, _ := json.Marshal(map[string]string{"command": l})
		script += "call shell-exec " + string(b) + "\n"
	}
	script += "> reply\nDone.\n"

	for _, allowed := range []bool{false, true} {
		dir := t.TempDir()
		home, proj := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
		os.MkdirAll(proj, 0o755)
		sf := filepath.Join(dir, "m.script")
		os.WriteFile(sf, []byte(script), 0o644)
		if allowed {
			cfg := filepath.Join(home, ".config", "nodwyn")
			os.MkdirAll(cfg, 0o755)
			os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[sandbox]\nallow_hosts = [\"127.0.0.1\"]\n"), 0o644)
		}
		traj := filepath.Join(dir, "traj.json")
		code, out, errOut := nodwyn(homeEnv(home), "", "run", "--unattended", "--yolo", "--json", "--trajectory", traj, "--script", sf, "-C", proj, "go")
		if code != 0 {
			t.Fatalf("allowed=%v: exit %d\n%s", allowed, code, errOut)
		}
		var results []string
		var conns []map[string]any
		var confinement map[string]any
		for _, l := range strings.Split(out, "\n") {
			var ev struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if json.Unmarshal([]byte(l), &ev) != nil {
				continue
			}
			switch ev.Type {
			case "tool.result":
				o, _ := ev.Data["output"].(string)
				results = append(results, o)
			case "net.conn":
				conns = append(conns, ev.Data)
			case "run.start":
				confinement, _ = ev.Data["confinement"].(map[string]any)
			}
		}
		if len(results) != 2 {
			t.Fatalf("allowed=%v: %d results:\n%s", allowed, len(results), out)
		}
		if strings.Contains(results[0], "DIRECT-CONNECTED") {
			t.Errorf("allowed=%v: a command reached the person's 127.0.0.1 directly:\n%s", allowed, results[0])
		}
		if n, _ := confinement["network"].(string); !strings.Contains(n, "only through nodwyn's proxy") {
			t.Errorf("allowed=%v: run.start's confinement says network %q", allowed, n)
		}
		got := results[1]
		if len(conns) != 1 || conns[0]["host"] != "127.0.0.1" || conns[0]["allowed"] != allowed {
			t.Errorf("allowed=%v: net.conn events %v", allowed, conns)
		}
		// The trajectory carries the confinement and the connection.
		tb, _ := os.ReadFile(traj)
		var tj struct {
			Extra map[string]any `json:"extra"`
			Steps []struct {
				Extra map[string]any `json:"extra"`
			} `json:"steps"`
		}
		json.Unmarshal(tb, &tj)
		if _, ok := tj.Extra["confinement"]; !ok {
			t.Errorf("allowed=%v: the trajectory's extra has no confinement", allowed)
		}
		found := 0
		for _, st := range tj.Steps {
			if c, ok := st.Extra["net_conns"].([]any); ok {
				found += len(c)
			}
		}
		if found != 1 {
			t.Errorf("allowed=%v: %d connections in the trajectory's steps, want 1", allowed, found)
		}
		if allowed && !strings.Contains(got, "hello-from-the-host") {
			t.Errorf("an allowed host was not reached through the proxy:\n%s", got)
		}
		if !allowed && (!strings.Contains(got, "403") || !strings.Contains(got, "allow_hosts") || strings.Contains(got, "hello-from-the-host")) {
			t.Errorf("a host nobody allowed was not refused with a 403 that says how to allow it:\n%s", got)
		}
	}
}

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// fakeModel starts a fault-injecting OpenAI-compatible server in the test
// process and sets $MODEL_URL to its /v1 base URL: fakemodel MODE. The
// server counts the requests it gets in $WORK/model-requests (rewritten on
// each). Modes:
//
//	pings  a 200 event stream whose first chunk is real, then only SSE
//	       comments (": ping") every 50 ms until the client hangs up
//	stall  nothing at all, not even headers, until the client hangs up
func fakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: fakemodel pings|stall")
	}
	mode := args[0]
	var n atomic.Int64
	count := ts.MkAbs("model-requests")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = os.WriteFile(count, []byte(strconv.FormatInt(n.Add(1), 10)+"\n"), 0o644)
		switch mode {
		case "stall":
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_, _ = io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"thinking"},"finish_reason":null}]}`+"\n\n")
		_ = rc.Flush()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				if _, err := io.WriteString(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
					return
				}
			}
		}
	}))
	ts.Defer(srv.Close)
	ts.Setenv("MODEL_URL", srv.URL+"/v1")
}

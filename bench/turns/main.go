// Command turns is a Chat Completions SSE server for timing nodwyn's turns whole
// process (see run.sh): a request whose conversation holds "twenty turns"
// is answered with an fs-read call until it carries 20 tool results, then
// "Done."; any other, "Done." at once. It listens on -addr.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18778", "")
	flag.Parse()
	http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		done := strings.Count(string(body), `"role":"tool"`)
		want := 0
		if strings.Contains(string(body), "twenty turns") {
			want = 20
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
		}
		if done < want {
			chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"fs-read","arguments":"{\"path\":\"a%d.txt\"}"}}]}`, done, done), "null")
			chunk(`{}`, `"tool_calls"`)
		} else {
			chunk(`{"role":"assistant","content":"Done."}`, "null")
			chunk(`{}`, `"stop"`)
		}
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
	}))
}

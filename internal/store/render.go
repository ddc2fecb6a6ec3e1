package store

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// RenderLog writes events for a person, one line per event: the time since
// the first event, the type, and what the event says. Tool calls show their
// name and arguments shortened, decisions their verdict and reason, results
// their outcome and the first line of output, notes their text, run.end the
// outcome; keys it does not know are shown as key=value, shortened.
func RenderLog(w io.Writer, events []Event) {
	if len(events) == 0 {
		return
	}
	start := events[0].Time
	for _, ev := range events {
		var b strings.Builder
		// One line an event, whatever it holds: what the model, a tool or
		// Scheme chose is escaped (termtext.Line), its newlines included.
		fmt.Fprintf(&b, "%8s  %-13s", elapsed(ev.Time.Sub(start)), termtext.Line(ev.Type))
		if s := summarize(ev); s != "" {
			b.WriteString(" ")
			b.WriteString(termtext.Line(s))
		}
		b.WriteString("\n")
		io.WriteString(w, b.String())
	}
}

// elapsed formats a duration since the start: +1.2s, +4m07s, +2h13m.
func elapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("+%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("+%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("+%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// summarize renders an event's data: the fields its type is known for
// first, then the rest as key=value in key order.
func summarize(ev Event) string {
	// A field of another JSON type than its own (a log older than schema
	// 1) is left zero here; the fields below read such logs as they are.
	d, _ := event.Decode(ev.Type, ev.Data)
	used := map[string]bool{}
	// has reports whether the event has the field, and marks it shown.
	has := func(k string) bool {
		_, ok := ev.Data[k]
		used[k] = used[k] || ok
		return ok
	}
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	tail := "" // shown after the other keys
	switch e := d.(type) {
	case event.RunStart:
		if has("instruction") {
			add(strconv.Quote(short(oneLine(e.Instruction), 80)))
		}
	case event.ModelReply:
		if has("text") && e.Text != "" {
			add(strconv.Quote(short(oneLine(e.Text), 80)))
		}
		if has("tool_calls") {
			add(count(len(e.ToolCalls), "tool call"))
		}
	case event.ToolCall:
		if has("name") {
			add(e.Name)
		}
		if has("arguments") {
			var args any = e.Arguments
			if raw, ok := ev.Data["arguments"].(string); ok {
				args = raw // before schema 1, arguments that are not one JSON object were the text given
			}
			add(short(compact(args), 100))
		}
		has("id")
	case event.ToolDecision:
		if has("decision") {
			add(e.Decision)
		}
		if has("reason") && e.Reason != "" {
			add("(" + short(oneLine(e.Reason), 100) + ")")
		}
		has("id")
	case event.ToolResult:
		if has("name") {
			add(e.Name)
		}
		if has("error") && e.Error {
			add("error")
		}
		if has("exit") {
			add("exit " + strconv.Itoa(e.Exit))
		}
		if has("output") {
			s := strings.TrimSpace(e.Output)
			n := strings.Count(s, "\n") + 1
			line := short(oneLine(firstLine(s)), 60)
			if n > 1 {
				line += fmt.Sprintf(" (%d lines)", n)
			}
			if s != "" {
				add(strconv.Quote(line))
			}
		}
		has("id")
	case event.Note:
		if has("text") {
			add(short(oneLine(e.Text), 160))
		}
	case event.Error:
		text := e.Text
		if old, ok := ev.Data["error"].(string); ok && !has("text") {
			text = old // before schema 1, error's text was its error
		}
		if has("text") || has("error") {
			add(short(oneLine(text), 160))
		}
	case event.RunEnd:
		if has("status") {
			add(e.Status)
		}
		if has("tool_call_count") {
			add(count(e.ToolCallCount, "tool call"))
		} else if n, ok := ev.Data["tool_calls"].(float64); ok && has("tool_calls") {
			add(count(int(n), "tool call")) // before schema 1, the count was tool_calls
		}
		if has("elapsed_ms") {
			add((time.Duration(e.ElapsedMS) * time.Millisecond).Round(100 * time.Millisecond).String())
		}
		// The final answer reads best last.
		if has("text") && e.Text != "" {
			tail = strconv.Quote(short(oneLine(e.Text), 100))
		}
	}
	var rest []string
	for k := range ev.Data {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		switch v := ev.Data[k].(type) {
		case bool:
			if v {
				add(k) // a flag that is on; one that is off says nothing
			}
		case nil:
		default:
			s := str(v)
			if s == "" {
				continue
			}
			s = short(oneLine(s), 60)
			if strings.ContainsAny(s, " \t\"=") {
				s = strconv.Quote(s)
			}
			add(k + "=" + s)
		}
	}
	add(tail)
	return strings.Join(parts, "  ")
}

// str renders a value as text: strings as they are, numbers without a
// trailing .0, anything else as compact JSON.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int, int64, bool:
		return fmt.Sprint(x)
	case nil:
		return ""
	}
	return compact(v)
}

func compact(v any) string {
	if s, ok := v.(string); ok {
		// Arguments kept as a JSON string: show them as JSON, compacted.
		var x any
		if json.Unmarshal([]byte(s), &x) == nil {
			v = x
		} else {
			return oneLine(s)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// oneLine folds runs of white space, newlines included, to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// short cuts s to at most n runes, marking the cut with "…".
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

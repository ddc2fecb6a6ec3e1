package store

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

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

// summarize renders an event's data: the keys its type is known for first,
// then the rest as key=value in key order.
func summarize(ev Event) string {
	d := ev.Data
	used := map[string]bool{}
	take := func(keys ...string) (any, bool) {
		for _, k := range keys {
			if v, ok := d[k]; ok {
				used[k] = true
				return v, true
			}
		}
		return nil, false
	}
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	tail := "" // shown after the other keys
	switch ev.Type {
	case "run.start":
		if v, ok := take("instruction"); ok {
			add(strconv.Quote(short(oneLine(str(v)), 80)))
		}
	case "model.request", "turn.end":
		if v, ok := take("turn"); ok {
			add("turn " + str(v))
		}
	case "model.reply":
		if v, ok := take("text", "content"); ok && str(v) != "" {
			add(strconv.Quote(short(oneLine(str(v)), 80)))
		}
		if v, ok := take("tool_calls"); ok {
			add(count(v, "tool call"))
		}
	case "tool.call":
		if v, ok := take("name", "tool"); ok {
			add(str(v))
		}
		if v, ok := take("args", "arguments", "input"); ok {
			add(short(compact(v), 100))
		}
		take("id", "call_id")
	case "tool.decision":
		if v, ok := take("decision", "verdict", "action"); ok {
			add(str(v))
		}
		if v, ok := take("reason"); ok && str(v) != "" {
			add("(" + short(oneLine(str(v)), 100) + ")")
		}
		take("id", "call_id")
	case "tool.result":
		if v, ok := take("name", "tool"); ok {
			add(str(v))
		}
		if v, ok := take("error"); ok && v != false && str(v) != "" {
			if v == true {
				add("error")
			} else {
				add("error: " + short(oneLine(str(v)), 100))
			}
		} else if v, ok := take("ok"); ok {
			if b, _ := v.(bool); b {
				add("ok")
			} else {
				add("failed")
			}
		}
		if v, ok := take("exit", "exit_code", "status"); ok {
			add("exit " + str(v))
		}
		if v, ok := take("output", "result", "content", "text"); ok {
			s := strings.TrimSpace(str(v))
			n := strings.Count(s, "\n") + 1
			line := short(oneLine(firstLine(s)), 60)
			if n > 1 {
				line += fmt.Sprintf(" (%d lines)", n)
			}
			if s != "" {
				add(strconv.Quote(line))
			}
		}
		take("id", "call_id")
	case "note", "error":
		if v, ok := take("text", "error", "message"); ok {
			add(short(oneLine(str(v)), 160))
		}
	case "run.end":
		if v, ok := take("status"); ok {
			add(str(v))
		}
		if v, ok := take("tool_call_count", "tool_calls"); ok {
			add(count(v, "tool call"))
		}
		if v, ok := take("elapsed_ms"); ok {
			if f, isNum := v.(float64); isNum {
				add((time.Duration(f) * time.Millisecond).Round(100 * time.Millisecond).String())
			} else if n, isInt := v.(int64); isInt {
				add((time.Duration(n) * time.Millisecond).Round(100 * time.Millisecond).String())
			}
		}
		// The final answer reads best last.
		if v, ok := take("text"); ok && str(v) != "" {
			tail = strconv.Quote(short(oneLine(str(v)), 100))
		}
	}
	var rest []string
	for k := range d {
		if !used[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		switch v := d[k].(type) {
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

func count(v any, noun string) string {
	n := 0
	switch x := v.(type) {
	case float64:
		n = int(x)
	case int:
		n = x
	case int64:
		n = int(x)
	case []any:
		n = len(x)
	default:
		return ""
	}
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

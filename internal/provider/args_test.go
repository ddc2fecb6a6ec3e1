package provider

import (
	"fmt"
	"testing"
)

func TestParseArgs(t *testing.T) {
	ok := []struct{ in, want string }{
		{``, `map[]`},
		{`  `, `map[]`},
		{`null`, `map[]`},
		{`{}`, `map[]`},
		{`{"path": "a.txt", "n": 3}`, `map[n:3 path:a.txt]`},
		{` {"a": [1, "x"]} `, `map[a:[1 x]]`},
		{`"{\"path\": \"b\"}"`, `map[path:b]`}, // double-encoded by the model
	}
	for _, c := range ok {
		got, err := ParseArgs(ToolCall{Name: "fs-write", Arguments: c.in})
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("ParseArgs(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{`{"path": "a`, `arguments for fs-write are not valid JSON: unexpected end of input; send one JSON object`},
		{`{"path": }`, `arguments for fs-write are not valid JSON: invalid character '}' looking for beginning of value at offset 10 (near "{\"path\": }"); send one JSON object`},
		{`{"a":1} {"b":2}`, `arguments for fs-write are not valid JSON: unexpected text after the value at offset 8 (near "{\"a\":1} {\"b\":2}"); send one JSON object`},
		{`[1,2]`, `arguments for fs-write must be a JSON object, not an array; send one JSON object with the parameters by name`},
		{`"just text"`, `arguments for fs-write must be a JSON object, not a string; send one JSON object with the parameters by name`},
		{`42`, `arguments for fs-write must be a JSON object, not a number; send one JSON object with the parameters by name`},
	}
	for _, c := range bad {
		_, err := ParseArgs(ToolCall{Name: "fs-write", Arguments: c.in})
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseArgs(%q) error = %v\nwant %s", c.in, err, c.want)
		}
	}
}

func TestUsageSums(t *testing.T) {
	u := Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5}.Add(Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 40, ReasoningTokens: 50})
	if u != (Usage{11, 22, 33, 44, 55}) || u.TotalInput() != 88 {
		t.Errorf("usage %+v total %d", u, u.TotalInput())
	}
}

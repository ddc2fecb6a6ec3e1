package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ParseArgs decodes a tool call's arguments into a JSON object. Empty
// arguments (and null) are {}. A JSON string that holds an object, as some
// models send, is accepted. The error, meant to go back to the model as the
// call's result, says what was wrong, e.g.
//
//	arguments for fs-write are not valid JSON: unexpected end of input; send one JSON object
func ParseArgs(tc ToolCall) (map[string]any, error) {
	raw := strings.TrimSpace(tc.Arguments)
	if raw == "" || raw == "null" {
		return map[string]any{}, nil
	}
	v, err := decodeOne(raw)
	if err != nil {
		return nil, fmt.Errorf("arguments for %s are not valid JSON: %s; send one JSON object", tc.Name, err)
	}
	if s, ok := v.(string); ok {
		if inner, err := decodeOne(strings.TrimSpace(s)); err == nil {
			if obj, ok := inner.(map[string]any); ok {
				return obj, nil
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case nil:
		return map[string]any{}, nil
	default:
		return nil, fmt.Errorf("arguments for %s must be a JSON object, not %s; send one JSON object with the parameters by name", tc.Name, jsonKind(v))
	}
}

// decodeOne decodes exactly one JSON value, with error texts fit for a model.
func decodeOne(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, describeJSONErr(err, s)
	}
	off := int(dec.InputOffset())
	if rest := strings.TrimLeft(s[off:], " \t\r\n"); rest != "" {
		off = len(s) - len(rest)
		return nil, fmt.Errorf("unexpected text after the value at offset %d (%s)", off, near(s, off))
	}
	return v, nil
}

func describeJSONErr(err error, s string) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := strings.TrimPrefix(se.Error(), "json: ")
		return fmt.Errorf("%s at offset %d (%s)", msg, se.Offset, near(s, int(se.Offset)))
	}
	return err
}

// near quotes a few characters of s around off.
func near(s string, off int) string {
	lo, hi := max(0, off-15), min(len(s), off+15)
	var b bytes.Buffer
	b.WriteString("near ")
	q, _ := json.Marshal(s[lo:hi])
	b.Write(q)
	return b.String()
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// Package rpc is JSON-RPC 2.0 over a unix socket, one JSON message per
// line: the wire of `nodwyn daemon` (docs/rpc.md). It knows nothing of runs:
// a Server dispatches methods to handlers, a Client calls them and receives
// notifications.
//
// Only a peer of the server's own uid (or root) is served: the socket's
// directory is 0700 and the socket 0600, and each connection's credentials
// are checked with SO_PEERCRED as it is accepted, so a socket whose mode was
// loosened (or a directory shared by mistake) still serves nobody else. There
// is no TCP listener.
//
// rpc imports the standard library and golang.org/x/sys.
package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Version is the only JSON-RPC version spoken.
const Version = "2.0"

// MaxMessage is the longest line a peer may send (4 MiB): a longer one
// ends the connection with a parse error, before it is held in memory.
const MaxMessage = 4 << 20

// The JSON-RPC 2.0 error codes, and nodwyn's own (-32000 to -32099).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeNotFound     = -32001 // no run (or confirm) by that id
	CodeConflict     = -32002 // the run is not in a state for this (already ended, held by another)
	CodeRefused      = -32003 // the request asks for what nodwyn does not allow (e.g. a mode a flag must give)
	CodeShuttingDown = -32004 // the daemon is stopping
)

// message is any JSON-RPC message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID, Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object. Data says what to do, as an object:
// {"fix": "…"} at least, and what the code needs to be precise ("param",
// "known", "id").
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s (code %d)", e.Message, e.Code)
	if fix, ok := e.Data["fix"].(string); ok && fix != "" {
		s += "; " + fix
	}
	return s
}

// Errorf is an error with code and a fix for the data object.
func Errorf(code int, fix, format string, a ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, a...)}
	if fix != "" {
		e.Data = map[string]any{"fix": fix}
	}
	return e
}

// DecodeParams decodes a request's params (an object) into v, a pointer to
// a struct whose json tags name every parameter the method has. A
// parameter it does not have, a value of the wrong type or params that are
// not an object is an invalid-params error naming the parameter and the
// known ones: a parameter not built is never ignored.
func DecodeParams(raw json.RawMessage, v any, known ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return &Error{Code: CodeInvalidParams, Message: "params must be an object (by name), not " + kindOf(raw),
			Data: map[string]any{"known": known, "fix": "send params as {\"name\": value, …}"}}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		data := map[string]any{"known": known}
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			data["param"] = name
			data["fix"] = "leave it out, or use one of: " + strings.Join(known, ", ")
			return &Error{Code: CodeInvalidParams, Message: "unknown parameter " + name, Data: data}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			data["param"] = te.Field
			data["fix"] = "give " + te.Field + " as " + jsonKind(te.Type.Kind().String())
			return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("parameter %s: %s is not %s", te.Field, te.Value, jsonKind(te.Type.Kind().String())), Data: data}
		}
		data["fix"] = "send one JSON object"
		return &Error{Code: CodeInvalidParams, Message: "params: " + msg, Data: data}
	}
	return nil
}

// Required is an invalid-params error for a parameter that must be given.
func Required(name string, known ...string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "missing parameter " + name,
		Data: map[string]any{"param": name, "known": known, "fix": "give " + name}}
}

func kindOf(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "true or false"
	case slices.Contains([]string{"int", "int64", "uint", "uint64", "float64", "int32"}, goKind):
		return "a number"
	case goKind == "slice":
		return "an array"
	}
	return "an object"
}

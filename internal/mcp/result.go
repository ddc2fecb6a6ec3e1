package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what a tool call answered, as text for the model. IsError is
// the server's isError: the tool ran and failed (the model reads why in
// Text); a call that did not complete is an error from Call instead.
type Result struct {
	Text    string
	IsError bool
}

// resultText joins the text content of a tool's answer with newlines;
// every other content is one line in brackets saying what it was (an
// image's type and size, a resource's URI), its data left out. A result
// with structured content and no content at all is that JSON.
func resultText(r *sdk.CallToolResult) Result {
	var lines []string
	for _, c := range r.Content {
		lines = append(lines, contentText(c))
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			lines = append(lines, string(b))
		}
	}
	return Result{Text: strings.Join(lines, "\n"), IsError: r.IsError}
}

func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		s := "[resource link " + c.URI
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += fmt.Sprintf(", %d bytes", *c.Size)
		}
		if c.Name != "" && c.Name != c.URI {
			s += fmt.Sprintf(", %q", oneLine(c.Name))
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "[resource]"
		}
		r := c.Resource
		s := "[resource " + r.URI
		if r.MIMEType != "" {
			s += ", " + r.MIMEType
		}
		switch {
		case r.Blob != nil:
			s += fmt.Sprintf(", %d bytes", len(r.Blob))
		default:
			s += fmt.Sprintf(", %d bytes of text", len(r.Text))
		}
		return s + "]"
	default:
		b, _ := json.Marshal(c)
		var t struct{ Type string }
		_ = json.Unmarshal(b, &t)
		return fmt.Sprintf("[%s content]", orUnknown(t.Type))
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return oneLine(s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
